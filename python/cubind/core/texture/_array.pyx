# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# OpaqueArray: a CUDA array (cubind::OpaqueArray, or a view of a mipmap level
# or of an array made elsewhere), filled and read by whole-array copies from
# and to a Buffer or host memory (cuMemcpy3DAsync), ordered on a stream.

from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject
from cubind.core._device cimport _Device as Device
from cubind.core._memory._buffer cimport Buffer
from cubind.core._stream cimport _stream_handle

# The options live in _options (plain Python); cuda.core code names them from
# this module too, as cuda.core.texture._array holds them.
from cubind.core.texture._options import (  # noqa: F401
    _FORMAT_BYTES,
    _FORMAT_CODES,
    _FORMAT_OF_CODE,
    OpaqueArrayOptions,
    _checked_options,
    _normalize_array_format,
    _validate_array_shape,
    _validate_format_channels,
)


cdef tuple _shape_of(const cpp.ArrayDescriptor& d):
    if d.depth > 0:
        return (d.width, d.height, d.depth)
    if d.height > 0:
        return (d.width, d.height)
    return (d.width,)


cdef OpaqueArray _array_of(shared_ptr[cpp.ArrayRef] array, int device_id):
    # An OpaqueArray over a share of an array, described by its descriptor.
    cdef OpaqueArray self = OpaqueArray.__new__(OpaqueArray)
    cdef const cpp.ArrayDescriptor* d = &array.get().descriptor()
    self._cpp = array
    self._shape = _shape_of(d[0])
    self._format = _FORMAT_OF_CODE[<int>d.format]
    self._num_channels = d.num_channels
    self._surface_load_store = d.surface_load_store
    self._device_id = device_id
    return self


cdef int _fill_descriptor(shape, format, num_channels, is_surface_load_store, cpp.ArrayDescriptor* out) except -1:
    # The one conversion of the options' checked fields to the core's descriptor.
    out.width = shape[0]
    out.height = shape[1] if len(shape) > 1 else 0
    out.depth = shape[2] if len(shape) > 2 else 0
    out.format = <cpp.CUarray_format><int>_FORMAT_CODES[format]
    out.num_channels = int(num_channels)
    out.surface_load_store = bool(is_surface_load_store)
    return 0


def _create_opaque_array(options, device_id=None):
    """A new OpaqueArray on device device_id (the current device when None):
    backs Device.create_opaque_array (cuArray3DCreate)."""
    cdef cpp.ArrayDescriptor descriptor
    cdef int ordinal
    cdef shared_ptr[cpp.ArrayRef] array
    options = _checked_options(options, OpaqueArrayOptions, "Opaque array options")
    _fill_descriptor(options.shape, options.format, options.num_channels, options.is_surface_load_store,
                     &descriptor)
    ordinal = Device().device_id if device_id is None else device_id
    with nogil:
        array = cpp.opaque_array_new(ordinal, descriptor)
    return _array_of(array, ordinal)


cdef class OpaqueArray(_HandleObject):
    """A CUDA array: storage laid out by the hardware for 2-D and 3-D
    locality, with no address. Kernels read it through a TextureObject and
    write it through a SurfaceObject; the host fills and reads it with
    copy_from and copy_to. Made by Device.create_opaque_array, or by
    MipmappedArray.get_level for one level of a mipmapped array."""

    _maker = "create_opaque_array"

    cdef bint _open(self):
        return self._cpp.get() != NULL

    cdef unsigned long long _raw_handle(self):
        return <uintptr_t>self._cpp.get().handle()

    cdef int _require_open(self) except -1:
        if not self._cpp:
            raise RuntimeError("OpaqueArray has been closed")
        return 0

    @classmethod
    def _from_handle(cls, handle, owning, *, device_id=None):
        """An OpaqueArray over a CUarray made elsewhere (a graphics
        resource's, say), described by the driver (cuArray3DGetDescriptor).
        With owning, close() and the last reference destroy it; without, the
        array stays its owner's."""
        cdef uintptr_t address = int(handle)
        cdef bint owns = bool(owning)
        cdef shared_ptr[cpp.ArrayRef] array
        ordinal = Device().device_id if device_id is None else int(device_id)
        with nogil:
            array = cpp.array_adopt(address, owns)
        return _array_of(array, ordinal)

    @property
    def shape(self):
        """(width,), (width, height) or (width, height, depth), in elements."""
        return self._shape

    @property
    def format(self):
        """The element's ArrayFormatType."""
        return self._format

    @property
    def num_channels(self):
        """Channels per element: 1, 2 or 4."""
        return self._num_channels

    @property
    def element_bytes(self):
        """Bytes of one element: the format's bytes times the channels."""
        return _FORMAT_BYTES[self._format] * self._num_channels

    @property
    def size_bytes(self):
        """Bytes of the whole array, rows packed: what a copy moves."""
        size = self.element_bytes
        for extent in self._shape:
            size *= extent
        return size

    @property
    def is_surface_load_store(self):
        """Whether the array was made with CUDA_ARRAY3D_SURFACE_LDST and may
        back a SurfaceObject."""
        return self._surface_load_store

    def _extent_bytes(self):
        # (bytes of a row, rows, slices), each at least 1.
        rows = self._shape[1] if len(self._shape) > 1 else 1
        slices = self._shape[2] if len(self._shape) > 2 else 1
        return self._shape[0] * self.element_bytes, rows, slices

    cdef int _copy(self, other, stream, bint to_array, str method) except -1:
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef shared_ptr[cpp.ArrayRef] share
        cdef cpp.ArrayRef* array
        cdef Py_buffer view
        cdef uintptr_t ptr
        cdef size_t size
        cdef size_t needed
        self._require_open()
        # A share of its own: a close() on another thread while the GIL is
        # released cannot destroy the array under the copy.
        share = self._cpp
        array = share.get()
        needed = self.size_bytes
        if isinstance(other, Buffer):
            (<Buffer>other)._require_open()
            ptr = (<Buffer>other)._ptr
            size = (<Buffer>other)._size
            if size < needed:
                raise ValueError(
                    f"OpaqueArray.{method}: Buffer size ({size} bytes) is smaller than the array extent "
                    f"({needed} bytes, {self._shape} of {self.element_bytes}-byte elements)"
                )
            with nogil:
                if to_array:
                    array.copy_from(<cpp.CUdeviceptr>ptr, size, cpp.StreamRef(handle))
                else:
                    array.copy_to(<cpp.CUdeviceptr>ptr, size, cpp.StreamRef(handle))
            return 0
        try:
            PyObject_GetBuffer(other, &view, PyBUF_SIMPLE if to_array else PyBUF_SIMPLE | PyBUF_WRITABLE)
        except (TypeError, BufferError, ValueError) as error:
            # The type the object raised (TypeError without the buffer protocol,
            # BufferError when read-only or not contiguous), saying which argument.
            raise type(error)(
                f"OpaqueArray.{method}: {'src' if to_array else 'dst'} must be a Buffer or a contiguous "
                f"{'' if to_array else 'writable '}buffer-protocol object, got {type(other).__name__} ({error})"
            ) from None
        try:
            if <size_t>view.len < needed:
                raise ValueError(
                    f"OpaqueArray.{method}: Host buffer has {view.len} bytes, smaller than the array extent "
                    f"({needed} bytes, {self._shape} of {self.element_bytes}-byte elements)"
                )
            with nogil:
                if to_array:
                    array.copy_from_host(view.buf, <size_t>view.len, cpp.StreamRef(handle))
                else:
                    array.copy_to_host(view.buf, <size_t>view.len, cpp.StreamRef(handle))
        finally:
            PyBuffer_Release(&view)
        return 0

    def copy_from(self, src, *, stream):
        """Copies a whole array's worth of src (a Buffer, or host memory with
        the buffer protocol, rows packed) into the array, ordered on stream (a
        Stream or a GraphBuilder) (cuMemcpy3DAsync). Pageable host memory
        makes the copy synchronous."""
        self._copy(src, stream, True, "copy_from")

    def copy_to(self, dst, *, stream):
        """Copies the whole array into dst (a Buffer, or writable host memory
        with the buffer protocol), rows packed, ordered on stream
        (cuMemcpy3DAsync); returns dst. Read dst once the stream is done."""
        self._copy(dst, stream, False, "copy_to")
        return dst

    cpdef close(self):
        """Lets go of this object's share of the array; the array is
        destroyed (cuArrayDestroy) once no texture or surface object holds
        it either. A mipmap level's array goes with its mipmapped array.
        Closing twice does nothing."""
        self._cpp.reset()

    def __repr__(self):
        return f"OpaqueArray(shape={self._shape}, format={self._format.name}, num_channels={self._num_channels})"

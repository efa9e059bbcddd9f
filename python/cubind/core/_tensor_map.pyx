# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# TensorMapDescriptor: a CUtensorMap (128 bytes, 64-byte aligned) that a
# kernel receives by value and reads with TMA instructions (sm_90+). Made by
# StridedMemoryView.as_tensor_map (cuTensorMapEncodeTiled); launch passes a
# pointer to the map itself, so it is never copied into an unaligned slot.

from libc.stdint cimport uint32_t, uint64_t, uintptr_t
from libc.string cimport memset
from libcpp.string cimport string

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device
from cubind.core._launch cimport _accept_argument_type, _argument_error
from cubind.core._memoryview cimport StridedMemoryView

# The options and enums live in _tensor_map_options (plain Python); cuda.core
# code names them from this module, as cuda.core._tensor_map holds them.
from cubind.core._tensor_map_options import (  # noqa: F401
    TensorMapDataType,
    TensorMapDescriptorOptions,
    TensorMapIm2ColWideMode,
    TensorMapInterleave,
    TensorMapL2Promotion,
    TensorMapOOBFill,
    TensorMapSwizzle,
)


cdef StridedMemoryView _tensor_map_view(object tensor):
    # A device-accessible view with a 16-byte aligned address.
    cdef StridedMemoryView view
    if isinstance(tensor, StridedMemoryView):
        view = <StridedMemoryView>tensor
    else:
        view = StridedMemoryView.from_any_interface(tensor, -1)
    if not view.is_device_accessible:
        raise ValueError("The tensor must be device-accessible")
    if view.ptr % 16:
        raise ValueError(f"Global memory address must be 16-byte aligned, got address {view.ptr:#x}")
    return view


cdef tuple _global_layout(StridedMemoryView view, int elem_size):
    # (dims, byte strides of dims 1..rank-1), innermost first as the driver
    # takes them.
    shape = view.shape
    strides = view.strides
    rank = len(shape)
    if strides is None:
        strides = [0] * rank
        step = 1
        for axis in range(rank - 1, -1, -1):
            strides[axis] = step
            step *= shape[axis]
    if strides[rank - 1] != 1 and shape[rank - 1] != 1:
        raise ValueError(f"the last dimension must be contiguous (stride 1 element), got strides {tuple(strides)}")
    byte_strides = []
    for axis in range(rank - 2, -1, -1):
        b = strides[axis] * elem_size
        if b <= 0 or b % 16 or b >= (1 << 40):
            raise ValueError(f"the stride of dimension {axis} ({b} bytes) must be a positive multiple of 16 "
                             "below 2**40")
        byte_strides.append(b)
    dims = tuple(reversed(shape))
    for i, d in enumerate(dims):
        if not 1 <= d <= (1 << 32):
            raise ValueError(f"dimension {rank - 1 - i} has extent {d}; a tensor map takes 1 .. 2**32")
    return dims, tuple(byte_strides)


cdef TensorMapDescriptor _new_descriptor(StridedMemoryView v, str kind, unsigned rank, data_type, swizzle):
    # A descriptor of v, its map still to be encoded.
    cdef TensorMapDescriptor self = TensorMapDescriptor.__new__(TensorMapDescriptor)
    self._source = v
    self._device_id = v.device_id
    self._kind = kind
    self._rank = rank
    self._data_type = data_type
    self._swizzle = swizzle
    return self


cdef class TensorMapDescriptor:
    """TensorMapDescriptor()
--

A TMA tensor map (CUtensorMap) over a device array, made by
    StridedMemoryView.as_tensor_map; pass it to launch as a kernel argument
    of type CUtensorMap (const __grid_constant__). It keeps the array alive."""


    def __cinit__(self):
        self._map = <CUtensorMap*>((<uintptr_t>self._storage + 63) & ~(<uintptr_t>63))
        memset(<void*>self._map, 0, _TENSOR_MAP_BYTES)
        self._device_id = -1

    def __init__(self):
        raise RuntimeError(
            "TensorMapDescriptor cannot be instantiated directly. Use StridedMemoryView.as_tensor_map() instead.")

    @property
    def device(self):
        """The Device of the array the map reads, or None."""
        return Device(self._device_id) if self._device_id >= 0 else None

    @classmethod
    def _from_tiled(cls, view, box_dim=None, *, options=None, element_strides=None, data_type=None,
                    interleave=None, swizzle=None, l2_promotion=None, oob_fill=None):
        from cubind.core import _tensor_map_options as tm

        cdef TensorMapDescriptor self
        cdef StridedMemoryView v
        cdef cpp.TensorMapTiled spec
        cdef unsigned rank
        cdef int i
        opts = tm._coerce_options(
            box_dim, options, element_strides=element_strides, data_type=data_type,
            interleave=tm.TensorMapInterleave.NONE if interleave is None else interleave,
            swizzle=tm.TensorMapSwizzle.NONE if swizzle is None else swizzle,
            l2_promotion=tm.TensorMapL2Promotion.NONE if l2_promotion is None else l2_promotion,
            oob_fill=tm.TensorMapOOBFill.NONE if oob_fill is None else oob_fill)
        v = _tensor_map_view(view)
        rank = len(v.shape)
        if not 1 <= rank <= 5:
            raise ValueError(f"Tensor rank must be between 1 and 5, got {rank}")
        kind = tm._data_type_of(v.dtype if opts.data_type is None else None, opts.data_type)
        elem_size = tm._DATA_TYPE_SIZE[kind]
        estrides = tm._check_tiled(rank, opts.box_dim, opts.element_strides, opts.interleave, opts.swizzle, elem_size)
        dims, byte_strides = _global_layout(v, elem_size)
        for i in range(rank):
            spec.sizes[i] = dims[i]
            spec.box[i] = opts.box_dim[rank - 1 - i]
            spec.element_strides[i] = estrides[rank - 1 - i]
        for i in range(rank - 1):
            spec.strides[i] = byte_strides[i]
        spec.data_type = <cpp.CUtensorMapDataType>kind
        spec.interleave = <cpp.CUtensorMapInterleave><int>opts.interleave
        spec.swizzle = <cpp.CUtensorMapSwizzle><int>opts.swizzle
        spec.l2_promotion = <cpp.CUtensorMapL2promotion><int>opts.l2_promotion
        spec.oob_fill = <cpp.CUtensorMapFloatOOBfill><int>opts.oob_fill
        spec.rank = rank
        spec.address = <void*>v.ptr
        self = _new_descriptor(v, "tiled", rank, tm.TensorMapDataType(kind), tm.TensorMapSwizzle(opts.swizzle))
        with nogil:
            self._map[0] = cpp.encode_tensor_map(spec)
        return self

    @classmethod
    def _from_im2col(cls, view, pixel_box_lower_corner, pixel_box_upper_corner, channels_per_pixel,
                     pixels_per_column, *, element_strides=None, data_type=None, interleave=None, swizzle=None,
                     l2_promotion=None, oob_fill=None):
        from cubind.core import _tensor_map_options as tm

        cdef TensorMapDescriptor self
        cdef StridedMemoryView v
        cdef cpp.TensorMapIm2col spec
        cdef unsigned rank
        cdef int i
        interleave = tm.TensorMapInterleave.NONE if interleave is None else interleave
        swizzle = tm.TensorMapSwizzle.NONE if swizzle is None else swizzle
        l2_promotion = tm.TensorMapL2Promotion.NONE if l2_promotion is None else l2_promotion
        oob_fill = tm.TensorMapOOBFill.NONE if oob_fill is None else oob_fill
        tm._require_enum("interleave", interleave, tm.TensorMapInterleave)
        tm._require_enum("swizzle", swizzle, tm.TensorMapSwizzle)
        tm._require_enum("l2_promotion", l2_promotion, tm.TensorMapL2Promotion)
        tm._require_enum("oob_fill", oob_fill, tm.TensorMapOOBFill)
        v = _tensor_map_view(view)
        rank = len(v.shape)
        if not 3 <= rank <= 5:
            raise ValueError(f"Im2col tensor rank must be between 3 and 5, got {rank}")
        lower = tm._int_tuple("pixel_box_lower_corner", pixel_box_lower_corner)
        upper = tm._int_tuple("pixel_box_upper_corner", pixel_box_upper_corner)
        if len(lower) != rank - 2 or len(upper) != rank - 2:
            raise ValueError(f"pixel_box_lower_corner and pixel_box_upper_corner must have {rank - 2} elements "
                             "(the spatial dimensions)")
        if not 1 <= channels_per_pixel <= 256 or not 1 <= pixels_per_column <= 1024:
            raise ValueError(f"channels_per_pixel must be in [1, 256] and pixels_per_column in [1, 1024], got "
                             f"{channels_per_pixel} and {pixels_per_column}")
        kind = tm._data_type_of(v.dtype if data_type is None else None, data_type)
        elem_size = tm._DATA_TYPE_SIZE[kind]
        if element_strides is None:
            element_strides = (1,) * rank
        estrides = tm._int_tuple("element_strides", element_strides)
        if len(estrides) != rank:
            raise ValueError(f"element_strides must have {rank} elements, got {len(estrides)}")
        dims, byte_strides = _global_layout(v, elem_size)
        for i in range(rank):
            spec.sizes[i] = dims[i]
            spec.element_strides[i] = estrides[rank - 1 - i]
        for i in range(rank - 1):
            spec.strides[i] = byte_strides[i]
        for i in range(rank - 2):
            spec.lower_corner[i] = lower[rank - 3 - i]
            spec.upper_corner[i] = upper[rank - 3 - i]
        spec.channels_per_pixel = channels_per_pixel
        spec.pixels_per_column = pixels_per_column
        spec.data_type = <cpp.CUtensorMapDataType>kind
        spec.interleave = <cpp.CUtensorMapInterleave><int>interleave
        spec.swizzle = <cpp.CUtensorMapSwizzle><int>swizzle
        spec.l2_promotion = <cpp.CUtensorMapL2promotion><int>l2_promotion
        spec.oob_fill = <cpp.CUtensorMapFloatOOBfill><int>oob_fill
        spec.rank = rank
        spec.address = <void*>v.ptr
        self = _new_descriptor(v, "im2col", rank, tm.TensorMapDataType(kind), tm.TensorMapSwizzle(swizzle))
        with nogil:
            self._map[0] = cpp.encode_tensor_map(spec)
        return self

    @classmethod
    def _from_im2col_wide(cls, view, pixel_box_lower_corner_width, pixel_box_upper_corner_width,
                          channels_per_pixel, pixels_per_column, *, element_strides=None, data_type=None,
                          interleave=None, mode=None, swizzle=None, l2_promotion=None, oob_fill=None):
        raise NotImplementedError("TensorMapDescriptor._from_im2col_wide (cuTensorMapEncodeIm2colWide, "
                                  "compute capability 10.0+) is not supported yet")

    def replace_address(self, tensor):
        """Points the map at tensor (same shape and strides; anything with
        DLPack or the CUDA Array Interface, or a StridedMemoryView)
        (cuTensorMapReplaceAddress)."""
        cdef StridedMemoryView v = _tensor_map_view(tensor)
        cdef void* address = <void*>v.ptr
        with nogil:
            cpp.replace_tensor_map_address(self._map[0], address)
        self._source = v
        self._device_id = v.device_id

    def _bytes(self):
        """The 128 bytes of the CUtensorMap, as the kernel receives them."""
        return (<char*>self._map)[:_TENSOR_MAP_BYTES]

    def _address(self):
        """Where the map lives (what launch passes as its parameter's address)."""
        return <uintptr_t>self._map

    def __repr__(self):
        dtype = self._data_type.name if self._data_type is not None else None
        swizzle = self._swizzle.name if self._swizzle is not None else None
        return f"TensorMapDescriptor({self._kind}, rank={self._rank}, dtype={dtype}, swizzle={swizzle})"


# launch: a TensorMapDescriptor argument is passed from the map itself.
cdef void* _tensor_map_argument(object arg, size_t size, Py_ssize_t index, object kernel) except NULL:
    if size != _TENSOR_MAP_BYTES:
        _argument_error(kernel, index, size, arg, "cannot take a TensorMapDescriptor (a 128-byte CUtensorMap)")
    return <void*>(<TensorMapDescriptor>arg)._map


_accept_argument_type(TensorMapDescriptor, _tensor_map_argument)

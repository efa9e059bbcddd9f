# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# StridedMemoryView: the pointer, shape, strides and dtype of another
# library's array, read through DLPack (up to 1.x), the CUDA Array Interface
# (v3) or NumPy's array interface, or laid over a Buffer; and
# args_viewable_as_strided_memory, the decorator a library function uses to
# take any of them. Shape, strides and dtype are read when first asked for,
# from the producer's DLTensor (kept alive by its capsule) or interface dict.

cimport cython
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid, PyCapsule_New, PyCapsule_SetName
from cpython.ref cimport Py_INCREF, PyObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t, intptr_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy
from libcpp.optional cimport optional

cimport cubind.core._cpp as cpp
from cubind.core._dlpack cimport (
    _capsule_destructor,
    PyGILState_Ensure,
    PyGILState_Release,
    PyGILState_STATE,
    DLDataType,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLPackVersion,
    DLTensor,
    _drop_owner,
)
from cubind.core._memory._buffer cimport Buffer
from cubind.core._stream cimport _stream_handle
from cubind.core._tensor_map cimport TensorMapDescriptor

import functools
import warnings


cdef int _current_device_ordinal() except -2 nogil:
    # The device of the current context (cuCtxGetDevice); -1 when none is current.
    cdef optional[cpp.Device] device = cpp.Device.current_if_any()
    return device.value().ordinal() if device.has_value() else -1


cdef enum:
    _kDLCPU = 1
    _kDLCUDA = 2
    _kDLCUDAHost = 3
    _kDLCUDAManaged = 13


cdef uint64_t _DLPACK_READ_ONLY = 1


# DLPack's C exchange table (dlpack.h 1.2+): a producer type may offer it as
# the capsule type(obj).__dlpack_c_exchange_api__ ("dlpack_exchange_api"),
# which hands over a DLManagedTensorVersioned without a Python call and
# without ordering any stream (the consumer does that, with the producer's
# current stream). PyTorch offers it.
cdef struct _ExchangeHeader:
    DLPackVersion version
    _ExchangeHeader* prev_api


ctypedef int (*_FromPyObject)(void* py_object, DLManagedTensorVersioned** out) noexcept


ctypedef int (*_CurrentWorkStream)(int device_type, int32_t device_id, void** out_stream) noexcept


cdef struct _ExchangeAPI:
    _ExchangeHeader header
    void* managed_tensor_allocator
    _FromPyObject managed_tensor_from_py_object_no_sync
    void* managed_tensor_to_py_object_no_sync
    void* dltensor_from_py_object_no_sync
    _CurrentWorkStream current_work_stream


# What a producer type offers, found once per type: the address of its
# exchange table; _TYPE_HAS_DLPACK when it has none but the type itself has
# __dlpack__ and __dlpack_device__; _ASK_INSTANCE otherwise (the instance's
# attributes are asked at each call, as an instance may carry its own).
cdef enum:
    _ASK_INSTANCE = 0
    _TYPE_HAS_DLPACK = 1


cdef dict _PROTOCOLS = {}


# The type asked last and its answer: arrays come many of one type in a row.
cdef object _last_type = None


cdef uintptr_t _last_protocol = _ASK_INSTANCE


cdef uintptr_t _probe_protocol(type t) except? 0:
    cdef _ExchangeHeader* header
    capsule = getattr(t, "__dlpack_c_exchange_api__", None)
    if capsule is not None and PyCapsule_IsValid(capsule, b"dlpack_exchange_api"):
        header = <_ExchangeHeader*>PyCapsule_GetPointer(capsule, b"dlpack_exchange_api")
        # The first table of major version 1 in the chain (the fields used here are 1.x's).
        while header != NULL and header.version.major != 1:
            header = header.prev_api
        if header != NULL and (header.version.minor >= 2 or header.version.major > 1):
            if (<_ExchangeAPI*>header).managed_tensor_from_py_object_no_sync != NULL:
                return <uintptr_t>header
    if hasattr(t, "__dlpack__") and hasattr(t, "__dlpack_device__"):
        return _TYPE_HAS_DLPACK
    return _ASK_INSTANCE


cdef inline uintptr_t _protocol(type t) except? 0:
    global _last_type, _last_protocol
    if t is _last_type:
        return _last_protocol
    found = _PROTOCOLS.get(t)
    if found is None:
        found = _probe_protocol(t)
        _PROTOCOLS[t] = found
    _last_type = t
    _last_protocol = found
    return _last_protocol


cdef inline _ExchangeAPI* _exchange_api(type t) except? NULL:
    cdef uintptr_t protocol = _protocol(t)
    return <_ExchangeAPI*>protocol if protocol > _TYPE_HAS_DLPACK else NULL


cdef int _exchange_failed(str what) except -1:
    # A table function returned nonzero: it set the error, or should have.
    if PyErr_Occurred() == NULL:
        raise BufferError(f"the producer's DLPack exchange table failed in {what}")
    return -1


cdef extern from "Python.h":
    PyObject* PyErr_Occurred()


cdef tuple _MAX_VERSION = (1, 0)


# NumPy, imported at the first dtype asked for (importing cubind.core does not).
cdef object _numpy_module = None


cdef object _numpy():
    global _numpy_module
    if _numpy_module is None:
        import numpy
        _numpy_module = numpy
    return _numpy_module


# DLPack type codes (DLDataTypeCode) and their NumPy kinds.
cdef dict _DL_DTYPES = {}


# The key asked last and its dtype: views come many of one dtype in a row.
cdef int _last_dl_key = -1


cdef object _last_dl_dtype = None


cdef object _dtype_from_dl(DLDataType dt):
    global _last_dl_key, _last_dl_dtype
    cdef int key = (<int>dt.code << 24) | (<int>dt.bits << 8) | (dt.lanes & 0xFF)
    if key == _last_dl_key:
        return _last_dl_dtype
    found = _DL_DTYPES.get(key) if dt.lanes == 1 else None
    if found is not None:
        _last_dl_key = key
        _last_dl_dtype = found
        return found
    if dt.lanes != 1:
        raise NotImplementedError(f"vector dtypes (lanes={dt.lanes}) is not supported")
    bits = dt.bits
    np = _numpy()
    if dt.code == 0 and bits in (8, 16, 32, 64):
        found = np.dtype(f"int{bits}")
    elif dt.code == 1 and bits in (8, 16, 32, 64):
        found = np.dtype(f"uint{bits}")
    elif dt.code == 2 and bits in (16, 32, 64):
        found = np.dtype(f"float{bits}")
    elif dt.code == 5 and bits in (64, 128):
        found = np.dtype(f"complex{bits}")
    elif dt.code == 6 and bits == 8:
        found = np.dtype(np.bool_)
    elif dt.code == 4 and bits == 16:
        try:
            import ml_dtypes
        except ImportError:
            raise NotImplementedError("bfloat16 needs the ml_dtypes package (pip install ml_dtypes)") from None
        found = np.dtype(ml_dtypes.bfloat16)
    else:
        names = {0: "int", 1: "uint", 2: "float", 5: "complex", 6: "bool", 4: "bfloat"}
        if dt.code in names:
            raise TypeError(f"{names[dt.code]}{bits} is not supported.")
        raise TypeError(f"Unsupported dtype. dtype code: {dt.code}")
    _DL_DTYPES[key] = found
    return found


cdef int _dl_dtype_of(object dtype, DLDataType* out) except -1:
    # A NumPy dtype as DLPack's (code, bits, lanes), for export.
    dtype = _numpy().dtype(dtype)
    kind = dtype.kind
    bits = dtype.itemsize * 8
    if dtype.fields is not None:
        raise BufferError("structured dtypes cannot be exported through DLPack")
    if not dtype.isnative and dtype.itemsize > 1:
        raise BufferError(f"the non-native byte order of {dtype} cannot be exported through DLPack")
    if kind == "b" and bits == 8:
        out.code = 6
    elif kind == "i" and bits in (8, 16, 32, 64):
        out.code = 0
    elif kind == "u" and bits in (8, 16, 32, 64):
        out.code = 1
    elif kind == "f" and bits in (16, 32, 64):
        out.code = 2
    elif kind == "c" and bits in (64, 128):
        out.code = 5
    elif dtype.name == "bfloat16":
        out.code = 4
    else:
        raise BufferError(f"dtype {dtype} cannot be exported through DLPack")
    out.bits = bits
    out.lanes = 1
    return 0


cdef int _typestr_itemsize(str typestr) except -1:
    # "<f4", "|b1", "<c16", "<M8[s]": the size follows the kind, without NumPy.
    cdef Py_ssize_t end = 2
    cdef Py_ssize_t n = len(typestr)
    while end < n and typestr[end].isdigit():
        end += 1
    if n < 3 or end == 2:
        raise ValueError(f"typestr {typestr!r} is not an array interface type string")
    return int(typestr[2:end])


cdef tuple _int64_tuple(const int64_t* values, int n):
    cdef tuple out = PyTuple_New(n)
    cdef int i
    # A Python object: an untyped name would be inferred as int64_t, and each
    # use below would make (and drop) an int of its own, leaving the tuple one
    # reference short.
    cdef object item
    for i in range(n):
        item = values[i]
        Py_INCREF(item)
        PyTuple_SET_ITEM(out, i, item)
    return out


@cython.final
cdef class _Int64TupleMemo:
    # The tuple of the values asked last (up to 8 of them): views come many
    # of one shape in a row, and a tuple is immutable, so they share it.

    def __cinit__(self):
        self.n = -1

    cdef tuple get(self, const int64_t* values, int n):
        if n == self.n and memcmp(values, self.values, n * sizeof(int64_t)) == 0:
            return self.value
        out = _int64_tuple(values, n)
        if n <= 8:
            memcpy(self.values, values, n * sizeof(int64_t))
            self.n = n
            self.value = out
        return out


cdef _Int64TupleMemo _SHAPES = _Int64TupleMemo()


cdef _Int64TupleMemo _STRIDES = _Int64TupleMemo()


cdef str _simple_repr(obj):
    cls = obj if isinstance(obj, type) else type(obj)
    if cls.__module__ in (None, "builtins"):
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


cdef bint _has_dlpack(obj) except -1:
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return True
    if hasattr(obj, "__cuda_array_interface__"):
        return False
    raise BufferError("the input object does not support any data exchange protocol")


@cython.freelist(8)
cdef class StridedMemoryView:
    """StridedMemoryView(obj=None, stream_ptr=None)
--

The pointer, shape, strides (in elements) and dtype of an array owned
    by another library, and where it lives: device_id (-1 for host-only
    memory), is_device_accessible, readonly; exporting_obj is the array.

    Made by the classmethods from_dlpack, from_cuda_array_interface,
    from_array_interface, from_any_interface (DLPack, else the CUDA Array
    Interface) and from_buffer, or inside a function decorated with
    args_viewable_as_strided_memory. stream_ptr is the consumer stream's
    address: the view is ordered after the producer's stream (DLPack passes
    it to __dlpack__; for the CUDA Array Interface the consumer waits on an
    event of the producer's stream); -1 asks for no ordering. Constructing
    it directly is deprecated, as in cuda.core."""

    # DLPack: the capsule (renamed "used_...") whose tensor _dl points into;
    # its deleter runs when the view goes.
    # From a producer's exchange table: the tensor owned here, no capsule.
    # The CUDA Array Interface's or NumPy's interface dict.
    # from_buffer and view(): the _StridedLayout given, and the Buffer.

    def __init__(self, obj=None, stream_ptr=None):
        if obj is None:
            warnings.warn(
                "Constructing an empty StridedMemoryView is deprecated; use one of the classmethods "
                "`from_dlpack`, `from_cuda_array_interface` or `from_any_interface` to construct a "
                "StridedMemoryView from an object", DeprecationWarning, stacklevel=2)
            return
        if _has_dlpack(obj):
            warnings.warn(
                "Constructing a StridedMemoryView directly from a DLPack-supporting object is deprecated; "
                "Use `StridedMemoryView.from_dlpack` or `StridedMemoryView.from_any_interface` instead.",
                DeprecationWarning, stacklevel=2)
            _view_dlpack(self, obj, stream_ptr)
        else:
            warnings.warn(
                "Constructing a StridedMemoryView directly from a CUDA-array-interface-supporting object is "
                "deprecated; Use `StridedMemoryView.from_cuda_array_interface` or "
                "`StridedMemoryView.from_any_interface` instead.", DeprecationWarning, stacklevel=2)
            _view_cai(self, obj, stream_ptr)

    def __dealloc__(self):
        cdef DLManagedTensorVersioned* versioned
        cdef DLManagedTensor* plain
        if self._owned != NULL:
            if self._owned.deleter != NULL:
                self._owned.deleter(self._owned)
            self._owned = NULL
            self._dl = NULL
            return
        if self._dl == NULL or self._capsule is None:
            return
        if self._versioned:
            versioned = <DLManagedTensorVersioned*>PyCapsule_GetPointer(self._capsule, b"used_dltensor_versioned")
            if versioned != NULL and versioned.deleter != NULL:
                versioned.deleter(versioned)
        else:
            plain = <DLManagedTensor*>PyCapsule_GetPointer(self._capsule, b"used_dltensor")
            if plain != NULL and plain.deleter != NULL:
                plain.deleter(plain)
        self._dl = NULL

    @classmethod
    def from_dlpack(cls, obj, stream_ptr=None):
        """A view of obj through DLPack (obj.__dlpack__ and __dlpack_device__),
        versioned (1.x, with its read-only flag) or not. stream_ptr: the
        consumer stream's address, passed to __dlpack__ (-1: no ordering);
        None is refused for device and host arrays, as it is ambiguous."""
        cdef StridedMemoryView view = _new_view(cls)
        _view_dlpack(view, obj, stream_ptr)
        return view

    @classmethod
    def from_cuda_array_interface(cls, obj, stream_ptr=None):
        """A view of obj through __cuda_array_interface__ (v3). Unless
        stream_ptr is -1, the consumer stream waits for the interface's
        stream (an event recorded there)."""
        cdef StridedMemoryView view = _new_view(cls)
        _view_cai(view, obj, stream_ptr)
        return view

    @classmethod
    def from_array_interface(cls, obj):
        """A view of host memory through NumPy's __array_interface__ (v3)."""
        cdef StridedMemoryView view = _new_view(cls)
        _view_array_interface(view, obj)
        return view

    @classmethod
    def from_any_interface(cls, obj, stream_ptr=None):
        """from_dlpack when obj has DLPack, else from_cuda_array_interface."""
        cdef StridedMemoryView view = _new_view(cls)
        if _protocol(type(obj)) != _ASK_INSTANCE or _has_dlpack(obj):
            _view_dlpack(view, obj, stream_ptr)
        else:
            _view_cai(view, obj, stream_ptr)
        return view

    @classmethod
    def from_buffer(cls, buffer, shape, strides=None, *, itemsize=None, dtype=None, is_readonly=False):
        """A view over a Buffer: shape, strides in elements (None:
        C-contiguous) and itemsize or dtype (a NumPy dtype). No ordering is
        made: the caller orders the buffer's users."""
        cdef StridedMemoryView view = _new_view(cls)
        if not isinstance(buffer, Buffer):
            raise TypeError(f"StridedMemoryView.from_buffer: buffer must be a Buffer, not {type(buffer).__name__}")
        if itemsize is None and dtype is None:
            raise ValueError("Either itemsize or dtype must be specified")
        if dtype is not None:
            dtype = _numpy().dtype(dtype)
            if itemsize is not None and itemsize != dtype.itemsize:
                raise ValueError(f"itemsize ({itemsize}) does not match dtype.itemsize ({dtype.itemsize})")
            itemsize = dtype.itemsize
        from cubind.core._layout import _StridedLayout

        layout = _StridedLayout(shape, strides, itemsize)
        b = <Buffer>buffer
        b._require_open()
        _view_over_buffer(view, b, layout, dtype, is_readonly, _buffer_device(b), b.is_device_accessible)
        return view

    def view(self, layout=None, dtype=None):
        """A view of the same memory with another layout (a _StridedLayout)
        and/or dtype (of the layout's itemsize); self when neither is given."""
        cdef StridedMemoryView out
        if layout is None and dtype is None:
            return self
        if layout is None:
            layout = self._layout
        if dtype is None:
            dtype = self.dtype
        out = _new_view(type(self))
        _view_over_buffer(out, self._get_buffer(), layout, dtype, self.readonly, self.device_id,
                          self.is_device_accessible)
        return out

    cdef object _get_buffer(self):
        if self._buffer is None:
            if isinstance(self.exporting_obj, Buffer):
                self._buffer = self.exporting_obj
            else:
                self._buffer = Buffer.from_handle(self.ptr, 0, owner=self.exporting_obj)
        return self._buffer

    def as_tensor_map(self, box_dim=None, *, options=None, element_strides=None, data_type=None, interleave=None,
                      swizzle=None, l2_promotion=None, oob_fill=None):
        """A tiled TensorMapDescriptor (cuTensorMapEncodeTiled) of this
        device view, for TMA copies in a kernel (sm_90+): box_dim is the
        tile in elements, in the tensor's own dimension order; or options (a
        TensorMapDescriptorOptions, or a dict of its fields) instead of the
        keyword arguments."""
        from cubind.core import _tensor_map_options as tm

        if options is None:
            interleave = tm.TensorMapInterleave.NONE if interleave is None else interleave
            swizzle = tm.TensorMapSwizzle.NONE if swizzle is None else swizzle
            l2_promotion = tm.TensorMapL2Promotion.NONE if l2_promotion is None else l2_promotion
            oob_fill = tm.TensorMapOOBFill.NONE if oob_fill is None else oob_fill
        return TensorMapDescriptor._from_tiled(
            self, box_dim, options=options, element_strides=element_strides, data_type=data_type,
            interleave=interleave, swizzle=swizzle, l2_promotion=l2_promotion, oob_fill=oob_fill)

    def copy_from(self, other, stream, allocator=None, blocking=None):
        """Copies other (a StridedMemoryView of the same shape and itemsize)
        into this view, ordered on stream (cuMemcpyAsync). Both must be
        C-contiguous. blocking: None waits for host-device copies and not
        for device-to-device ones; True always waits, False never."""
        _copy_views(self, other, stream, blocking, "copy_from")

    def copy_to(self, other, stream=None, allocator=None, blocking=None):
        """Copies this view into other; as copy_from."""
        _copy_views(other, self, stream, blocking, "copy_to")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The view as a DLPack capsule (versioned, with the read-only flag,
        when max_version allows 1.0), keeping the view alive until the
        consumer is done. No ordering is made (stream is not used)."""
        cdef bint versioned = False
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"StridedMemoryView.__dlpack__: dl_device {tuple(dl_device)} differs from the "
                              f"view's {self.__dlpack_device__()}; copies to another device are not supported")
        if copy is True:
            raise BufferError("StridedMemoryView.__dlpack__: copy=True is not supported; the export shares the memory")
        if max_version is not None:
            if not isinstance(max_version, tuple) or len(max_version) != 2:
                raise BufferError(f"Expected max_version tuple[int, int], got {max_version}")
            versioned = max_version >= (1, 0)
        return _export_view(self, versioned)

    def __dlpack_device__(self):
        cdef int device_type
        cdef int device_id
        _view_dl_device(self, &device_type, &device_id)
        return (device_type, device_id)

    @property
    def _layout(self):
        """The view's _StridedLayout (shape, strides in elements, itemsize)."""
        from cubind.core._layout import _StridedLayout

        if self._layout_given is not None:
            return self._layout_given
        if self._dl == NULL and self._interface is None:
            raise ValueError("Cannot infer layout from the exporting object")
        return _StridedLayout(self.shape, self.strides, self._get_itemsize())

    @property
    def size(self):
        """The number of elements."""
        n = 1
        for extent in self.shape:
            n *= extent
        return n

    @property
    def shape(self):
        """The extent of each dimension."""
        if self._shape is None:
            if self._dl != NULL:
                self._shape = _SHAPES.get(self._dl.shape, self._dl.ndim) if self._dl.ndim else ()
            elif self._interface is not None:
                self._shape = tuple(self._interface["shape"])
            elif self._layout_given is not None:
                self._shape = self._layout_given.shape
            else:
                raise ValueError("Cannot infer layout from the exporting object")
        return self._shape

    @property
    def strides(self):
        """The step of each dimension in elements (not bytes); None when the
        producer gave none (C-contiguous)."""
        cdef int itemsize
        if not self._have_strides:
            if self._dl != NULL:
                if self._dl.strides != NULL and self._dl.ndim:
                    self._strides = _STRIDES.get(self._dl.strides, self._dl.ndim)
            elif self._interface is not None:
                byte_strides = self._interface.get("strides")
                if byte_strides is not None:
                    itemsize = self._get_itemsize()
                    for s in byte_strides:
                        if s % itemsize:
                            raise ValueError(f"stride {s} bytes is not a multiple of the itemsize {itemsize}")
                    self._strides = tuple(s // itemsize for s in byte_strides)
            elif self._layout_given is not None:
                self._strides = self._layout_given.strides
            else:
                raise ValueError("Cannot infer layout from the exporting object")
            self._have_strides = True
        return self._strides

    @property
    def dtype(self):
        """The element type, a numpy.dtype (NumPy is imported here); None for
        a view made from a Buffer with an itemsize only."""
        if self._dtype is None:
            if self._dl != NULL:
                self._dtype = _dtype_from_dl(self._dl.dtype)
            elif self._interface is not None:
                self._dtype = _typestr_dtype(self._interface["typestr"])
        return self._dtype

    cdef int _get_itemsize(self) except -1:
        cdef int bits
        if self._itemsize == 0:
            if self._dl != NULL:
                bits = self._dl.dtype.bits * self._dl.dtype.lanes
                if bits % 8:
                    raise ValueError("dl_tensor.dtype.bits must be a multiple of 8")
                self._itemsize = bits // 8
            elif self._interface is not None:
                self._itemsize = _typestr_itemsize(self._interface["typestr"])
            elif self._layout_given is not None:
                self._itemsize = self._layout_given.itemsize
            else:
                raise ValueError("Cannot infer layout from the exporting object")
        return self._itemsize

    def __repr__(self):
        return (f"StridedMemoryView(ptr={self.ptr},\n"
                f"                  shape={self.shape},\n"
                f"                  strides={self.strides},\n"
                f"                  itemsize={self._get_itemsize()},\n"
                f"                  dtype={_simple_repr(self.dtype)},\n"
                f"                  device_id={self.device_id},\n"
                f"                  is_device_accessible={self.is_device_accessible},\n"
                f"                  readonly={self.readonly},\n"
                f"                  exporting_obj={_simple_repr(self.exporting_obj)})")


cdef dict _TYPESTR_DTYPES = {}


cdef object _typestr_dtype(str typestr):
    found = _TYPESTR_DTYPES.get(typestr)
    if found is None:
        found = _numpy().dtype(typestr)
        _TYPESTR_DTYPES[typestr] = found
    return found


cdef int _view_dlpack(StridedMemoryView view, object obj, object stream_ptr) except -1:
    # Through the producer type's exchange table where it has one, else its methods.
    cdef _ExchangeAPI* api = _exchange_api(type(obj))
    if api != NULL:
        return _view_exchanged(view, obj, stream_ptr, api)
    return _view_capsule(view, obj, stream_ptr)


cdef int _view_capsule(StridedMemoryView view, object obj, object stream_ptr) except -1:
    # Through obj.__dlpack_device__() and obj.__dlpack__(...).
    cdef int device_type
    cdef int device_id
    cdef object stream = None
    cdef object capsule
    cdef DLManagedTensorVersioned* versioned
    cdef DLManagedTensor* plain
    cdef DLTensor* tensor
    cdef bint accessible = False
    dev = obj.__dlpack_device__()
    if type(dev) is tuple and len(<tuple>dev) == 2:
        device_type = <object>PyTuple_GET_ITEM(dev, 0)
        device_id = <object>PyTuple_GET_ITEM(dev, 1)
    else:
        device_type, device_id = dev
    if device_type == _kDLCPU:
        if stream_ptr is None:
            raise BufferError("stream=None is ambiguous with view()")
        device_id = -1
        if stream_ptr != -1:
            stream = stream_ptr
    elif device_type == _kDLCUDA:
        if stream_ptr is None:
            raise BufferError("stream=None is ambiguous with view()")
        accessible = True
        stream = stream_ptr
    elif device_type == _kDLCUDAHost or device_type == _kDLCUDAManaged:
        # Reachable from both sides: passed through as given.
        accessible = True
        stream = stream_ptr
    else:
        raise BufferError(f"device not supported: DLPack device type {device_type}")
    if stream is not None:
        stream = int(stream) or None
    try:
        capsule = obj.__dlpack__(stream=stream, max_version=_MAX_VERSION)
    except TypeError:
        # A producer from before DLPack 1.0 knows no max_version.
        capsule = obj.__dlpack__(stream=stream)
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        versioned = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        if versioned.version.major != 1:
            # Unused and still named "dltensor_versioned": its destructor frees it.
            raise BufferError(f"DLPack {versioned.version.major}.{versioned.version.minor} is not supported: "
                              "this consumer reads DLPack 1.x (and the unversioned 0.x)")
        tensor = &versioned.dl_tensor
        view.readonly = (versioned.flags & _DLPACK_READ_ONLY) != 0
        view._versioned = True
        PyCapsule_SetName(capsule, b"used_dltensor_versioned")
    elif PyCapsule_IsValid(capsule, b"dltensor"):
        plain = <DLManagedTensor*>PyCapsule_GetPointer(capsule, b"dltensor")
        tensor = &plain.dl_tensor
        view.readonly = False
        view._versioned = False
        PyCapsule_SetName(capsule, b"used_dltensor")
    else:
        raise BufferError(f"__dlpack__ of {type(obj).__name__} returned {type(capsule).__name__}, "
                          "not an unconsumed DLPack capsule")
    view._capsule = capsule
    view._dl = tensor
    view.ptr = <intptr_t>tensor.data + <intptr_t>tensor.byte_offset
    view.device_id = device_id
    view.is_device_accessible = accessible
    view.exporting_obj = obj
    return 0


cdef int _view_exchanged(StridedMemoryView view, object obj, object stream_ptr, _ExchangeAPI* api) except -1:
    # The exchange table's tensor, then the ordering __dlpack__(stream=...)
    # would have made: the consumer stream waits for the producer's current one.
    cdef DLManagedTensorVersioned* managed = NULL
    cdef DLTensor* tensor
    cdef void* producer = NULL
    cdef intptr_t consumer = 0
    cdef int device_type
    cdef int device_id
    if api.managed_tensor_from_py_object_no_sync(<void*>obj, &managed) != 0 or managed == NULL:
        return _exchange_failed("managed_tensor_from_py_object_no_sync")
    view._owned = managed
    view._dl = tensor = &managed.dl_tensor
    view._versioned = True
    view.exporting_obj = obj
    if managed.version.major != 1:
        raise BufferError(f"DLPack {managed.version.major}.{managed.version.minor} is not supported: "
                          "this consumer reads DLPack 1.x (and the unversioned 0.x)")
    view.readonly = (managed.flags & _DLPACK_READ_ONLY) != 0
    view.ptr = <intptr_t>tensor.data + <intptr_t>tensor.byte_offset
    device_type = tensor.device.device_type
    device_id = tensor.device.device_id
    if device_type == _kDLCPU or device_type == _kDLCUDA:
        if stream_ptr is None:
            raise BufferError("stream=None is ambiguous with view()")
    elif device_type != _kDLCUDAHost and device_type != _kDLCUDAManaged:
        raise BufferError(f"device not supported: DLPack device type {device_type}")
    view.is_device_accessible = device_type != _kDLCPU
    view.device_id = -1 if device_type == _kDLCPU else (device_id if device_type == _kDLCUDA else 0)
    if device_type == _kDLCUDA and stream_ptr is not None:
        consumer = int(stream_ptr)
        if consumer != -1 and consumer != 0:
            if api.current_work_stream == NULL:
                raise BufferError("the producer's DLPack exchange table has no current_work_stream")
            if api.current_work_stream(device_type, device_id, &producer) != 0:
                return _exchange_failed("current_work_stream")
            if <intptr_t>producer != consumer:
                with nogil:
                    cpp.StreamRef(<cpp.CUstream>consumer).wait(cpp.StreamRef(<cpp.CUstream>producer))
    return 0


cdef int _view_cai(StridedMemoryView view, object obj, object stream_ptr) except -1:
    cdef dict cai = obj.__cuda_array_interface__
    cdef intptr_t producer
    cdef intptr_t consumer
    cdef uintptr_t address
    cdef int device_id
    if cai["version"] < 3:
        raise BufferError("only CUDA Array Interface v3 or above is supported")
    if cai.get("mask") is not None:
        raise BufferError("mask is not supported")
    if stream_ptr is None:
        raise BufferError("stream=None is ambiguous with view()")
    ptr, ro = cai["data"]
    view.ptr = ptr
    view.readonly = ro
    view.is_device_accessible = True
    view._interface = cai
    view.exporting_obj = obj
    address = <uintptr_t>view.ptr
    if address != 0:
        with nogil:
            device_id = cpp.pointer_device_ordinal(<cpp.CUdeviceptr>address)
    else:
        with nogil:
            device_id = _current_device_ordinal()
        if device_id < 0:
            device_id = 0
    view.device_id = device_id
    consumer = int(stream_ptr)
    if consumer != -1:
        stream = cai.get("stream")
        if stream is not None:
            producer = stream
            if producer == 0:
                raise BufferError("__cuda_array_interface__: stream 0 is not allowed by version 3 (it is ambiguous)")
            if producer != consumer:
                with nogil:
                    cpp.StreamRef(<cpp.CUstream>consumer).wait(cpp.StreamRef(<cpp.CUstream>producer))
    return 0


cdef int _view_array_interface(StridedMemoryView view, object obj) except -1:
    cdef dict ai = obj.__array_interface__
    if ai["version"] < 3:
        raise BufferError("only NumPy Array Interface v3 or above is supported")
    if ai.get("mask") is not None:
        raise BufferError("mask is not supported")
    data = ai.get("data")
    if not isinstance(data, tuple):
        raise BufferError("__array_interface__: data must be a (pointer, read_only) tuple")
    ptr, ro = data
    view.ptr = ptr
    view.readonly = ro
    view.is_device_accessible = False
    view.device_id = -1
    view._interface = ai
    view.exporting_obj = obj
    return 0


cdef int _buffer_device(Buffer b) except? -2:
    # A Buffer's device: its resource's, else the driver's answer for the address.
    cdef uintptr_t address = b._ptr
    if b._mr is not None:
        return b._mr.device_id
    with nogil:
        return cpp.pointer_device_ordinal(<cpp.CUdeviceptr>address)


cdef int _view_over_buffer(StridedMemoryView view, Buffer buffer, object layout, object dtype, bint is_readonly,
                           int device_id, bint accessible) except -1:
    from cubind.core._layout import _StridedLayout

    if not isinstance(layout, _StridedLayout):
        raise TypeError(f"layout must be a _StridedLayout, not {type(layout).__name__}")
    if dtype is not None:
        dtype = _numpy().dtype(dtype)
        if dtype.itemsize != layout.itemsize:
            raise ValueError(f"The dtype's itemsize ({dtype.itemsize}) does not match the layout's "
                             f"itemsize ({layout.itemsize}).")
    if buffer._mr is not None and buffer._size < layout.required_size_in_bytes:
        raise ValueError(f"Buffer size is too small for the layout. Expected at least "
                         f"{layout.required_size_in_bytes} bytes, got {buffer._size} bytes.")
    view.ptr = <intptr_t>buffer._ptr + layout.slice_offset_in_bytes
    view.device_id = device_id
    view.is_device_accessible = accessible
    view.readonly = is_readonly
    view.exporting_obj = buffer
    view._buffer = buffer
    view._layout_given = layout
    view._dtype = dtype
    return 0


cdef int _view_dl_device(StridedMemoryView view, int* device_type, int* device_id) except -1:
    if view._dl != NULL:
        device_type[0] = view._dl.device.device_type
        device_id[0] = view._dl.device.device_id if device_type[0] == _kDLCUDA else 0
    elif view.is_device_accessible and isinstance(view.exporting_obj, Buffer) and (
            <Buffer>view.exporting_obj)._mr is not None:
        device_type[0], device_id[0] = view.exporting_obj.__dlpack_device__()
    elif view.is_device_accessible:
        device_type[0] = _kDLCUDA
        device_id[0] = view.device_id
    else:
        device_type[0] = _kDLCPU
        device_id[0] = 0
    return 0


# One export of a view: either managed form, with the shape and strides it
# points at after it, and the view it keeps alive.
cdef struct _ViewExport:
    DLManagedTensor plain
    DLManagedTensorVersioned versioned
    PyObject* owner
    int64_t dims[1]   # shape then strides: 2 * ndim values, allocated past the struct


cdef void _release_view_export(_ViewExport* export) noexcept nogil:
    cdef PyGILState_STATE state = PyGILState_Ensure()
    _drop_owner(export.owner)
    PyGILState_Release(state)
    free(export)


cdef void _delete_view_plain(DLManagedTensor* managed) noexcept nogil:
    _release_view_export(<_ViewExport*>managed.manager_ctx)


cdef void _delete_view_versioned(DLManagedTensorVersioned* managed) noexcept nogil:
    _release_view_export(<_ViewExport*>managed.manager_ctx)


cdef object _export_view(StridedMemoryView view, bint versioned_form):
    cdef int ndim
    cdef int i
    cdef int device_type
    cdef int device_id
    cdef DLDataType dt
    cdef _ViewExport* export
    cdef DLTensor* tensor
    shape = view.shape
    strides = view.strides
    ndim = len(shape)
    if view._dl != NULL:
        dt = view._dl.dtype
    else:
        dtype = view.dtype
        if dtype is None:
            raise BufferError("Cannot export StridedMemoryView via DLPack without dtype information; "
                              "create the view with dtype specified.")
        _dl_dtype_of(dtype, &dt)
    _view_dl_device(view, &device_type, &device_id)
    if strides is None:
        from cubind.core._layout import _StridedLayout

        strides = _StridedLayout.dense(shape, 1).strides
    export = <_ViewExport*>malloc(sizeof(_ViewExport) + sizeof(int64_t) * 2 * max(ndim, 1))
    if export == NULL:
        raise MemoryError()
    for i in range(ndim):
        export.dims[i] = shape[i]
        export.dims[ndim + i] = strides[i]
    export.owner = <PyObject*>view
    Py_INCREF(view)
    tensor = &export.versioned.dl_tensor if versioned_form else &export.plain.dl_tensor
    tensor.data = <void*>view.ptr
    tensor.device.device_type = device_type
    tensor.device.device_id = device_id
    tensor.ndim = ndim
    tensor.dtype = dt
    if ndim:
        tensor.shape = export.dims
        tensor.strides = export.dims + ndim
    else:
        tensor.shape = NULL
        tensor.strides = NULL
    tensor.byte_offset = 0
    if versioned_form:
        export.versioned.version.major = 1
        export.versioned.version.minor = 0
        export.versioned.manager_ctx = export
        export.versioned.deleter = _delete_view_versioned
        export.versioned.flags = _DLPACK_READ_ONLY if view.readonly else 0
        return PyCapsule_New(&export.versioned, b"dltensor_versioned", _capsule_destructor)
    export.plain.manager_ctx = export
    export.plain.deleter = _delete_view_plain
    return PyCapsule_New(&export.plain, b"dltensor", _capsule_destructor)


cdef int _copy_views(object dst_obj, object src_obj, object stream, object blocking, str method) except -1:
    cdef StridedMemoryView src
    cdef StridedMemoryView dst
    cdef cpp.CUstream handle
    cdef uintptr_t d
    cdef uintptr_t s
    cdef size_t nbytes
    if not isinstance(src_obj, StridedMemoryView):
        raise TypeError(f"StridedMemoryView.{method}: other must be a StridedMemoryView, not {type(src_obj).__name__}")
    if not isinstance(dst_obj, StridedMemoryView):
        raise TypeError(f"StridedMemoryView.{method}: other must be a StridedMemoryView, not {type(dst_obj).__name__}")
    src = <StridedMemoryView>src_obj
    dst = <StridedMemoryView>dst_obj
    if stream is None:
        raise ValueError(f"StridedMemoryView.{method}: stream must be a Stream (or have __cuda_stream__)")
    handle = _stream_handle(stream)
    if dst.readonly:
        raise ValueError(f"StridedMemoryView.{method}: the destination view is read-only")
    if dst.shape != src.shape:
        raise ValueError(f"StridedMemoryView.{method}: shapes differ (source {src.shape}, destination {dst.shape})")
    if dst._get_itemsize() != src._get_itemsize():
        raise ValueError(f"StridedMemoryView.{method}: itemsizes differ (source {src._get_itemsize()}, "
                         f"destination {dst._get_itemsize()})")
    if not (src._layout.is_contiguous_c and dst._layout.is_contiguous_c):
        raise NotImplementedError(f"StridedMemoryView.{method}: only C-contiguous views are copied; "
                                  "copy through a contiguous array of the producing library")
    nbytes = src.size * src._get_itemsize()
    d = <uintptr_t>dst.ptr
    s = <uintptr_t>src.ptr
    if nbytes:
        with nogil:
            cpp.copy_memory(<cpp.CUdeviceptr>d, <cpp.CUdeviceptr>s, nbytes, cpp.StreamRef(handle))
    if blocking is None:
        blocking = not (src.is_device_accessible and dst.is_device_accessible)
    if blocking:
        with nogil:
            cpp.StreamRef(handle).sync()
    return 0


cdef class _StridedMemoryViewProxy:
    """What a function decorated with args_viewable_as_strided_memory gets
    for each chosen argument: view(stream_ptr) makes the StridedMemoryView."""


    def __init__(self, obj):
        self.obj = obj
        self.has_dlpack = _has_dlpack(obj)

    def view(self, stream_ptr=None):
        cdef StridedMemoryView view = StridedMemoryView.__new__(StridedMemoryView)
        if self.has_dlpack:
            _view_dlpack(view, self.obj, stream_ptr)
        else:
            _view_cai(view, self.obj, stream_ptr)
        return view


def args_viewable_as_strided_memory(tuple arg_indices):
    """A decorator: the positional arguments at arg_indices reach the
    function as proxies whose view(stream_ptr) returns a StridedMemoryView
    of the array passed (anything with DLPack or the CUDA Array Interface),
    so the function body works the same for every array library."""
    def decorate(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            args = list(args)
            for index in arg_indices:
                args[index] = _StridedMemoryViewProxy(args[index])
            return func(*args, **kwargs)
        return wrapped
    return decorate


cdef inline StridedMemoryView _new_view(type cls):
    # A view of cls without calling __init__. For StridedMemoryView itself
    # the type's allocator is called directly (its free list included);
    # `StridedMemoryView.__new__(cls)` with a variable cls is a Python-level call.
    if cls is StridedMemoryView:
        return StridedMemoryView.__new__(StridedMemoryView)
    return StridedMemoryView.__new__(cls)

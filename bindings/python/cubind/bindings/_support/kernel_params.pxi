# Kernel arguments of cuLaunchKernel and its kin: None, an address,
# (values, types) packed into one pointer per argument, or an object with the
# buffer protocol holding the pointers (a NumPy array of addresses).

from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBuffer_Release, PyObject_CheckBuffer, PyObject_GetBuffer

from libc.stdint cimport uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy

import sys as _sys


# The head of NumPy's array object (PyArrayObject_fields in numpy/ndarraytypes.h,
# a layout NumPy 1.x and 2.x keep in their ABI): a C- or F-contiguous
# numpy.ndarray of addresses is read in place, with no buffer export.
cdef extern from *:
    """
    typedef struct {
        PyObject_HEAD
        char* data;
        int nd;
        Py_ssize_t* dimensions;
        Py_ssize_t* strides;
        PyObject* base;
        PyObject* descr;
        int flags;
    } cubind_ndarray_head;
    """
    ctypedef struct cubind_ndarray_head:
        char* data
        int flags

cdef int _NPY_CONTIGUOUS = 0x1 | 0x2   # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS
cdef object _ndarray = None            # numpy.ndarray, once NumPy is imported and an array came


cdef bint _is_contiguous_ndarray(object obj):
    global _ndarray
    if _ndarray is None:
        np = _sys.modules.get("numpy")
        if np is None or type(obj) is not getattr(np, "ndarray", None):
            return False
        _ndarray = type(obj)
    return type(obj) is _ndarray and ((<cubind_ndarray_head*>obj).flags & _NPY_CONTIGUOUS) != 0


# (values, types): each type is a ctypes type, or None
# for a cubind object passed by the address of its storage (getPtr()).

# ctypes is imported at the first (values, types) launch, not with the module.
cdef object _ctypes = None
cdef object _SimpleCData = None

# The layout of the last types tuple packed (held, so its identity stays unique).
cdef object _last_kinds = None
cdef char _last_fmts[64]
cdef Py_ssize_t _last_sizes[64]
cdef Py_ssize_t _last_offsets[64]
cdef Py_ssize_t _last_total = 0


cdef void _remember_layout(tuple kinds, Py_ssize_t n, char* fmts, Py_ssize_t* sizes, Py_ssize_t* offsets,
                           Py_ssize_t total) noexcept:
    global _last_kinds, _last_total
    memcpy(_last_fmts, fmts, n * sizeof(char))
    memcpy(_last_sizes, sizes, n * sizeof(Py_ssize_t))
    memcpy(_last_offsets, offsets, n * sizeof(Py_ssize_t))
    _last_total = total
    _last_kinds = kinds
cdef dict _CTYPE_INFO = None   # ctypes type -> (format byte or 0, size, alignment)


cdef _load_ctypes():
    global _ctypes, _CTYPE_INFO, _SimpleCData
    import ctypes
    _ctypes = ctypes
    _SimpleCData = ctypes._SimpleCData
    _CTYPE_INFO = {}
    for t, fmt in ((ctypes.c_bool, b"?"), (ctypes.c_char, b"c"), (ctypes.c_byte, b"b"), (ctypes.c_ubyte, b"B"),
                   (ctypes.c_short, b"h"), (ctypes.c_ushort, b"H"), (ctypes.c_int, b"i"), (ctypes.c_uint, b"I"),
                   (ctypes.c_long, b"l"), (ctypes.c_ulong, b"L"), (ctypes.c_longlong, b"q"),
                   (ctypes.c_ulonglong, b"Q"), (ctypes.c_size_t, b"N"), (ctypes.c_ssize_t, b"n"),
                   (ctypes.c_float, b"f"), (ctypes.c_double, b"d"), (ctypes.c_void_p, b"P")):
        _CTYPE_INFO[t] = (fmt[0], ctypes.sizeof(t), ctypes.alignment(t))


cdef tuple _ctype_info(object t):
    info = _CTYPE_INFO.get(t)
    if info is None:
        # Any other ctypes type (a Structure, an array): copied from a ctypes instance.
        try:
            info = (0, _ctypes.sizeof(t), _ctypes.alignment(t))
        except TypeError:
            raise TypeError(f"kernelParams: {t!r} is not a ctypes type or None") from None
        _CTYPE_INFO[t] = info
    return <tuple>info


cdef class KernelParams:
    def __cinit__(self, values, types):
        cdef tuple vals = values if type(values) is tuple else tuple(values)
        cdef tuple kinds = types if type(types) is tuple else tuple(types)
        cdef Py_ssize_t n = len(vals)
        cdef Py_ssize_t offset = 0
        cdef Py_ssize_t size, align, i
        cdef char fmt
        cdef tuple info
        # Per argument: format, size and alignment, read once from the cache.
        cdef char fmts[64]
        cdef Py_ssize_t sizes[64]
        cdef Py_ssize_t offsets[64]
        if len(kinds) != n:
            raise ValueError(f"kernelParams: {n} values but {len(kinds)} types")
        if n > 64:
            # Rare: more than 64 arguments go through a list of layouts.
            self._pack_many(vals, kinds)
            return
        if _ctypes is None:
            _load_ctypes()
        if kinds is _last_kinds:
            # The same types tuple as the previous launch (the usual case): its layout.
            memcpy(fmts, _last_fmts, n * sizeof(char))
            memcpy(sizes, _last_sizes, n * sizeof(Py_ssize_t))
            memcpy(offsets, _last_offsets, n * sizeof(Py_ssize_t))
            offset = _last_total
        else:
            for i in range(n):
                t = kinds[i]
                if t is None:
                    fmts[i] = 0
                    sizes[i] = -1
                    continue
                info = _ctype_info(t)
                fmts[i] = info[0]
                size = info[1]
                align = info[2]
                offset = (offset + align - 1) // align * align
                offsets[i] = offset
                sizes[i] = size
                offset += size
            _remember_layout(kinds, n, fmts, sizes, offsets, offset)
        self.args = self._inline_args
        if offset <= sizeof(self._inline):
            self._data = self._inline
        else:
            self._data = <char*>alloc_array(offset, 1)
        for i in range(n):
            v = vals[i]
            if sizes[i] < 0:
                self.args[i] = self._object_pointer(v, i)
                continue
            self._store(v, kinds[i], fmts[i], self._data + offsets[i], sizes[i], i)
            self.args[i] = self._data + offsets[i]

    cdef void* _object_pointer(self, object v, Py_ssize_t i) except? NULL:
        if self._keep is None:
            self._keep = []
        self._keep.append(v)
        if isinstance(v, Handle):
            return &(<Handle>v)._value
        if isinstance(v, Struct):
            return (<Struct>v)._ptr
        if hasattr(v, "getPtr"):
            return <void*><uintptr_t>v.getPtr()
        raise TypeError(f"kernelParams[{i}]: a value whose type is None must be a cubind object "
                        f"(handle, struct or value type), got {type(v).__name__}")

    cdef int _store(self, object v, object t, char fmt, char* dst, Py_ssize_t size, Py_ssize_t i) except -1:
        if fmt != 0:
            # Plain Python values convert directly; a ctypes instance fails the
            # conversion and is copied below.
            try:
                store_scalar(dst, fmt, v)
                return 0
            except TypeError:
                if not isinstance(v, _SimpleCData):
                    raise TypeError(f"kernelParams[{i}]: {v!r} does not convert to {t.__name__}") from None
            except (OverflowError, ValueError) as e:
                raise type(e)(f"kernelParams[{i}]: {v!r} does not convert to {t.__name__} ({e})") from None
        try:
            # A ctypes instance, or a ctypes type other than the simple ones.
            c = v if isinstance(v, t) else t(v)
            memcpy(dst, <void*><uintptr_t>_ctypes.addressof(c), size)
        except (TypeError, OverflowError, ValueError) as e:
            raise type(e)(f"kernelParams[{i}]: {v!r} does not convert to {t.__name__} ({e})") from None
        return 0

    cdef _pack_many(self, tuple vals, tuple kinds):
        cdef Py_ssize_t n = len(vals)
        cdef Py_ssize_t offset = 0
        cdef Py_ssize_t i, size, align
        if _ctypes is None:
            _load_ctypes()
        layout = []
        for i in range(n):
            t = kinds[i]
            if t is None:
                layout.append(None)
                continue
            info = _ctype_info(t)
            size = info[1]
            align = info[2]
            offset = (offset + align - 1) // align * align
            layout.append((info[0], offset, size))
            offset += size
        self._data = <char*>alloc_array(offset if offset > 0 else 1, 1)
        self.args = <void**>alloc_array(n, sizeof(void*))
        for i in range(n):
            v = vals[i]
            entry = layout[i]
            if entry is None:
                self.args[i] = self._object_pointer(v, i)
                continue
            self._store(v, kinds[i], <char>entry[0], self._data + <Py_ssize_t>entry[1], entry[2], i)
            self.args[i] = self._data + <Py_ssize_t>entry[1]

    def __dealloc__(self):
        if self._data != self._inline:
            free(self._data)
        if self.args != self._inline_args:
            free(self.args)


cdef class KernelParamsBuffer:
    # The pointer array of an object with the buffer protocol, as
    # cuda.bindings takes it: its memory, exported while this lives (the call).
    cdef Py_buffer view
    cdef bint held

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)


cdef object kernel_params_other(object obj):
    if obj is None or isinstance(obj, int):
        return obj
    if isinstance(obj, KernelParams):
        return obj
    if isinstance(obj, tuple) and len(obj) == 2:
        values, types = obj
        return KernelParams(values, types)
    if _is_contiguous_ndarray(obj):
        # Its memory, read in place; the caller's reference keeps it alive (and unresizable).
        return obj
    if PyObject_CheckBuffer(obj):
        # Made without a call of the class (no argument tuple to parse).
        exported = KernelParamsBuffer.__new__(KernelParamsBuffer)
        PyObject_GetBuffer(obj, &(<KernelParamsBuffer>exported).view, PyBUF_ANY_CONTIGUOUS)
        (<KernelParamsBuffer>exported).held = True
        return exported
    try:
        return _index(obj)
    except TypeError:
        raise TypeError(f"kernelParams: expected None, an address, a (values, types) tuple or an array of pointers, "
                        f"got {type(obj).__name__}") from None


cdef void** kernel_params_pointer_other(object packed) except? NULL:
    if packed is None:
        return NULL
    if isinstance(packed, KernelParams):
        return (<KernelParams>packed).args
    if type(packed) is _ndarray:
        return <void**>(<cubind_ndarray_head*>packed).data
    if isinstance(packed, KernelParamsBuffer):
        return <void**>(<KernelParamsBuffer>packed).view.buf
    if packed < 0:
        raise ValueError(f"kernelParams: an address cannot be negative ({packed})")
    return <void**><uintptr_t>packed

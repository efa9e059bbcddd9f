# cython: language_level=3, binding=False
"""The least a binding can do per call, for benchmarks/gpu_bench_bindings.py.

Each function takes as many arguments as the driver call it stands for and
returns a tuple as long as that call's, holding objects made beforehand, and
the *_nogil ones release the GIL around an empty C function, as cubind does
around every call. No binding of that call can cost less than its floor.
"""

cdef extern from *:
    """
    static void cubind_floor_opaque(void) { __asm__ __volatile__("" ::: "memory"); }
    """
    void cubind_floor_opaque() nogil

cdef object _status = object()
cdef object _value = object()


def ret2_0():
    return (_status, _value)


def ret2_0_nogil():
    with nogil:
        cubind_floor_opaque()
    return (_status, _value)


def ret2_1_nogil(a):
    with nogil:
        cubind_floor_opaque()
    return (_status, _value)


def ret2_2_nogil(a, b):
    with nogil:
        cubind_floor_opaque()
    return (_status, _value)


def ret1_1_nogil(a):
    with nogil:
        cubind_floor_opaque()
    return (_status,)


def ret1_2_nogil(a, b):
    with nogil:
        cubind_floor_opaque()
    return (_status,)


# The floors of cubind.core's launch and allocate + close: the driver's own
# calls (cuLaunchKernelEx, cuMemAllocFromPoolAsync, cuMemFreeAsync, their
# addresses set once from C) made with the GIL released, behind a Python call
# of the same shape as cubind.core's. Nothing is checked or converted: the
# stream, kernel and pool come as ints and the kernel's arguments are ints
# prepared beforehand, so no binding that releases the GIL can do less.

cdef extern from "cuda.h":
    ctypedef struct CUlaunchConfig:
        unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes
        void* hStream
        void* attrs
        unsigned int numAttrs

ctypedef int (*launch_ex_fn)(const CUlaunchConfig*, void*, void**, void**) noexcept nogil
ctypedef int (*alloc_fn)(unsigned long long*, size_t, void*, void*) noexcept nogil
ctypedef int (*free_fn)(unsigned long long, void*) noexcept nogil

cdef launch_ex_fn _launch_ex = NULL
cdef alloc_fn _alloc = NULL
cdef free_fn _free = NULL
cdef int _values[16]
cdef void* _params[16]
cdef void* _pool = NULL


def set_entry_points(size_t launch_ex, size_t alloc, size_t free_, size_t pool):
    global _launch_ex, _alloc, _free, _pool
    _launch_ex = <launch_ex_fn>launch_ex
    _alloc = <alloc_fn>alloc
    _free = <free_fn>free_
    _pool = <void*>pool
    for i in range(16):
        _values[i] = i
        _params[i] = &_values[i]


def launch(stream, config, kernel, *args):
    cdef CUlaunchConfig c
    cdef int status
    cdef void* f = <void*><size_t>kernel
    cdef void** params = _params if len(args) else NULL
    c.gridDimX = c.gridDimY = c.gridDimZ = 1
    c.blockDimX = c.blockDimY = c.blockDimZ = 1
    c.sharedMemBytes = 0
    c.hStream = <void*><size_t>stream
    c.attrs = NULL
    c.numAttrs = 0
    with nogil:
        status = _launch_ex(&c, f, params, NULL)
    if status != 0:
        raise RuntimeError(f"cuLaunchKernelEx: {status}")


cdef class FloorBuffer:
    cdef unsigned long long ptr
    cdef void* stream

    def close(self):
        cdef int status
        with nogil:
            status = _free(self.ptr, self.stream)
        if status != 0:
            raise RuntimeError(f"cuMemFreeAsync: {status}")


def allocate(size, *, stream):
    cdef FloorBuffer b = FloorBuffer.__new__(FloorBuffer)
    cdef size_t n = size
    cdef int status
    b.stream = <void*><size_t>stream
    with nogil:
        status = _alloc(&b.ptr, n, _pool, b.stream)
    if status != 0:
        raise RuntimeError(f"cuMemAllocFromPoolAsync: {status}")
    return b


# The simple calls' floors with the driver's own function inside: the same
# as ret2_*_nogil, but the empty C function is the driver entry point itself
# (its address set once from C), called with values prepared beforehand. A
# binding's time less this floor's is what the binding adds, the driver's
# cost in a Python process (colder caches than C's tight loop) included in both.

ctypedef int (*ctx_get_current_fn)(void**) noexcept nogil
ctypedef int (*device_get_fn)(int*, int) noexcept nogil
ctypedef int (*device_get_attribute_fn)(int*, int, int) noexcept nogil

cdef ctx_get_current_fn _ctx_get_current = NULL
cdef device_get_fn _device_get = NULL
cdef device_get_attribute_fn _device_get_attribute = NULL
cdef int _attribute = 0
cdef int _device = 0


def set_simple_entry_points(size_t ctx_get_current, size_t device_get, size_t device_get_attribute,
                            int attribute, int device):
    global _ctx_get_current, _device_get, _device_get_attribute, _attribute, _device
    _ctx_get_current = <ctx_get_current_fn>ctx_get_current
    _device_get = <device_get_fn>device_get
    _device_get_attribute = <device_get_attribute_fn>device_get_attribute
    _attribute = attribute
    _device = device


def cuCtxGetCurrent():
    cdef void* ctx
    with nogil:
        _ctx_get_current(&ctx)
    return (_status, _value)


def cuDeviceGet(a):
    cdef int d
    with nogil:
        _device_get(&d, _device)
    return (_status, _value)


def cuDeviceGetAttribute(a, b):
    cdef int v
    with nogil:
        _device_get_attribute(&v, _attribute, _device)
    return (_status, _value)


# The floors of StridedMemoryView.from_any_interface: what the producer's
# export costs a consumer that does nothing else with it, behind a Python
# call. dlpack_exchange: the tensor of the producer type's DLPack exchange
# table (type(obj).__dlpack_c_exchange_api__, PyTorch's), made and deleted.
# dlpack_capsule: obj.__dlpack_device__() and obj.__dlpack__(stream=...,
# max_version=(1, 0)), the capsule dropped unconsumed (its deleter runs).

cdef extern from *:
    """
    typedef struct { unsigned int major, minor; } floor_dlpack_version;
    typedef struct floor_dlpack_header {
        floor_dlpack_version version;
        struct floor_dlpack_header* prev_api;
    } floor_dlpack_header;
    typedef struct floor_dlpack_managed {
        floor_dlpack_version version;
        void* manager_ctx;
        void (*deleter)(struct floor_dlpack_managed*);
    } floor_dlpack_managed;
    typedef int (*floor_dlpack_from_py)(void*, floor_dlpack_managed**);
    typedef struct {
        floor_dlpack_header header;
        void* managed_tensor_allocator;
        floor_dlpack_from_py managed_tensor_from_py_object_no_sync;
    } floor_dlpack_exchange;
    """
    ctypedef struct floor_dlpack_version:
        unsigned int major
        unsigned int minor
    ctypedef struct floor_dlpack_header:
        floor_dlpack_version version
        floor_dlpack_header* prev_api
    ctypedef struct floor_dlpack_managed:
        void (*deleter)(floor_dlpack_managed*) noexcept
    ctypedef int (*floor_dlpack_from_py)(void*, floor_dlpack_managed**) noexcept
    ctypedef struct floor_dlpack_exchange:
        floor_dlpack_from_py managed_tensor_from_py_object_no_sync

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid

cdef floor_dlpack_exchange* _exchange = NULL


def set_dlpack_exchange(obj):
    """Takes the 1.x exchange table of type(obj); False when it has none."""
    global _exchange
    cdef floor_dlpack_header* header
    _exchange = NULL
    capsule = getattr(type(obj), "__dlpack_c_exchange_api__", None)
    if capsule is None or not PyCapsule_IsValid(capsule, b"dlpack_exchange_api"):
        return False
    header = <floor_dlpack_header*>PyCapsule_GetPointer(capsule, b"dlpack_exchange_api")
    while header != NULL and header.version.major != 1:
        header = header.prev_api
    if header == NULL or header.version.minor < 2:
        return False
    _exchange = <floor_dlpack_exchange*>header
    return _exchange.managed_tensor_from_py_object_no_sync != NULL


def dlpack_exchange(obj):
    cdef floor_dlpack_managed* managed = NULL
    if _exchange.managed_tensor_from_py_object_no_sync(<void*>obj, &managed) != 0:
        raise BufferError("the exchange table failed")
    managed.deleter(managed)


cdef tuple _max_version = (1, 0)


def dlpack_capsule(obj, stream):
    obj.__dlpack_device__()
    return obj.__dlpack__(stream=stream, max_version=_max_version)

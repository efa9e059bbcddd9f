# cython: language_level=3, binding=False
"""The least a binding can do per call, for benchmarks/side_by_side.py and
benchmarks/instruction_counts.py.

Each function takes as many arguments as the driver call it stands for and
returns a tuple as long as that call's, holding objects made beforehand (a
status alone: the tuple itself made beforehand, as a binding can return one
(SUCCESS,) tuple for every success), and the *_nogil ones release the GIL
around an empty C function, as cubind does around every call. No binding of
that call can cost less than its floor.
"""

cimport cython

cdef extern from *:
    """
    static void cubind_floor_opaque(void) { __asm__ __volatile__("" ::: "memory"); }
    """
    void cubind_floor_opaque() nogil

cdef object _status = object()
cdef object _value = object()
cdef tuple _status_alone = (_status,)


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
    return _status_alone


def ret1_2_nogil(a, b):
    with nogil:
        cubind_floor_opaque()
    return _status_alone


# The floors of cubind.core's launch and allocate + close: the driver's own
# calls (cuLaunchKernelEx; cuStreamIsCapturing, cuMemAllocFromPoolAsync and
# cuMemFreeAsync; their addresses set once from C) made with the GIL
# released, behind a Python call of the same shape as cubind.core's. A pool
# allocation asks whether its stream is capturing first, in the same release
# of the GIL, as cuda.core's and cubind's do (the driver would otherwise turn
# it into a node of the graph being captured). Nothing else is checked or
# converted: the stream, kernel and pool come as ints and the kernel's
# arguments' values are prepared beforehand, so no binding that releases the
# GIL can do less.

ctypedef int (*alloc_fn)(unsigned long long*, size_t, void*, void*) noexcept nogil
ctypedef int (*free_fn)(unsigned long long, void*) noexcept nogil
ctypedef int (*is_capturing_fn)(void*, int*) noexcept nogil

cdef alloc_fn _alloc = NULL
cdef free_fn _free = NULL
cdef is_capturing_fn _is_capturing = NULL
cdef void* _pool = NULL

# The launch floors are C functions the interpreter calls with its own
# argument array (METH_FASTCALL), as a binding's launch can be: no tuple of
# arguments is made. The stream and kernel come as ints, read as a binding
# that takes ints reads them (an int of up to two digits, as handles are, in
# place); up to 64 parameters of up to 16 bytes each are prepared once.
cdef extern from *:
    """
    #include <cuda.h>
    typedef CUresult (*cubind_floor_launch_ex_fn)(const CUlaunchConfig*, CUfunction, void**, void**);
    static cubind_floor_launch_ex_fn cubind_floor_launch_ex;
    static void cubind_floor_set_launch_ex(size_t address) { cubind_floor_launch_ex = (cubind_floor_launch_ex_fn)address; }
    static unsigned long long cubind_floor_values[128];
    static void* cubind_floor_params[64];

    static inline unsigned long long cubind_floor_u64(PyObject* o) {
    #if PY_VERSION_HEX >= 0x030C0000
      const PyLongObject* v = (const PyLongObject*)o;
      const uintptr_t tag = v->long_value.lv_tag;
      if ((tag & 3) == 0 && (tag >> 3) <= 2) {
        const digit* d = v->long_value.ob_digit;
        return (tag >> 3) == 1 ? d[0] : (((unsigned long long)d[1] << PyLong_SHIFT) | d[0]);
      }
    #else
      const Py_ssize_t size = Py_SIZE(o);
      if (size == 1 || size == 2) {
        const digit* d = ((const PyLongObject*)o)->ob_digit;
        return size == 1 ? d[0] : (((unsigned long long)d[1] << PyLong_SHIFT) | d[0]);
      }
    #endif
      return PyLong_AsUnsignedLongLong(o);
    }

    /* cuLaunchKernelEx of one block of one thread on stream, the GIL released. */
    static PyObject* cubind_floor_launch_one_block(PyObject* stream, PyObject* kernel, void** params) {
      CUlaunchConfig c;
      CUresult status;
      c.gridDimX = c.gridDimY = c.gridDimZ = 1;
      c.blockDimX = c.blockDimY = c.blockDimZ = 1;
      c.sharedMemBytes = 0;
      c.hStream = (CUstream)(uintptr_t)cubind_floor_u64(stream);
      c.attrs = NULL;
      c.numAttrs = 0;
      CUfunction f = (CUfunction)(uintptr_t)cubind_floor_u64(kernel);
      Py_BEGIN_ALLOW_THREADS
      status = cubind_floor_launch_ex(&c, f, params, NULL);
      Py_END_ALLOW_THREADS
      if (status != 0) return PyErr_Format(PyExc_RuntimeError, "cuLaunchKernelEx: %d", (int)status);
      Py_RETURN_NONE;
    }

    /* launch(stream, config, kernel, *args) */
    static PyObject* cubind_floor_launch(PyObject* self, PyObject* const* args, Py_ssize_t n) {
      (void)self;
      if (n < 3) return PyErr_Format(PyExc_TypeError, "launch takes 3 or more arguments, %zd given", n);
      return cubind_floor_launch_one_block(args[0], args[2], n > 3 ? cubind_floor_params : NULL);
    }

    /* launch_converting(stream, kinds, kernel, *args): see below. */
    #define cubind_floor_scalar_value(o) ((const char*)(o) + sizeof(PyObject))
    static PyObject* cubind_floor_launch_converting(PyObject* self, PyObject* const* args, Py_ssize_t n) {
      (void)self;
      if (n < 3 || n - 3 > 64 || !PyBytes_Check(args[1]) || PyBytes_GET_SIZE(args[1]) != n - 3)
        return PyErr_Format(PyExc_ValueError, "launch_converting takes a stream, one kind per argument, a kernel "
                            "and at most 64 arguments");
      const char* k = PyBytes_AS_STRING(args[1]);
      for (Py_ssize_t i = 0; i < n - 3; ++i) {
        unsigned long long* slot = &cubind_floor_values[2 * i];
        PyObject* a = args[3 + i];
        Py_buffer view;
        switch (k[i]) {
          case 'i': slot[0] = (unsigned long long)PyLong_AsLongLong(a); break;
          case 'f': { double d = PyFloat_AS_DOUBLE(a); memcpy(slot, &d, 8); break; }
          case '1': memcpy(slot, cubind_floor_scalar_value(a), 1); break;
          case '2': memcpy(slot, cubind_floor_scalar_value(a), 2); break;
          case '4': memcpy(slot, cubind_floor_scalar_value(a), 4); break;
          case '8': memcpy(slot, cubind_floor_scalar_value(a), 8); break;
          case 'g': memcpy(slot, cubind_floor_scalar_value(a), 16); break;
          case 'b':
            if (PyObject_GetBuffer(a, &view, PyBUF_SIMPLE) != 0) return NULL;
            memcpy(slot, view.buf, view.len <= 16 ? (size_t)view.len : 16);
            PyBuffer_Release(&view);
            break;
          default: break;
        }
      }
      return cubind_floor_launch_one_block(args[0], args[2], n > 3 ? cubind_floor_params : NULL);
    }

    static PyMethodDef cubind_floor_launch_def = {
        "launch", (PyCFunction)(void (*)(void))cubind_floor_launch, METH_FASTCALL, NULL};
    static PyMethodDef cubind_floor_launch_converting_def = {
        "launch_converting", (PyCFunction)(void (*)(void))cubind_floor_launch_converting, METH_FASTCALL, NULL};
    static PyObject* cubind_floor_make_launch(void) { return PyCFunction_New(&cubind_floor_launch_def, NULL); }
    static PyObject* cubind_floor_make_launch_converting(void) {
      return PyCFunction_New(&cubind_floor_launch_converting_def, NULL);
    }
    """
    void cubind_floor_set_launch_ex(size_t address)
    unsigned long long cubind_floor_values[128]
    void* cubind_floor_params[64]
    object cubind_floor_make_launch()
    object cubind_floor_make_launch_converting()


def set_entry_points(size_t launch_ex, size_t alloc, size_t free_, size_t pool, size_t is_capturing):
    global _alloc, _free, _pool, _is_capturing
    cubind_floor_set_launch_ex(launch_ex)
    _alloc = <alloc_fn>alloc
    _free = <free_fn>free_
    _is_capturing = <is_capturing_fn>is_capturing
    _pool = <void*>pool
    for i in range(64):
        cubind_floor_values[2 * i] = i
        cubind_floor_values[2 * i + 1] = 0
        cubind_floor_params[i] = &cubind_floor_values[2 * i]


launch = cubind_floor_make_launch()


# The least a call of a LaunchConfig made per launch can take: a C function
# called with the same keywords, which looks at none of them and returns None.
cdef extern from *:
    """
    static PyObject* cubind_floor_config(PyObject* self, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
      (void)self; (void)args; (void)n; (void)kwnames;
      Py_RETURN_NONE;
    }
    static PyMethodDef cubind_floor_config_def = {
        "config", (PyCFunction)(void (*)(void))cubind_floor_config, METH_FASTCALL | METH_KEYWORDS, NULL};
    static PyObject* cubind_floor_make_config(void) { return PyCFunction_New(&cubind_floor_config_def, NULL); }
    """
    object cubind_floor_make_config()

config = cubind_floor_make_config()



# The least a launch that passes its arguments' values can do: the launch
# floor above, with each argument's bytes copied into the parameter slots by
# the cheapest public C-API read for its kind, the kind told beforehand (one
# byte per argument in `kinds`), so nothing is looked up or checked: an int
# by PyLong_AsLongLong, a float by PyFloat_AS_DOUBLE, a NumPy numeric scalar
# by a copy of its value's bytes, which NumPy's scalar objects keep right
# after the object header (arrayscalars.h), an object that exports a buffer
# (ctypes, a NumPy structured scalar) by a PyBUF_SIMPLE export, a copy and a
# release; a Buffer is passed for free. A binding has to find each
# argument's kind as well, so none can do less.

launch_converting = cubind_floor_make_launch_converting()

cdef class FloorBuffer:
    cdef unsigned long long ptr
    cdef void* stream

    def close(self):
        cdef int status
        with nogil:
            status = _free(self.ptr, self.stream)
        if status != 0:
            raise RuntimeError(f"cuMemFreeAsync: {status}")


cdef inline int _capture_checked_alloc(unsigned long long* ptr, size_t n, void* pool, void* stream) noexcept nogil:
    # cuStreamIsCapturing, then cuMemAllocFromPoolAsync when the stream is not
    # capturing (900, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, when it is).
    cdef int capturing = 0
    cdef int status = _is_capturing(stream, &capturing)
    if status != 0:
        return status
    if capturing != 0:
        return 900
    return _alloc(ptr, n, pool, stream)


def allocate(size, *, stream):
    cdef FloorBuffer b = FloorBuffer.__new__(FloorBuffer)
    cdef size_t n = size
    cdef int status
    b.stream = <void*><size_t>stream
    with nogil:
        status = _capture_checked_alloc(&b.ptr, n, _pool, b.stream)
    if status != 0:
        raise RuntimeError(f"cuMemAllocFromPoolAsync: {status}")
    return b


def allocate_from(size, *, stream, pool):
    # allocate from another pool than the device's (a pinned or a managed
    # resource's), its handle given as an int.
    cdef FloorBuffer b = FloorBuffer.__new__(FloorBuffer)
    cdef size_t n = size
    cdef void* p = <void*><size_t>pool
    cdef int status
    b.stream = <void*><size_t>stream
    with nogil:
        status = _capture_checked_alloc(&b.ptr, n, p, b.stream)
    if status != 0:
        raise RuntimeError(f"cuMemAllocFromPoolAsync: {status}")
    return b


# The least an allocate + close with cuda.core's API can do: a method of a
# resource object whose pool and stream handle are set beforehand (as the
# converting floor is told its kinds), returning an object that holds the
# address and, as a Buffer must, its resource (Buffer.memory_resource; a pool
# lives as long as its buffers) and its stream (close() frees on it). An
# object holding others is tracked by the cyclic garbage collector, as it
# must be: either may refer back to it. Buffers come from a free list, as
# cubind's do. side_by_side.py's "holding floor".
@cython.freelist(16)
cdef class HeldBuffer:
    cdef unsigned long long ptr
    cdef void* handle
    cdef object mr
    cdef object stream

    def close(self):
        cdef int status
        with nogil:
            status = _free(self.ptr, self.handle)
        if status != 0:
            raise RuntimeError(f"cuMemFreeAsync: {status}")
        self.mr = None
        self.stream = None


cdef class HoldingResource:
    cdef void* pool
    cdef void* handle

    def __init__(self, size_t pool, size_t stream):
        self.pool = <void*>pool
        self.handle = <void*>stream

    @cython.binding(True)
    def allocate(self, size, *, stream):
        cdef HeldBuffer b = HeldBuffer.__new__(HeldBuffer)
        cdef size_t n = size
        cdef int status
        b.handle = self.handle
        with nogil:
            status = _capture_checked_alloc(&b.ptr, n, self.pool, b.handle)
        if status != 0:
            raise RuntimeError(f"cuMemAllocFromPoolAsync: {status}")
        b.mr = self
        b.stream = stream
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



# cuStreamQuery, cuEventRecord and cuPointerGetAttribute the same way: the
# stream, event and pointer are set once (set_handle_entry_points) and the
# Python arguments, of the binding call's shape, are not read.
ctypedef int (*stream_query_fn)(void*) noexcept nogil
ctypedef int (*event_record2_fn)(void*, void*) noexcept nogil
ctypedef int (*pointer_get_attribute_fn)(void*, int, unsigned long long) noexcept nogil

cdef stream_query_fn _stream_query = NULL
cdef event_record2_fn _event_record2 = NULL
cdef pointer_get_attribute_fn _pointer_get_attribute = NULL
cdef void* _h_stream = NULL
cdef void* _h_event = NULL
cdef unsigned long long _h_pointer = 0
cdef int _pointer_attribute = 0


def set_handle_entry_points(size_t stream_query, size_t event_record, size_t pointer_get_attribute,
                            size_t stream, size_t event, unsigned long long pointer, int pointer_attribute):
    global _stream_query, _event_record2, _pointer_get_attribute, _h_stream, _h_event, _h_pointer
    global _pointer_attribute
    _stream_query = <stream_query_fn>stream_query
    _event_record2 = <event_record2_fn>event_record
    _pointer_get_attribute = <pointer_get_attribute_fn>pointer_get_attribute
    _h_stream = <void*>stream
    _h_event = <void*>event
    _h_pointer = pointer
    _pointer_attribute = pointer_attribute


def cuStreamQuery(s):
    with nogil:
        _stream_query(_h_stream)
    return _status_alone


def cuEventRecord(e, s):
    with nogil:
        _event_record2(_h_event, _h_stream)
    return _status_alone


def cuPointerGetAttribute(a, p):
    cdef unsigned long long data[4]
    with nogil:
        _pointer_get_attribute(data, _pointer_attribute, _h_pointer)
    return (_status, _value)

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


# The floors of object life cycles and of cubind.bindings' cuLaunchKernel:
# the driver's calls (addresses set once by name), the GIL released around
# each, behind Python calls of the shapes users write. Nothing is checked.

ctypedef int (*ctx_set_current_fn)(void*) noexcept nogil
ctypedef int (*stream_create_fn)(void**, unsigned int, int) noexcept nogil
ctypedef int (*handle_fn)(void*) noexcept nogil
ctypedef int (*event_create_fn)(void**, unsigned int) noexcept nogil
ctypedef int (*event_record_fn)(void*, void*) noexcept nogil
ctypedef int (*launch_kernel_fn)(void*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                                 unsigned int, unsigned int, void*, void**, void**) noexcept nogil

cdef ctx_set_current_fn _ctx_set_current = NULL
cdef stream_create_fn _stream_create = NULL
cdef handle_fn _stream_destroy = NULL
cdef event_create_fn _event_create = NULL
cdef handle_fn _event_destroy = NULL
cdef event_record_fn _event_record = NULL
cdef launch_kernel_fn _launch_kernel = NULL
cdef void* _context = NULL


def set_life_cycle_entry_points(size_t ctx_set_current, size_t context, size_t stream_create, size_t stream_destroy,
                                size_t event_create, size_t event_destroy, size_t event_record, size_t launch_kernel):
    global _ctx_set_current, _context, _stream_create, _stream_destroy, _event_create, _event_destroy
    global _event_record, _launch_kernel
    _ctx_set_current = <ctx_set_current_fn>ctx_set_current
    _context = <void*>context
    _stream_create = <stream_create_fn>stream_create
    _stream_destroy = <handle_fn>stream_destroy
    _event_create = <event_create_fn>event_create
    _event_destroy = <handle_fn>event_destroy
    _event_record = <event_record_fn>event_record
    _launch_kernel = <launch_kernel_fn>launch_kernel


cdef inline int _ok(int status, str what) except -1:
    if status != 0:
        raise RuntimeError(f"{what}: {status}")
    return 0


def lookup(a):
    """Device(n)'s floor: a call of one argument returning a prepared object."""
    return _value


def set_current():
    cdef int status
    with nogil:
        status = _ctx_set_current(_context)
    _ok(status, "cuCtxSetCurrent")


cdef class FloorStream:
    cdef void* handle

    def close(self):
        cdef int status
        with nogil:
            status = _stream_destroy(self.handle)
        _ok(status, "cuStreamDestroy")


def create_stream():
    """A non-blocking stream of priority 0, as create_stream() makes."""
    cdef FloorStream s = FloorStream.__new__(FloorStream)
    cdef int status
    with nogil:
        status = _stream_create(&s.handle, 1, 0)
    _ok(status, "cuStreamCreateWithPriority")
    return s


cdef class FloorEvent:
    cdef void* handle

    def close(self):
        cdef int status
        if self.handle != NULL:
            with nogil:
                status = _event_destroy(self.handle)
            self.handle = NULL
            _ok(status, "cuEventDestroy")

    def __dealloc__(self):
        if self.handle != NULL:
            with nogil:
                _event_destroy(self.handle)


def create_event():
    """An event without timing, as create_event() makes."""
    cdef FloorEvent e = FloorEvent.__new__(FloorEvent)
    cdef int status
    with nogil:
        status = _event_create(&e.handle, 2)
    _ok(status, "cuEventCreate")
    return e


def record(stream):
    """Stream.record()'s floor: a new event without timing, recorded."""
    cdef FloorEvent e = FloorEvent.__new__(FloorEvent)
    cdef void* s = <void*><size_t>stream
    cdef int status
    with nogil:
        status = _event_create(&e.handle, 2)
        if status == 0:
            status = _event_record(e.handle, s)
    _ok(status, "cuEventCreate, cuEventRecord")
    return e


def cu_launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
    """cuLaunchKernel's floor: f and stream as ints, the grid and block of
    one thread, the prepared parameters (or none for params=None)."""
    cdef int status
    cdef void* fn = <void*><size_t>f
    cdef void* s = <void*><size_t>stream
    cdef void** p = NULL if params is None else cubind_floor_params
    with nogil:
        status = _launch_kernel(fn, 1, 1, 1, 1, 1, 1, 0, s, p, NULL)
    _ok(status, "cuLaunchKernel")
    return _status_alone

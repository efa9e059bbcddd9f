# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# LaunchConfig and launch: the config rendered once per LaunchConfig
# (cubind::render_launch_config), the kernel's parameter layout read once
# (cubind::parameters_for_launch), then per call the driver's
# cuLaunchKernelEx, made as cubind::launch_rendered makes it: by launch
# itself (_launch_fast.hpp) on its usual way, by _launch_general otherwise.

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.object cimport Py_TYPE, PyTypeObject
from cpython.ref cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.stdint cimport uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

cimport cython

import sys


cdef extern from "Python.h":
    PyTypeObject PyLong_Type
    PyTypeObject PyBool_Type
    PyTypeObject PyFloat_Type
    bint PyObject_TypeCheck(object o, PyTypeObject* t)


cimport cubind.core._cpp as cpp
from cubind.core._cpp cimport translate
from cubind.core._memory._buffer cimport Buffer
from cubind.core._module cimport ArgPlan, Kernel
from cubind.core._stream cimport Stream, _stream_handle


cdef tuple _dim3(value, str field, bint optional_):
    if type(value) is int and 1 <= <object>value <= 0xFFFFFFFF:
        return (value, 1, 1)   # the common case, as the general way below makes it
    if value is None and optional_:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        dims = (value,)
    elif isinstance(value, tuple) and 1 <= len(value) <= 3 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        dims = value
    elif isinstance(value, tuple):
        raise ValueError(f"LaunchConfig.{field} must be an int, or a tuple with up to 3 ints (got tuple with length {len(value)})")
    else:
        raise ValueError(f"LaunchConfig.{field} must be an int, or a tuple with up to 3 ints (got {type(value)})")
    for v in dims:
        if v < 1:
            raise ValueError(f"LaunchConfig.{field} value must be >= 1 (got {v})")
        if v > 0xFFFFFFFF:
            raise ValueError(f"LaunchConfig.{field} value {v} does not fit in 32 bits")
    return tuple(dims) + (1,) * (3 - len(dims))


cdef tuple _blocks_of_clusters(tuple grid, tuple cluster):
    # grid clusters of cluster blocks each, per dimension.
    blocks = tuple(g * c for g, c in zip(grid, cluster))
    for g, c, b in zip(grid, cluster, blocks):
        if b > 0xFFFFFFFF:
            raise ValueError(f"LaunchConfig: grid {grid} of clusters {cluster} is {blocks} blocks, and {g} * {c} "
                             "does not fit in 32 bits")
    return blocks


cdef class LaunchConfig:
    """LaunchConfig(grid=None, cluster=None, block=None, shmem_size=None, is_cooperative=False, programmatic_stream_serialization=False)
--

How to launch a kernel: grid and block (threads per block), each an int
    or a tuple of up to 3 ints; cluster (blocks per cluster, sm_90+);
    shmem_size (dynamic shared memory bytes per block); is_cooperative. As in
    cuda.core, grid counts blocks without a cluster and clusters with one:
    grid=4, cluster=2 launches 8 blocks in 4 clusters of 2."""

    # _cpp in the driver's form, rendered at the first launch (so a config
    # the driver cannot take fails there, as it always has) and reused.

    def __init__(self, grid=None, cluster=None, block=None, shmem_size=None, is_cooperative=False,
                 programmatic_stream_serialization=False):
        if self._initialized:
            # Initialized again: no longer what it was made from, nor rendered.
            _forget_launch_config(self)
            self._rendered = False
        self.grid = _dim3(grid, "grid", False)
        self.cluster = _dim3(cluster, "cluster", True)
        self.block = _dim3(block, "block", False)
        if shmem_size is None:
            shmem_size = 0
        if not isinstance(shmem_size, int) or isinstance(shmem_size, bool):
            raise TypeError(f"LaunchConfig.shmem_size must be an int, not {type(shmem_size).__name__}")
        if not 0 <= shmem_size <= 0xFFFFFFFF:
            raise ValueError(f"LaunchConfig.shmem_size is {shmem_size}; it must be within 0 .. 2**32 - 1 bytes")
        if programmatic_stream_serialization:
            raise NotImplementedError("LaunchConfig: programmatic_stream_serialization is not supported yet")
        self.shmem_size = shmem_size
        self.is_cooperative = bool(is_cooperative)
        self.programmatic_stream_serialization = False
        self._cpp = cpp.LaunchConfig()
        # The core counts the grid in blocks.
        blocks = self.grid if self.cluster is None else _blocks_of_clusters(self.grid, self.cluster)
        self._cpp.grid = cpp.Dim3(blocks[0], blocks[1], blocks[2])
        self._cpp.block = cpp.Dim3(self.block[0], self.block[1], self.block[2])
        self._cpp.shared_memory_bytes = shmem_size
        self._cpp.cooperative = self.is_cooperative
        if self.cluster is not None:
            self._cpp.cluster = cpp.Dim3(self.cluster[0], self.cluster[1], self.cluster[2])
        else:
            self._cpp.cluster.reset()
        self._initialized = True

    def __repr__(self):
        return (f"LaunchConfig(grid={self.grid}, cluster={self.cluster}, block={self.block}, "
                f"shmem_size={self.shmem_size}, is_cooperative={self.is_cooperative}, "
                f"programmatic_stream_serialization={self.programmatic_stream_serialization})")

    def __eq__(self, other):
        if not isinstance(other, LaunchConfig):
            return NotImplemented
        return repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


cdef extern from "_launch_config_call.hpp" namespace "cubind_core":
    void _install_launch_config_call "cubind_core::install_launch_config_call"(object cls)
    void _forget_launch_config "cubind_core::forget_launch_config"(object config)


# LaunchConfig(grid=g, block=b[, shmem_size=s]) with exact ints gives the
# config made last for those values (it is immutable); any other call is the
# class's usual one.
_install_launch_config_call(LaunchConfig)


cdef LaunchConfig _launch_config(config):
    cdef LaunchConfig c
    if type(config) is not LaunchConfig and not isinstance(config, LaunchConfig):
        raise TypeError(f"config must be a LaunchConfig, not {type(config).__name__}")
    c = <LaunchConfig>config
    if not c._rendered:
        cpp.render_launch_config(c._cpp, NULL, c._native)
        c._rendered = True
    return c


cdef extern from "_launch_args.hpp" namespace "cubind_core":
    bint _pack_buffer_fast "cubind_core::pack_buffer"(PyObject* o, size_t size, char* slot) noexcept
    bint _pack_simple "cubind_core::pack_simple"(PyObject* o, size_t size, char* slot) noexcept
    bint _exports_buffer "cubind_core::exports_buffer"(PyTypeObject* t) noexcept
    bint _remembered "cubind_core::remembered"(PyTypeObject* t) noexcept
    Py_ssize_t _pack_arguments "cubind_core::pack_arguments"(PyObject* const* args, Py_ssize_t i, Py_ssize_t n,
                                                             const size_t* sizes, char*& storage,
                                                             void** pointers) noexcept
    void _remember_buffer_type "cubind_core::remember_buffer_type"(PyObject* o, PyTypeObject* t, bint numpy_number,
                                                                   bint cdata, bint numpy_void) noexcept


# An argument _pack_arguments stopped at, of a type other than int, bool,
# float and Buffer (whose refusals are the general way's to convert or
# explain): the bytes of an object with the buffer protocol (NumPy and ctypes
# scalars, structs by value), its type remembered for the next launches.
# False when arg has none, or is one that the general way (_pack) refuses or
# takes by another rule, which it then converts or explains: what this packs
# is byte for byte what _pack packs.
cdef bint _pack_buffer_of(PyObject* arg, PyTypeObject* t, size_t size, char* slot) noexcept:
    # A remembered type is packed by _pack_arguments, which stopped at arg
    # because its bytes do not fit the parameter: the general way explains.
    if _remembered(t):
        return False
    if not _exports_buffer(t) or _registered_type(t) >= 0 or PyObject_TypeCheck(<object>arg, <PyTypeObject*>Buffer):
        # A Buffer subclass is its address, not its bytes, as in _pack.
        return False
    # A NumPy struct through the export _pack_struct makes, anything else
    # through the one memoryview makes, as _pack takes them.
    cdef bint numpy_void = _is_numpy_void(<type>t)
    if not (_pack_simple(arg, size, slot) if numpy_void else _pack_buffer_fast(arg, size, slot)):
        return False
    _remember_buffer_type(arg, t, _is_numpy_number(<type>t), _is_ctypes_data(<type>t), numpy_void)
    return True


cdef bint _is_numpy_number(type t) noexcept:
    # One of NumPy's own numeric scalar types (not a subclass made elsewhere).
    try:
        numpy = sys.modules.get("numpy")
        return (numpy is not None and t.__module__ == "numpy"
                and issubclass(t, (numpy.number, numpy.bool_)))
    except BaseException:
        return False


cdef bint _is_numpy_void(type t) noexcept:
    # NumPy's void scalar type (a structured scalar: np.void, np.record).
    try:
        numpy = sys.modules.get("numpy")
        return numpy is not None and t.__module__ == "numpy" and issubclass(t, numpy.void)
    except BaseException:
        return False


cdef bint _is_ctypes_data(type t) noexcept:
    # A ctypes data type: _ctypes._CData is a base of every one (scalars,
    # Structures, Unions, arrays, pointers). Its objects exist only once
    # ctypes is imported.
    try:
        ctypes = sys.modules.get("ctypes")
        return ctypes is not None and issubclass(t, ctypes.c_int.__mro__[-2])
    except BaseException:
        return False


# An int fits a parameter of 1, 2, 4 or 8 bytes as a signed or an unsigned
# value of that size; checked in C, as this runs for every argument.
cdef inline int _pack_int(object value, size_t size, char* slot, Py_ssize_t index, object kernel) except -1:
    cdef int overflow = 0
    cdef long long v
    cdef unsigned long long u
    cdef int bits
    if size != 1 and size != 2 and size != 4 and size != 8:
        return _argument_error(kernel, index, size, value, "cannot take an int")
    v = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow == 0:
        if size < 8:
            bits = 8 * <int>size
            if v < -((<long long>1) << (bits - 1)) or v >= ((<long long>1) << bits):
                return _argument_error(kernel, index, size, value, "is out of range")
        # Little-endian: the low `size` bytes are the value in that size.
        memcpy(slot, &v, size)
        return 0
    if overflow > 0 and size == 8 and value < (1 << 64):
        u = value
        memcpy(slot, &u, 8)
        return 0
    return _argument_error(kernel, index, size, value, "is out of range")


cdef int _pack_struct(object arg, size_t size, char* slot, Py_ssize_t index, object kernel) except -1:
    # A NumPy struct (np.void, np.record): its bytes as they are, through an
    # export without a format string, as launch's usual way takes them
    # (pack_simple; a dtype NumPy cannot describe in a format, datetime fields
    # say, is no obstacle to either). Where it does not fit, the export again,
    # for the exporter's error or the size to name.
    cdef Py_buffer view
    cdef Py_ssize_t length
    if _pack_simple(<PyObject*>arg, size, slot):
        return 0
    PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)
    length = view.len
    PyBuffer_Release(&view)
    return _argument_error(kernel, index, size, arg, f"differs in size ({length} bytes)")


cdef int _argument_error(object kernel, Py_ssize_t index, size_t size, value, str why) except -1:
    # A value of a type the parameter cannot take is a TypeError; one of the
    # right kind but out of range or of another size, a ValueError. kernel is
    # the Kernel (its name is read only here, off the launch path) or a name.
    if isinstance(kernel, Kernel):
        kernel = kernel.name
    raise (TypeError if why.startswith("cannot take") else ValueError)(
        f"launch: argument {index} of kernel '{kernel}' ({size}-byte parameter) {why}: "
        f"{type(value).__name__} {value!r}"
    )


# The types registered by _accept_argument_type (TensorMapDescriptor, GraphCondition).
cdef PyTypeObject* _argument_types[2]
cdef ArgumentBytes _argument_bytes[2]
cdef int _argument_type_count = 0


cdef int _accept_argument_type(type cls, ArgumentBytes bytes_of) except -1:
    global _argument_type_count
    if _argument_type_count == 2:
        raise RuntimeError(f"launch: no room to register {cls.__name__} as a kernel argument type")
    _argument_bytes[_argument_type_count] = bytes_of
    _argument_types[_argument_type_count] = <PyTypeObject*>cls
    _argument_type_count += 1
    return 0


cdef inline int _registered_type(PyTypeObject* t) noexcept:
    # Its index in _argument_types, or -1.
    if _argument_type_count > 0 and t == _argument_types[0]:
        return 0
    if _argument_type_count > 1 and t == _argument_types[1]:
        return 1
    return -1


cdef int _pack(object arg, size_t size, char* slot, Py_ssize_t index, object kernel) except -1:
    # One argument into its parameter's bytes: Buffers as their address, ints
    # and floats converted to the parameter's size, anything with the buffer
    # protocol (NumPy and ctypes scalars, structs, bytes) copied as it is.
    cdef double d
    cdef float f
    cdef const unsigned char[::1] raw
    cdef type t = type(arg)
    if t is Buffer:
        if size != 8:
            _argument_error(kernel, index, size, arg, "cannot take a Buffer (an 8-byte pointer)")
        memcpy(slot, &(<Buffer>arg)._ptr, 8)
    elif t is int or t is bool:
        _pack_int(arg, size, slot, index, kernel)
    elif _registered_type(<PyTypeObject*>t) >= 0:
        memcpy(slot, _argument_bytes[_registered_type(<PyTypeObject*>t)](arg, size, index, kernel), size)
    elif t is float:
        if size == 8:
            d = arg
            memcpy(slot, &d, 8)
        elif size == 4:
            f = arg
            memcpy(slot, &f, 4)
        else:
            _argument_error(kernel, index, size, arg, "cannot take a float")
    elif isinstance(arg, Buffer):
        return _pack(int((<Buffer>arg)._ptr), size, slot, index, kernel)
    elif _is_numpy_void(t):
        _pack_struct(arg, size, slot, index, kernel)
    else:
        try:
            raw = memoryview(arg).cast("B")
        except TypeError:
            if isinstance(arg, int):
                return _pack(int(arg), size, slot, index, kernel)
            if isinstance(arg, float):
                return _pack(float(arg), size, slot, index, kernel)
            ptr = getattr(arg, "__cuda_array_interface__", None)
            if ptr is not None:
                return _pack(int(ptr["data"][0]), size, slot, index, kernel)
            _argument_error(kernel, index, size, arg, "cannot take this type")
        if <size_t>raw.shape[0] != size:
            _argument_error(kernel, index, size, arg, f"differs in size ({raw.shape[0]} bytes)")
        if size:
            memcpy(slot, &raw[0], size)
    return 0


# launch() itself is _launch_fast.hpp's C function, which takes the usual
# call on its own and gives every other to this one, with the same arguments.
@cython.binding(False)
def _launch_general(stream, config, kernel, *kernel_args):
    """launch() where its usual way does not apply: a stream of another
    type, a LaunchConfig not yet rendered, a kernel whose parameters are not
    yet known, an argument of a kind launch has not seen, keywords."""
    cdef cpp.CUstream handle
    cdef LaunchConfig c
    cdef Kernel k
    cdef Py_ssize_t n = len(kernel_args)
    cdef Py_ssize_t i
    cdef size_t size
    # Up to 128 parameters in up to 128 8-byte slots without an allocation
    # (the stack arrays are not initialised: their size costs nothing).
    cdef uint64_t small[128]
    cdef void* small_pointers[128]
    cdef vector[uint64_t] large
    cdef vector[void*] large_pointers
    cdef char* storage
    cdef void** pointers
    cdef PyObject* item
    cdef PyTypeObject* t
    cdef int registered
    # A rendered LaunchConfig, the usual case, read in place (as an open Stream's handle is).
    handle = _stream_handle(stream)
    if type(config) is LaunchConfig and (<LaunchConfig>config)._rendered:
        c = <LaunchConfig>config
    else:
        c = _launch_config(config)
    if type(kernel) is not Kernel and not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a Kernel, not {type(kernel).__name__}")
    k = <Kernel>kernel
    if not k._have_sizes:
        k._load_sizes(handle)
    if <size_t>n != k._sizes.size():
        raise TypeError(
            f"launch: kernel '{k.name}' takes {k._sizes.size()} arguments, {n} given"
        )
    if k._slots <= 128 and n <= 128:
        storage = <char*>small
        pointers = small_pointers
    else:
        large.resize(k._slots)
        large_pointers.resize(n)
        storage = <char*>large.data()
        pointers = large_pointers.data()
    i = 0
    while True:
        # As many arguments as _pack_arguments packs, then one by _pack, which
        # converts or explains.
        i = _pack_arguments(_tuple_items(kernel_args), i, n, k._sizes.data(), storage, pointers)
        if i == n:
            break
        size = k._sizes[i]
        pointers[i] = storage
        item = PyTuple_GET_ITEM(kernel_args, i)
        t = Py_TYPE(<object>item)
        if (t == &PyLong_Type or t == &PyBool_Type or t == &PyFloat_Type or t == <PyTypeObject*>Buffer
                or not _pack_buffer_of(item, t, size, storage)):
            registered = _registered_type(t)
            if registered >= 0:
                # Passed where it lies: a CUtensorMap must stay 64-byte aligned.
                pointers[i] = _argument_bytes[registered](<object>item, size, i, k)
            else:
                _pack(<object>item, size, storage, i, k)
        storage += ((size + 7) >> 3) << 3
        i += 1
    with nogil:
        cpp.launch_rendered(cpp.StreamRef(handle), c._native, k._cpp, pointers)
    if launch_layout.launch_ex == NULL:
        _remember_launch_entry()
    # The kernel's argument plan, from these arguments (each of a type now
    # remembered), for its launches the usual way; then the handle, which
    # opens that way to the kernel.
    _make_plan(k._plan_count, k._plan, _tuple_items(kernel_args), n, k._sizes.data())
    k._handle = k._cpp.handle()


cdef extern from "_launch_fast.hpp" namespace "cubind_core":
    cdef cppclass LaunchLayout:
        void* launch_ex
        PyTypeObject* buffer_type
        PyTypeObject* stream_type
        PyTypeObject* config_type
        PyTypeObject* kernel_type
        unsigned char buffer_address, stream_handle, stream_closed, config_rendered, config_native
        unsigned char kernel_handle, kernel_slots, kernel_sizes
    LaunchLayout launch_layout
    PyObject* const* _tuple_items "cubind_core::tuple_items"(object t)
    object _make_launch_function "cubind_core::make_launch_function"(object general, object module_name)
    void _remember_launch_entry "cubind_core::remember_launch_entry"() except +translate
    void _make_plan "cubind_core::make_plan"(signed char& count, ArgPlan& plan, PyObject* const* args, Py_ssize_t n,
                                             const size_t* sizes)


cdef unsigned char _offset(void* field, object o, str name) except? 0:
    # A field's offset in its object, as launch_layout keeps it (one byte).
    cdef Py_ssize_t offset = <char*>field - <char*><PyObject*>o
    if not 0 < offset < 256:
        raise ImportError(f"cubind.core._launch: {name} lies {offset} bytes into its object; launch keeps 1 to 255")
    return <unsigned char>offset


launch_layout.buffer_type = <PyTypeObject*>Buffer
launch_layout.stream_type = <PyTypeObject*>Stream
launch_layout.config_type = <PyTypeObject*>LaunchConfig
launch_layout.kernel_type = <PyTypeObject*>Kernel
# The fields' addresses in an object at None's address (no object is read).
cdef object _no_object = None
launch_layout.buffer_address = _offset(&(<Buffer>_no_object)._ptr, _no_object, "Buffer._ptr")
launch_layout.stream_handle = _offset(&(<Stream>_no_object)._handle, _no_object, "Stream._handle")
launch_layout.stream_closed = _offset(&(<Stream>_no_object)._closed, _no_object, "Stream._closed")
launch_layout.config_rendered = _offset(&(<LaunchConfig>_no_object)._rendered, _no_object, "LaunchConfig._rendered")
launch_layout.config_native = _offset(&(<LaunchConfig>_no_object)._native, _no_object, "LaunchConfig._native")
launch_layout.kernel_handle = _offset(&(<Kernel>_no_object)._handle, _no_object, "Kernel._handle")
launch_layout.kernel_slots = _offset(&(<Kernel>_no_object)._slots, _no_object, "Kernel._slots")
launch_layout.kernel_sizes = _offset(&(<Kernel>_no_object)._sizes, _no_object, "Kernel._sizes")
# Where launch finds a Kernel's argument plan: beside its handle and sizes.
if (<char*>&(<Kernel>_no_object)._plan_count != <char*>&(<Kernel>_no_object)._handle - 4
        or <char*>&(<Kernel>_no_object)._plan != <char*>&(<Kernel>_no_object)._sizes + sizeof(vector[size_t])):
    raise ImportError("cubind.core._launch: Kernel._plan_count and Kernel._plan do not lie where launch reads them")
launch = _make_launch_function(_launch_general, __name__)


def _plan_count(Kernel kernel):
    """How many arguments the kernel's argument plan covers, which its
    launches the usual way follow; -1 where it has none yet, -2 where it has
    none, the arguments looked at not planned or the plan dropped (for
    tests)."""
    return kernel._plan_count


def _packed_arguments(sizes, args, kernel_name="kernel"):
    """The bytes launch would pass for args to parameters of these sizes: the
    conversion launch makes, for tests that have no GPU."""
    out = []
    cdef uint64_t slot[16]
    if len(sizes) != len(args):
        raise TypeError(f"{len(sizes)} sizes, {len(args)} arguments")
    for i, (size, arg) in enumerate(zip(sizes, args)):
        if size > 128:
            raise ValueError("parameters of at most 128 bytes")
        _pack(arg, size, <char*>slot, i, kernel_name)
        out.append((<char*>slot)[:size])
    return out

# The declarations of cubind.bindings' support machinery: one extension
# module (_machinery.pyx), its code in one .pxi per concern, so that the
# generated modules load one library and import one table of C functions.
# They cimport it through the package: `from cubind.bindings cimport _support`.

# ---- conversions -----------------------------------------------------------
# Small conversions of Python arguments used by the generated code.
from cpython.long cimport PyLong_Check, PyLong_CheckExact


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object obj, int* overflow) except? -1


# The value of an int of at most one digit (|value| < 2**30), read in place:
# the common argument converts without a call into the interpreter.
cdef extern from *:
    """
    static inline int cubind_compact_int(PyObject* o, long long* out) {
    #if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject*)o)) {
            *out = (long long)PyUnstable_Long_CompactValue((PyLongObject*)o);
            return 1;
        }
    #else
        Py_ssize_t size = Py_SIZE(o);
        if (size == 0) { *out = 0; return 1; }
        if (size == 1) { *out = (long long)((PyLongObject*)o)->ob_digit[0]; return 1; }
        if (size == -1) { *out = -(long long)((PyLongObject*)o)->ob_digit[0]; return 1; }
    #endif
        return 0;
    }
    """
    bint cubind_compact_int(object o, long long* out)

# An int from an int or an object with __index__ (TypeError naming `name`).
cdef object as_int(object obj, str name)

# bytes for a const char* parameter (str is encoded as UTF-8).
cdef bytes as_bytes(object obj, str name)

# Checks that a sequence holds at least `count` items.
cdef Py_ssize_t check_count(object seq, Py_ssize_t count, str name, str count_name) except -1

# Zeroed memory for `count` items (MemoryError when it cannot be had).
cdef void* alloc_array(Py_ssize_t count, size_t itemsize) except NULL

# An address from an int, None, a handle or a struct (no buffers: nothing keeps them alive).
cdef void* plain_address(object obj, str name) except? NULL

# bytes up to the first NUL among n.
cdef bytes c_string(const char* buf, Py_ssize_t n)

# Checks a list argument against its count: a list or tuple (not bytes or
# str) of at least `count` items; more are allowed, as the library reads
# only `count`. Returns its length.
cdef Py_ssize_t check_list(object seq, Py_ssize_t count, str name, str count_name, str what) except -1

# Integer arguments of nbytes bytes, converted as cuda.bindings converts them
# (int, __index__, float truncated; OverflowError out of range), the errors
# naming the parameter. The inline part reads an int of one digit in range,
# and is small enough that the compiler inlines every use of it in a call of
# many arguments; the *_slow functions take every other value.
cdef long long signed_slow(object obj, int nbytes, str name) except? -1
cdef unsigned long long unsigned_slow(object obj, int nbytes, str name) except? <unsigned long long>-1


cdef inline long long signed_arg(object obj, int nbytes, str name) except? -1:
    cdef long long v
    if (PyLong_CheckExact(obj) and cubind_compact_int(obj, &v)
            and (nbytes >= 4 or (-(1LL << (8 * nbytes - 1)) <= v < (1LL << (8 * nbytes - 1))))):
        return v
    return signed_slow(obj, nbytes, name)


cdef inline unsigned long long unsigned_arg(object obj, int nbytes, str name) except? <unsigned long long>-1:
    cdef long long v
    if (PyLong_CheckExact(obj) and cubind_compact_int(obj, &v) and v >= 0
            and (nbytes >= 4 or v < (1LL << (8 * nbytes)))):
        return <unsigned long long>v
    return unsigned_slow(obj, nbytes, name)


# An enum argument: a member (an int subclass) or an int of one digit is read
# in place; anything else goes through as_int (TypeError naming `name`).
cdef inline long long enum_arg(object obj, str name) except? -1:
    cdef long long v
    if PyLong_Check(obj) and cubind_compact_int(obj, &v):
        return v
    return <long long>as_int(obj, name)


# ---- handles ---------------------------------------------------------------
# Base classes of the generated handle and struct classes, and the conversions
# of Python arguments to the handles and structs they stand for.

from cpython.object cimport PyObject

# Whether `o` has no reference but its module's spare slot, so that a call
# may hand the object out again with a new value (the generated modules reuse
# handle and value objects so). Never with free threading, where another
# thread may be handing it out too. Inline in each module that cimports it.
cdef extern from *:
    """
    static inline int cubind_only_spare(PyObject* o) {
    #ifdef Py_GIL_DISABLED
        (void)o;
        return 0;
    #else
        return Py_REFCNT(o) == 1;
    #endif
    }
    """
    bint only_spare "cubind_only_spare"(PyObject* o) noexcept nogil

# (first, second) for a call to return: the module's spare pair (*slot),
# filled again in place while nothing but *slot refers to it, as CPython's
# zip() reuses its result tuple (its hash cache reset, tracked by the
# collector again); else a new pair, which becomes the spare. The spare keeps
# the last values alive: only for values that keep nothing else alive (a
# number, an enum member, a typed value). Never with free threading.
cdef extern from *:
    """
    static inline PyObject* cubind_spare_pair(PyObject** slot, PyObject* first, PyObject* second) {
    #ifdef Py_GIL_DISABLED
        (void)slot;
        return PyTuple_Pack(2, first, second);
    #else
        PyObject* pair = *slot;
        if (pair != NULL && Py_REFCNT(pair) == 1) {
            PyObject* old_first = PyTuple_GET_ITEM(pair, 0);
            PyObject* old_second = PyTuple_GET_ITEM(pair, 1);
            Py_INCREF(pair);
            Py_INCREF(first);
            Py_INCREF(second);
            PyTuple_SET_ITEM(pair, 0, first);
            PyTuple_SET_ITEM(pair, 1, second);
        #if PY_VERSION_HEX >= 0x030E0000
            ((PyTupleObject*)pair)->ob_hash = -1;
        #endif
            if (!PyObject_GC_IsTracked(pair)) PyObject_GC_Track(pair);
            // Last: a finalizer run from here that calls back in finds the pair taken.
            Py_DECREF(old_first);
            Py_DECREF(old_second);
            return pair;
        }
        pair = PyTuple_Pack(2, first, second);
        if (pair == NULL) return NULL;
        Py_INCREF(pair);
        Py_XSETREF(*slot, pair);
        return pair;
    #endif
    }
    """
    object spare_pair "cubind_spare_pair"(PyObject** slot, object first, object second)

cdef class Handle:
    # An opaque CUDA handle (a pointer). Subclasses only give it a name.
    cdef void* _value


cdef class Struct:
    # A C struct or union, in its own storage or in memory owned elsewhere.
    cdef void* _ptr
    cdef bint _own        # _ptr is ours (alloc_struct) and freed with the object
    cdef object _owner    # keeps the memory _ptr points into alive
    cdef dict _refs       # objects whose memory pointer fields refer to


# A handle object of class `cls` holding `value`.
cdef object new_handle(type cls, void* value)

# Raises ValueError for a handle `obj` (parameter `name`) of a type the raw
# layer records that `made_by` did not make in this process, or that
# `destroyed_by` has destroyed: the library would read memory that is no handle.
cdef int not_live(object obj, str name, str type_name, str made_by, str destroyed_by) except -1

# Sets the handle an object holds (destroy functions zero it).
cdef void set_handle(Handle h, void* value) noexcept

# Handle value of `obj` for parameter `name`: an instance of `cls`, an int or None.
# An object of exactly `cls` is read inline; handle_value_other takes the rest.
cdef void* handle_value_other(object obj, type cls, str name) except? NULL


cdef inline void* handle_value(object obj, type cls, str name) except? NULL:
    if type(obj) is cls:
        return (<Handle>obj)._value
    return handle_value_other(obj, cls, name)

# Pointer to the C struct held by `obj` (an instance of `cls`) or NULL for None.
cdef void* struct_pointer(object obj, type cls, str name) except? NULL

# The struct at `obj` (TypeError for anything else, None included).
cdef void* struct_pointer_required(object obj, type cls, str name) except NULL

# Items of a list assigned to a struct-array field (already checked to be
# structs of its type) that view the n elements of `size` bytes at `start`
# get storage of their own, holding the same bytes: assignment copies.
cdef int detach_views(object items, void* start, size_t size, Py_ssize_t n) except -1

# Zeroed, 64-byte aligned storage for a struct (MemoryError when it cannot be had).
cdef void* alloc_struct(size_t size) except NULL
cdef void free_struct(void* ptr) noexcept

# The memory a struct object `obj` of n structs of `size` bytes stands for:
# with no owner, a copy of the n structs at address in storage of its own;
# else a view of them that keeps owner alive (from_ptr, from_data,
# from_buffer and indexing of the NumPy-backed struct classes).
cdef int adopt_memory(Struct obj, size_t address, Py_ssize_t n, size_t size, object owner) except -1

# The address of the memory a buffer export of `view` (a memoryview that
# holds the export for as long as a struct viewing it lives) starts at.
cdef size_t buffer_address(object view) except? 0


# ---- enums -----------------------------------------------------------------
# The enums of one generated module: its classes are built on first use, and
# converting a C value (a status code on every call's return path) is a dict
# lookup inlined into the caller.

cdef class EnumTable:
    cdef str module
    cdef dict namespace    # the module's globals: classes are set there once built
    cdef dict specs        # name -> "doc\nNAME VALUE NAME VALUE ..."
    cdef dict prefixes     # name -> a member prefix also dropped (nvjitlink)
    cdef dict aliases      # name -> the enum it names
    cdef str status_name   # the class of the module's status codes
    cdef dict members      # name -> its class's value -> member dict, once converted
    cdef object success    # the status member for 0, once converted
    cdef tuple success_alone  # (success,): what a call that returns its status alone returns
    cdef object enum_class(self, str name)
    cdef object new_member(self, str name, long long value)
    cdef object status_member(self, long long code)
    cdef tuple status_alone_tuple(self, long long code)


# The member of enum `name` for a C value (unknown values get a member of their own).
cdef inline object enum_member(EnumTable table, str name, long long value):
    members = table.members.get(name)
    if members is not None:
        member = (<dict>members).get(value)
        if member is not None:
            return member
    return table.new_member(name, value)


# The status member for a code; success is one attribute read.
cdef inline object status(EnumTable table, long long code):
    if code == 0 and table.success is not None:
        return table.success
    return table.status_member(code)


# The result of a call that returns its status alone, (status,). Tuples are
# immutable, so every success returns the one (success,) tuple: no tuple is
# made and freed per call.
cdef inline tuple status_alone(EnumTable table, long long code):
    if code == 0 and table.success_alone is not None:
        return table.success_alone
    return table.status_alone_tuple(code)


# ---- scalars ---------------------------------------------------------------
# A scalar written or read by struct-module format character.
cdef int store_scalar(void* dst, char fmt, object v) except -1
cdef object load_scalar(const void* src, char fmt)


# ---- buffers ---------------------------------------------------------------
# Addresses of void * parameters, buffers included.
from cpython.buffer cimport Py_buffer
from cpython.long cimport PyLong_CheckExact
from libc.stdint cimport uintptr_t


# A buffer acquired for the duration of one call.
cdef struct BufferRef:
    Py_buffer view
    bint held


# Address for a void* parameter: None, an int, or an object exporting a
# contiguous buffer (then `view` holds it until release_address).
cdef void* address_other(object obj, BufferRef* ref, bint writable, str name) except? NULL


cdef inline void* address(object obj, BufferRef* ref, bint writable, str name) except? NULL:
    # None and an int of one digit (`extra=0`, the usual ones) without a call.
    cdef long long v
    if obj is None:
        ref.held = False
        return NULL
    if PyLong_CheckExact(obj) and cubind_compact_int(obj, &v) and v >= 0:
        ref.held = False
        return <void*><uintptr_t>v
    return address_other(obj, ref, writable, name)
cdef void release_address(BufferRef* ref) noexcept
cdef object sized_output(object obj, size_t n, BufferRef* ref, void** ptr, str name, str reported_by)
# A char * of n bytes (the parameter `size_name`) that the call fills: None
# (NULL), bytes (filled in place) or a writable buffer, never an int.
cdef void* caller_buffer(object obj, size_t n, BufferRef* ref, str name, str size_name) except? NULL


# ---- fields ----------------------------------------------------------------
# Fields of the struct classes: numbers, pointers, arrays, lists and text.


# Numbers as a field takes them (the generated setter tries the exact type
# first): int_field truncates floats and takes __index__; value_field also
# takes None as 0; enum_field refuses negative ints (not members); float_field
# refuses str; handle_field refuses negative and too large addresses with
# OverflowError. A str is a TypeError everywhere.
cdef object int_field(object value, str name)
cdef object value_field(object value, str name)
cdef object enum_field(object value, str name)
cdef double float_field(object value, str name) except? -1.0
cdef void* handle_field(object value, type cls, str name) except? NULL

# A number given for an address: negative refused (OverflowError), floats
# truncated if `truncate`; anything else as it is.
cdef object address_number(object value, str name, bint truncate=*)
# The address a struct's pointer field takes; buffers are kept alive by `owner`.
cdef void* field_address(object value, Struct owner, str name) except? NULL
cdef void keep(Struct owner, str name, object value)

cdef class FieldArray:
    cdef char* data
    cdef Py_ssize_t n

# A field pointing to an array of structs or handles: a list of them (or one
# struct) copied into one C array the owner keeps; [] is NULL.
cdef void* struct_list_field(object value, type cls, size_t size, Struct owner, str name) except? NULL
cdef void* handle_list_field(object value, type cls, Struct owner, str name) except? NULL
# The items of a fixed array field (S[N], H[N]): a sequence of exactly n.
cdef list field_items(object value, Py_ssize_t n, str name)
# The FieldArray behind the field's current pointer, or None.
cdef object kept_array(Struct owner, str name, const void* current)

cdef class ArrayList(list):
    cdef void* _ptr
    cdef Py_ssize_t _n
    cdef Py_ssize_t _itemsize
    cdef str _fmt
    cdef object _owner
    cdef str _name
    cdef object _wrap

# An array field read as a list that writes item assignments through, and its setter.
# `wrap` makes each item an object (value types: cuuint64_t).
cdef object array_list(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object owner, str name,
                       object wrap=*)
cdef int array_assign(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object value, str name) except -1
# char arrays: bytes of n (text: up to n) or a list of n numbers in -128..255.
cdef int char_array_assign(void* ptr, Py_ssize_t n, object value, bint text, str name) except -1

# str() of a struct: fields are (name, print in hex) pairs.
cdef str struct_text(object obj, tuple fields)


# ---- callbacks -------------------------------------------------------------
# Python callbacks handed to CUDA: a reference kept until the callback ran.
# A one-shot context is released after its callback ran (callback_finished);
# one captured into a graph is kept, since every launch of the graph runs it.
cdef void* callback_context(object fn, object user_data, bint one_shot=*) except NULL
cdef void callback_invoke(void* context, tuple leading) noexcept
cdef void callback_discard(void* context) noexcept
cdef void callback_finished(void* context) noexcept

# The gate every callback passes, read without the GIL: callback_enter()
# before taking the GIL (False: skip the callback), callback_leave() after
# letting it go. At exit, before the interpreter finalizes, the gate shuts
# and the exit waits for the callbacks inside it: CPython would end a
# callback's thread (the driver's) that takes the GIL while it finalizes.
cdef bint callback_enter() noexcept nogil
cdef void callback_leave() noexcept nogil

# True once the interpreter has begun to finalize: a thread that is not
# Python's must then not take the GIL (CPython ends such a thread when it
# tries). Read without the GIL.
cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030D0000
    #define cubind_python_finalizing() Py_IsFinalizing()
    #else
    #define cubind_python_finalizing() _Py_IsFinalizing()
    #endif
    """
    bint python_finalizing "cubind_python_finalizing"() noexcept nogil


# ---- typed_values ----------------------------------------------------------
# void * values whose C type an attribute parameter selects.

from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.stdlib cimport free
from libc.string cimport memset


# What a typed value holds, from an attribute's entry in a module's table.
cdef enum TypedKind:
    TYPED_SCALAR    # an integer or floating-point number
    TYPED_WRAPPED   # a number shown as an instance of a class (an enum member, a CUdeviceptr)
    TYPED_HANDLE    # a handle (void *)
    TYPED_POINTER   # an address
    TYPED_STRUCT    # a struct class's storage
    TYPED_BYTES     # raw bytes
    TYPED_BOOL      # a C integer holding a boolean: True/False, as cuda.bindings reads it


cdef class TypedSpec:
    # The C type of one attribute's value, prepared once per attribute.
    cdef TypedKind kind
    cdef Py_ssize_t size     # of one element
    cdef char fmt            # struct-module format character of a number; 0 otherwise
    cdef object cls          # enum, handle or struct class; None otherwise
    cdef Py_ssize_t count    # elements; 0: sized by the caller
    cdef dict members        # TYPED_WRAPPED: the enum class's value -> member dict; None otherwise


cdef TypedSpec typed_spec(tuple spec, object cls)


cdef class TypedTable:
    # One attribute enum's value types: its C value -> TypedSpec, each entry
    # prepared at its first use; the last one found is kept, so that a
    # getter called again with the same attribute does no lookup.
    cdef str enum_name
    cdef dict entries        # value -> (kind, size, format, class, count) or its TypedSpec
    cdef EnumTable enums     # resolves an entry's class named by a string
    cdef long long _last_key
    cdef TypedSpec _last
    cdef TypedSpec spec(self, long long key, str name)


# Storage for one typed value, on the caller's stack: `buf` is `inline_`
# unless the value needs more, when it is allocated (typed_release frees it).
ctypedef struct TypedSlot:
    void* ptr
    Py_ssize_t nbytes        # the value's size: the type's size times its count
    Py_ssize_t count
    char* buf
    char inline_[64]


# The usual getter's value (one element of at most 64 bytes, none given in),
# a number or an enum member read back, are handled inline; the *_other functions do
# the rest.
cdef int typed_init_other(TypedSlot* slot, TypedSpec spec, object value, str name, Py_ssize_t size_hint) except -1
cdef object typed_read_other(const TypedSlot* slot, TypedSpec spec)


cdef inline int typed_init(TypedSlot* slot, TypedSpec spec, object value, str name, Py_ssize_t size_hint) except -1:
    # Storage for one attribute's value: size_hint bytes for a caller-sized
    # value (count 0), else count elements; `value` (not None) is stored.
    if value is None and size_hint == 0 and spec.count == 1 and spec.size <= <Py_ssize_t>sizeof(slot.inline_):
        slot.count = 1
        slot.nbytes = spec.size
        memset(slot.inline_, 0, sizeof(slot.inline_))
        slot.buf = slot.inline_
        slot.ptr = slot.buf
        return 0
    return typed_init_other(slot, spec, value, name, size_hint)


cdef inline object typed_read(const TypedSlot* slot, TypedSpec spec):
    # The value the call wrote: one element, or a list of count elements.
    cdef PyObject* member
    if spec.count == 1:
        if spec.kind == TYPED_SCALAR:
            return load_scalar(slot.buf, spec.fmt)
        if spec.members is not None:
            member = PyDict_GetItem(spec.members, load_scalar(slot.buf, spec.fmt))
            if member != NULL:
                return <object>member
    return typed_read_other(slot, spec)


cdef inline void typed_release(TypedSlot* slot) noexcept:
    if slot.buf != NULL and slot.buf != slot.inline_:
        free(slot.buf)
    slot.buf = NULL
    slot.ptr = NULL


cdef class TypedValue:
    # A TypedSlot in an object, for a list of values (cuPointerGetAttributes).
    cdef TypedSlot slot
    cdef TypedSpec _spec
    cpdef object value(self)


cdef TypedValue typed_value(TypedSpec spec, object value, str name, Py_ssize_t size_hint)


# ---- kernel_params ---------------------------------------------------------
# Kernel arguments: None, an address, or (values, types) packed into a KernelParams.

cdef class KernelParams:
    # Kernel arguments packed from (values, types): one pointer per argument.
    cdef void** args
    cdef char* _data
    cdef char _inline[256]
    cdef void* _inline_args[64]
    cdef list _keep
    cdef void* _object_pointer(self, object v, Py_ssize_t i) except? NULL
    cdef int _store(self, object v, object t, char fmt, char* dst, Py_ssize_t size, Py_ssize_t i) except -1
    cdef _pack_many(self, tuple vals, tuple kinds)


# What a kernelParams argument is kept as for the call: None, an int, a
# KernelParams, an array, or a held buffer (kernel_params_pointer reads it).
# None and an exact KernelParams go inline; the *_other functions take the rest.
cdef object kernel_params_other(object obj)
cdef void** kernel_params_pointer_other(object packed) except? NULL


cdef inline object kernel_params(object obj):
    if obj is None:
        return None
    return kernel_params_other(obj)


cdef inline void** kernel_params_pointer(object packed) except? NULL:
    if packed is None:
        return NULL
    if type(packed) is KernelParams:
        return (<KernelParams>packed).args
    return kernel_params_pointer_other(packed)

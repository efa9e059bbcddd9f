# Machinery shared by the generated modules (driver, runtime, nvrtc, nvjitlink):
# base classes of handles, conversions of Python arguments to C values, and
# the lifetime of Python callbacks handed to CUDA.
from cpython.buffer cimport Py_buffer
from libc.stdint cimport uintptr_t


# A buffer acquired for the duration of one call.
cdef struct BufferRef:
    Py_buffer view
    bint held


cdef class Handle:
    # An opaque CUDA handle (a pointer). Subclasses only give it a name.
    cdef void* _value


cdef class Struct:
    # A C struct or union, in its own storage or in memory owned elsewhere.
    cdef void* _ptr
    cdef bint _own        # _ptr is ours (alloc_struct) and freed with the object
    cdef object _owner    # keeps the memory _ptr points into alive
    cdef dict _refs       # objects whose memory pointer fields refer to


# What a TypedValue holds, from an attribute's entry in a module's table.
cdef enum TypedKind:
    TYPED_SCALAR    # an integer or floating-point number
    TYPED_WRAPPED   # a number shown as an instance of a class (an enum member, a CUdeviceptr)
    TYPED_HANDLE    # a handle (void *)
    TYPED_POINTER   # an address
    TYPED_STRUCT    # a struct class's storage
    TYPED_BYTES     # raw bytes


cdef class TypedSpec:
    # The C type of one attribute's value, prepared once per attribute.
    cdef TypedKind kind
    cdef Py_ssize_t size     # of one element
    cdef char fmt            # struct-module format character of a number; 0 otherwise
    cdef object cls          # enum, handle or struct class; None otherwise
    cdef Py_ssize_t count    # elements; 0: sized by the caller


cdef TypedSpec typed_spec(tuple spec, object cls)


cdef class TypedValue:
    # Storage for a void * value whose type an attribute selects.
    cdef void* ptr
    cdef Py_ssize_t nbytes   # the value's size: the type's size times its count
    cdef char* _buf
    cdef char _inline[64]
    cdef Py_ssize_t _count
    cdef TypedSpec _spec
    cdef _store(self, object value, str name)
    cdef object _element(self, Py_ssize_t i)
    cpdef object value(self)


cdef TypedValue typed_value(TypedSpec spec, object value, str name, Py_ssize_t size_hint)


cdef class KernelParams:
    # Kernel arguments packed from (values, types): one pointer per argument.
    cdef void** args
    cdef char* _data
    cdef char _inline[256]
    cdef void* _inline_args[32]
    cdef list _keep
    cdef void* _object_pointer(self, object v, Py_ssize_t i) except? NULL
    cdef int _store(self, object v, object t, char fmt, char* dst, Py_ssize_t size, Py_ssize_t i) except -1
    cdef _pack_many(self, tuple vals, tuple kinds)


# A handle object of class `cls` holding `value`.
cdef object new_handle(type cls, void* value)

# Sets the handle an object holds (destroy functions zero it).
cdef void set_handle(Handle h, void* value) noexcept

# An int from an int or an object with __index__ (TypeError naming `name`).
cdef object as_int(object obj, str name)

# Handle value of `obj` for parameter `name`: an instance of `cls`, an int or None.
cdef void* handle_value(object obj, type cls, str name) except? NULL

# Address for a void* parameter: None, an int, or an object exporting a
# contiguous buffer (then `view` holds it until release_address).
cdef void* address(object obj, BufferRef* ref, bint writable, str name) except? NULL
cdef void release_address(BufferRef* ref) noexcept
cdef object sized_output(object obj, size_t n, BufferRef* ref, void** ptr, str name, str reported_by)

# Pointer to the C struct held by `obj` (an instance of `cls`) or NULL for None.
cdef void* struct_pointer(object obj, type cls, str name) except? NULL

# bytes for a const char* parameter (str is encoded as UTF-8).
cdef bytes as_bytes(object obj, str name)

# Checks that a sequence holds at least `count` items.
cdef Py_ssize_t check_count(object seq, Py_ssize_t count, str name, str count_name) except -1

# Python callbacks handed to CUDA: a reference kept until the callback ran.
# A one-shot context is released after its callback ran (callback_finished);
# one captured into a graph is kept, since every launch of the graph runs it.
cdef void* callback_context(object fn, object user_data, bint one_shot=*) except NULL
cdef void callback_invoke(void* context, tuple leading) noexcept
cdef void callback_discard(void* context) noexcept
cdef void callback_finished(void* context) noexcept

# None when NULL; else the struct at `obj` (TypeError for None where one is required).
cdef void* struct_pointer_required(object obj, type cls, str name) except NULL

# Zeroed memory for `count` items (MemoryError when it cannot be had).
cdef void* alloc_array(Py_ssize_t count, size_t itemsize) except NULL

# An address from an int, None, a handle or a struct (no buffers: nothing keeps them alive).
cdef void* plain_address(object obj, str name) except? NULL

# The address a struct's pointer field takes; buffers are kept alive by `owner`.
cdef void* field_address(object value, Struct owner, str name) except? NULL
cdef void keep(Struct owner, str name, object value)

# A pointer-to-struct field: a struct, a sequence of them (copied into one array
# the owner keeps), an address or None.
cdef void* struct_array_field(object value, type cls, size_t size, Struct owner, str name) except? NULL

# bytes up to the first NUL among n.
cdef bytes c_string(const char* buf, Py_ssize_t n)

# A writable memoryview of n items at ptr that keeps `owner` alive.
cdef object array_view(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object owner)
cdef int array_assign(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object value, str name) except -1

# kernelParams: None, an address, or (values, types) packed into a KernelParams.
cdef object kernel_params(object obj)
cdef void** kernel_params_pointer(object packed) except? NULL

# Zeroed, 64-byte aligned storage for a struct (MemoryError when it cannot be had).
cdef void* alloc_struct(size_t size) except NULL
cdef void free_struct(void* ptr) noexcept

# A scalar written or read by struct-module format character.
cdef int store_scalar(void* dst, char fmt, object v) except -1
cdef object load_scalar(const void* src, char fmt)

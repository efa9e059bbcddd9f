# void * values whose C type an attribute parameter selects.

# What a TypedValue holds, from an attribute's entry in a module's table.
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

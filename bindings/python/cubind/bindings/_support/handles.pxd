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

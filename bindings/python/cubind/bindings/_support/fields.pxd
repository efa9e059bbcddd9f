# Fields of the struct classes: numbers, pointers, arrays, lists and text.
from cubind.bindings._support.handles cimport Struct


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

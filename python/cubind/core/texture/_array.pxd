# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject

cdef class OpaqueArray(_HandleObject):
    # A share of the array: the array itself (owned), a view of an array made
    # elsewhere, or a mipmap level holding a share of its mipmapped array.
    cdef shared_ptr[cpp.ArrayRef] _cpp
    cdef tuple _shape
    cdef object _format
    cdef unsigned int _num_channels
    cdef bint _surface_load_store
    cdef int _require_open(self) except -1
    cdef int _copy(self, other, stream, bint to_array, str method) except -1
    cdef bint _open(self)
    cdef unsigned long long _raw_handle(self)
    cpdef close(self)

cdef OpaqueArray _array_of(shared_ptr[cpp.ArrayRef] array, int device_id)
cdef int _fill_descriptor(shape, format, num_channels, is_surface_load_store,
                          cpp.ArrayDescriptor* out) except -1

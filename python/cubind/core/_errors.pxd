# cython: language_level=3
from libc.stdint cimport uintptr_t
cdef object _raw_handle(str module, str cls, uintptr_t value)
cdef uintptr_t _handle_address(object handle, object owner, str method, str param) except? 0
cdef str _where(object owner, str method, str param)

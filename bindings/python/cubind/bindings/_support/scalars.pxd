# A scalar written or read by struct-module format character.
cdef int store_scalar(void* dst, char fmt, object v) except -1
cdef object load_scalar(const void* src, char fmt)

# cython: language_level=3
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._context cimport Context

cdef class Stream:
    cdef object __weakref__
    cdef cpp.CUstream _handle
    cdef cpp.Stream* _owner
    cdef object _foreign
    cdef int _device_id
    cdef bint _closed
    cdef bint _builtin
    cdef Context _context
    cdef shared_ptr[cpp.GreenContext] _green
    @staticmethod
    cdef Stream _wrap(uintptr_t handle, object foreign, int device_id)
    @staticmethod
    cdef Stream _init_green(Context context, options)
    cdef int _device(self) except -1
cdef cpp.CUstream _stream_handle(stream) except? NULL
cdef Stream _new_stream(int ordinal, options)
cdef cpp.CUstream _stream_handle_of(Stream stream) except? NULL
cdef Stream _legacy_default_stream
cdef Stream _per_thread_default_stream


cdef cpp.CUcontext _stream_context(cpp.CUstream stream) except? NULL nogil

# cython: language_level=3
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr
from libcpp.optional cimport optional

cimport cubind.core._cpp as cpp
from cubind.core._context cimport Context

cdef class Stream:
    cdef object __weakref__
    cdef cpp.CUstream _handle
    # The stream this object owns (empty for a borrowed or closed one), in place.
    cdef optional[cpp.Stream] _owner
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
cdef cpp.CUstream _stream_handle_other(stream) except? NULL

cdef inline cpp.CUstream _stream_handle(stream) except? NULL:
    # The CUstream of a Stream, or of any object with __cuda_stream__; an
    # open Stream's (the usual case, on every launch and allocation) read in
    # place.
    if type(stream) is Stream and not (<Stream>stream)._closed:
        return (<Stream>stream)._handle
    return _stream_handle_other(stream)

cdef Stream _new_stream(int ordinal, options)
cdef cpp.CUstream _stream_handle_of(Stream stream) except? NULL
cdef Stream _legacy_default_stream
cdef Stream _per_thread_default_stream


cdef cpp.CUcontext _stream_context(cpp.CUstream stream) except? NULL nogil

# cython: language_level=3
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp

cdef class Event:
    cdef object __weakref__
    cdef cpp.Event* _event
    cdef cpp.TimedEvent* _timed
    cdef cpp.CUevent _handle
    cdef int _device_id
    cdef bint _timing
    cdef bint _blocking
    cdef bint _ipc
    cdef bint _imported   # opened from another process's descriptor
    cdef object _ipc_descriptor
    cdef shared_ptr[cpp.GreenContext] _green
    cdef object _context      # the green Context of a green context's stream, else None
    cdef void _destroy(self) noexcept
    @staticmethod
    cdef Event _make(int ordinal, bint timing, const cpp.EventOptions& options, shared_ptr[cpp.GreenContext] green,
                     uintptr_t context, const cpp.CUstream* record_on)
    cdef int _require_open(self) except -1
cdef int _event_options(options, bint* timing, cpp.EventOptions* out) except -1
cdef Event _new_event(int ordinal, options)

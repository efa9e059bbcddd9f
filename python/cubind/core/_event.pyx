# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Event (cubind::Event, or cubind::TimedEvent when timing is enabled).

from cpython.dict cimport PyDict_GetItemWithError
from cpython.object cimport PyObject_GenericGetDict, PyObject_IsTrue
from cpython.ref cimport PyObject
from libc.stdint cimport uintptr_t
from libcpp cimport bool as cbool
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device, _device_ordinal, _primary_context
from cubind.core._errors cimport _raw_handle
from cubind.core._memory._ipc cimport IPCEventDescriptor, _payload_of
from cubind.core._context cimport _green_contexts

from cubind.core import _reduction
from cubind.core._memory._ipc import _reduce_event
from cubind.core._errors import CUDAError
from cubind.core._options import EventOptions

cdef object _EVENT_OPTIONS = EventOptions


cdef inline bint _field_true(dict fields, str name, object options) except -1:
    # An EventOptions field's truth, from the instance's dict; a field
    # deleted from it is the class's default, read the usual way.
    cdef PyObject* found = PyDict_GetItemWithError(fields, name)
    if found != NULL:
        return PyObject_IsTrue(<object>found)
    return bool(getattr(options, name))


# CUresult values that __sub__ explains.
cdef int _CUDA_ERROR_INVALID_HANDLE = 400
cdef int _CUDA_ERROR_NOT_READY = 600


cdef int _event_options(options, bint* timing, cpp.EventOptions* out) except -1:
    # The one conversion of an EventOptions (or a dict of its fields) to the
    # core's struct, and whether the event is timed (a cubind::TimedEvent);
    # None is every default, read without making an EventOptions
    # (Stream.record does this once per call).
    if options is None:
        timing[0] = False
        return 0
    cdef dict fields
    if type(options) is _EVENT_OPTIONS:
        # The fields read from the instance's dict (its one attribute lookup):
        # Stream.record(options=...) reads them at every call.
        fields = PyObject_GenericGetDict(options, NULL)
        timing[0] = _field_true(fields, "timing_enabled", options)
        out.blocking_sync = _field_true(fields, "blocking_sync", options)
        out.interprocess = _field_true(fields, "ipc_enabled", options)
    else:
        if isinstance(options, dict):
            options = EventOptions(**options)
        elif not isinstance(options, EventOptions):
            raise TypeError(f"options must be an EventOptions, a dict or None, not {type(options).__name__}")
        timing[0] = bool(options.timing_enabled)
        out.blocking_sync = bool(options.blocking_sync)
        out.interprocess = bool(options.ipc_enabled)
    if timing[0] and out.interprocess:
        raise TypeError(
            "IPC-enabled events cannot use timing: the driver shares only events created without timing "
            "(CU_EVENT_DISABLE_TIMING); use EventOptions(ipc_enabled=True, timing_enabled=False)"
        )
    return 0


cdef Event _new_event(int ordinal, options):
    # A new event on device `ordinal` (Device.create_event).
    cdef bint timing
    cdef cpp.EventOptions event_options
    _event_options(options, &timing, &event_options)
    return Event._make(ordinal, timing, event_options, shared_ptr[cpp.GreenContext](), 0, NULL)


cdef class Event:
    """A CUDA event, made by Device.create_event or Stream.record. With
    EventOptions(timing_enabled=True), end - start is the device time between
    two recorded events, in milliseconds."""

    # For an event of a green context's stream: a share of the green context,
    # which must outlive the event.

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Event objects cannot be instantiated directly. Please use Device or Stream APIs (create_event, record)."
        )

    def __dealloc__(self):
        self._destroy()

    cdef void _destroy(self) noexcept:
        # The GIL is released only around a driver call: a closed event's
        # deallocation makes none.
        if self._timed != NULL or self._event != NULL or self._green.get() != NULL:
            with nogil:
                if self._timed != NULL:
                    del self._timed
                if self._event != NULL:
                    del self._event
                self._green.reset()
        self._timed = NULL
        self._event = NULL
        self._handle = NULL
        self._ipc_descriptor = None

    @staticmethod
    def _init(device_id, options=None):
        cdef bint timing
        cdef cpp.EventOptions event_options
        # The options are checked before the device (which loads the driver).
        _event_options(options, &timing, &event_options)
        return Event._make(_device_ordinal(device_id), timing, event_options, shared_ptr[cpp.GreenContext](), 0, NULL)

    @staticmethod
    cdef Event _make(int ordinal, bint timing, const cpp.EventOptions& options, shared_ptr[cpp.GreenContext] green,
                     uintptr_t context, const cpp.CUstream* record_on):
        # With what _event_options made, in the device's primary context, or,
        # given a green context's share and its CUcontext, in that one; with
        # record_on, recorded on that stream in the same release of the GIL
        # (Stream.record()).
        cdef Event self = Event.__new__(Event)
        cdef cpp.CUcontext in_context = <cpp.CUcontext>context
        self._timing = timing
        self._blocking = options.blocking_sync
        self._ipc = options.interprocess
        self._device_id = ordinal
        self._green = green
        if context != 0:
            self._context = _green_contexts.get(context)
        with nogil:
            if timing and in_context != NULL:
                self._timed = cpp.timed_event_new_in(in_context, self._blocking)
            elif timing:
                self._timed = cpp.timed_event_new(ordinal, self._blocking)
            elif in_context != NULL:
                self._event = cpp.event_new_in(in_context, options)
            else:
                self._event = cpp.event_new(ordinal, options)
            self._handle = self._timed.handle() if timing else self._event.handle()
            if record_on != NULL:
                cpp.EventRef(self._handle).record(cpp.StreamRef(record_on[0]))
        return self

    cdef int _require_open(self) except -1:
        if self._handle == NULL:
            raise RuntimeError("Event has been closed")
        return 0

    def close(self):
        """Destroys the event (cuEventDestroy)."""
        self._destroy()

    @property
    def is_closed(self):
        return self._handle == NULL

    def __sub__(self, other):
        # end - start: the device time between the two, in milliseconds. As
        # in cuda.core, only Event - Event is defined: anything else is
        # Python's TypeError for unsupported operands.
        cdef Event end
        cdef Event start
        cdef float ms
        if not isinstance(self, Event) or not isinstance(other, Event):
            return NotImplemented
        end = <Event>self
        start = <Event>other
        end._require_open()
        start._require_open()
        if end._timed == NULL or start._timed == NULL:
            untimed = [name for name, e in (("the left", end), ("the right", start)) if e._timed == NULL]
            raise RuntimeError(
                "Both Events must be created with timing enabled in order to subtract them; "
                "use EventOptions(timing_enabled=True) when creating both events "
                f"({' and '.join(untimed)} operand{'s have' if len(untimed) == 2 else ' has'} no timing)"
            )
        try:
            with nogil:
                ms = cpp.elapsed_ms(end._timed[0], start._timed[0])
        except CUDAError as error:
            if error.status == _CUDA_ERROR_INVALID_HANDLE:
                raise RuntimeError(
                    "Both Events must be recorded before they can be subtracted; "
                    "use Stream.record() to record both events to a stream "
                    f"(cuEventElapsedTime: {error.error_name})"
                ) from error
            if error.status == _CUDA_ERROR_NOT_READY:
                raise RuntimeError(
                    "One or both events have not completed; use Event.sync(), Stream.sync(), or Device.sync() "
                    "to wait for the events to complete before subtracting them "
                    f"(cuEventElapsedTime: {error.error_name})"
                ) from error
            raise
        return ms

    def __rsub__(self, other):
        return NotImplemented

    def __isub__(self, other):
        # Not in place: e -= other is e - other, as in cuda.core.
        return NotImplemented

    def __hash__(self):
        return hash(("Event", <uintptr_t>self._handle))

    def __eq__(self, other):
        return isinstance(other, Event) and (<Event>other)._handle == self._handle

    def __repr__(self):
        return f"<Event handle={<uintptr_t>self._handle:#x}>"

    @property
    def ipc_descriptor(self):
        """The IPCEventDescriptor another process opens this event with
        (cuIpcGetEventHandle); the event must be created with
        EventOptions(ipc_enabled=True)."""
        cdef char payload[64]
        self._require_open()
        if self._ipc_descriptor is not None:
            return self._ipc_descriptor
        if not self._ipc or self._event == NULL:
            raise RuntimeError(
                "Event is not IPC-enabled: create it with EventOptions(ipc_enabled=True) "
                "(and timing_enabled=False) to share it with other processes"
            )
        with nogil:
            cpp.event_export_ipc(self._event[0], payload)
        self._ipc_descriptor = IPCEventDescriptor._init(payload[:64], self._blocking)
        return self._ipc_descriptor

    @classmethod
    def from_ipc_descriptor(cls, ipc_descriptor):
        """Opens an event another process shared (its ipc_descriptor) in the
        current device's context (cuIpcOpenEventHandle). It can be waited on
        and queried, not timed; recording it here is seen there."""
        cdef Event self
        cdef bytes payload
        cdef const char* data
        cdef int ordinal
        if not isinstance(ipc_descriptor, IPCEventDescriptor):
            raise TypeError(
                f"Event.from_ipc_descriptor: ipc_descriptor must be an IPCEventDescriptor, "
                f"not {type(ipc_descriptor).__name__}"
            )
        payload = _payload_of((<IPCEventDescriptor>ipc_descriptor)._reserved, "Event.from_ipc_descriptor")
        data = payload
        ordinal = Device()._id
        self = Event.__new__(cls)
        with nogil:
            self._event = cpp.event_import_ipc(ordinal, data)
        self._handle = self._event.handle()
        self._device_id = ordinal
        self._ipc = True
        self._imported = True
        self._blocking = (<IPCEventDescriptor>ipc_descriptor)._blocking
        self._ipc_descriptor = ipc_descriptor
        return self

    def __reduce__(self):
        # An IPC event pickles as its descriptor (plain bytes): unpickling
        # opens it in the receiving process.
        return type(self).from_ipc_descriptor, (self.ipc_descriptor,)

    @property
    def is_ipc_enabled(self):
        return self._ipc

    @property
    def is_timing_enabled(self):
        return self._timing

    @property
    def is_blocking_sync(self):
        return self._blocking

    def sync(self):
        """Blocks until the recorded work has completed (cuEventSynchronize)."""
        self._require_open()
        cdef cpp.CUevent handle = self._handle
        with nogil:
            cpp.EventRef(handle).sync()

    @property
    def is_done(self):
        """Whether the recorded work has completed (cuEventQuery)."""
        self._require_open()
        cdef cpp.CUevent handle = self._handle
        cdef cbool done
        with nogil:
            done = cpp.EventRef(handle).query()
        return done

    @property
    def handle(self):
        """The CUevent (cubind.bindings.driver.CUevent)."""
        self._require_open()
        return _raw_handle("driver", "CUevent", <uintptr_t>self._handle)

    @property
    def device(self):
        """The device the event was made on; None for an event opened from
        another process's descriptor, whose device this process cannot know
        (as in cuda.core)."""
        if self._imported:
            return None
        return Device(self._device_id)

    @property
    def context(self):
        """The context the event was made in: the green Context for an
        event of a green context's stream, else the device's primary one."""
        if self._imported:
            return None
        if self._context is not None:
            return self._context
        return _primary_context(self._device_id)


_reduction.register(Event, _reduce_event)

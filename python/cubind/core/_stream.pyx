# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Stream (cubind::Stream owns a created stream; the default streams and
# foreign streams are used without owning them).

cimport cython

from libc.stdint cimport uintptr_t
from libcpp cimport bool as cbool
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._context cimport Context, _context_device, _context_of, _current_context, _green_contexts
from cubind.core._device cimport _Device as Device, _device_ordinal
from cubind.core._device_resources cimport DeviceResources
from cubind.core._errors cimport _handle_address, _raw_handle
from cubind.core._event cimport Event, _event_options
from cubind.core._host_callbacks cimport host_function, run_once

from cubind.core._options import StreamOptions


cdef cpp.CUstream _stream_handle_other(stream) except? NULL:
    # _stream_handle of anything but an open Stream: a closed one, a
    # subclass's, or the handle of an object with __cuda_stream__.
    if type(stream) is Stream:
        if (<Stream>stream)._closed:
            raise RuntimeError("Stream has been closed")
        return (<Stream>stream)._handle
    if isinstance(stream, Stream):
        return _stream_handle_of(<Stream>stream)
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is None:
        raise TypeError(
            f"stream must be a Stream or an object with __cuda_stream__, not {type(stream).__name__}"
        )
    info = protocol()
    if not isinstance(info, tuple) or len(info) != 2:
        raise TypeError(f"{type(stream).__name__}.__cuda_stream__() must return (version, handle), not {info!r}")
    return <cpp.CUstream><uintptr_t>int(info[1])


@cython.cpp_locals(True)
cdef cpp.CUcontext _stream_context(cpp.CUstream stream) except? NULL nogil:
    # cuStreamGetCtx (cubind::StreamRef::context).
    return cpp.StreamRef(stream).context().handle()


cdef cpp.CUstream _stream_handle_of(Stream stream) except? NULL:
    if stream._closed:
        raise RuntimeError("Stream has been closed")
    return stream._handle


cdef object _stream_options(options):
    if options is None:
        return StreamOptions()
    if isinstance(options, dict):
        return StreamOptions(**options)
    if not isinstance(options, StreamOptions):
        raise TypeError(f"options must be a StreamOptions, a dict or None, not {type(options).__name__}")
    return options


cdef int _stream_priority(priority) except? -1:
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise TypeError(f"StreamOptions.priority must be an int or None, not {priority!r}")
    return priority


cdef int _stream_options_fill(options, cpp.StreamOptions* out) except -1:
    # The one conversion of a StreamOptions to the core's struct.
    cdef int priority
    out.non_blocking = bool(options.nonblocking)
    if options.priority is not None:
        priority = _stream_priority(options.priority)
        out.priority = priority
    return 0


cdef Stream _new_stream(int ordinal, options):
    # A new stream on device `ordinal` (Device.create_stream): None is every
    # default, which the core's StreamOptions holds, read without making a
    # StreamOptions.
    cdef Stream self
    cdef cpp.StreamOptions stream_options
    if options is not None:
        _stream_options_fill(_stream_options(options), &stream_options)
    self = Stream.__new__(Stream)
    with nogil:
        cpp.stream_make(self._owner, ordinal, stream_options)
    self._handle = self._owner.value().handle()
    self._device_id = ordinal
    return self


cdef int _require_ipc_event_device(Stream stream, Event event) except -1:
    # An event opened from another process belongs to the context that was
    # current when it was opened; the driver crashes (SIGSEGV) when a stream
    # of another device waits on it, so that wait is refused here.
    cdef int ordinal = stream._device()
    if ordinal != event._device_id:
        raise ValueError(
            f"Stream.wait: the event was opened from another process's descriptor while device "
            f"{event._device_id} was current, and this stream belongs to device {ordinal}; the driver "
            f"cannot wait on it there. Unpickle (or Event.from_ipc_descriptor) the event while device "
            f"{ordinal} is current"
        )
    return 0


cdef class Stream:
    """A CUDA stream: made by Device.create_stream, or Stream.from_handle for
    one owned elsewhere; LEGACY_DEFAULT_STREAM and PER_THREAD_DEFAULT_STREAM
    are the default streams. Stream-ordered calls take it as stream=."""

    # A stream of a green context: the Context that made it, and a share of
    # the green context, which the driver requires to outlive the stream.

    def __cinit__(self):
        self._device_id = -1

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Stream objects cannot be instantiated directly. "
            "Please use Device APIs (create_stream) or other Stream APIs (from_handle)."
        )

    def __dealloc__(self):
        if self._owner.has_value() or self._green.get() != NULL:
            with nogil:
                self._owner.reset()
                self._green.reset()

    @staticmethod
    cdef Stream _wrap(uintptr_t handle, object foreign, int device_id):
        cdef Stream self = Stream.__new__(Stream)
        self._handle = <cpp.CUstream>handle
        self._foreign = foreign
        self._device_id = device_id
        return self

    @staticmethod
    def _init(obj=None, options=None, device_id=None):
        cdef cpp.StreamOptions checked
        if obj is not None:
            if options is not None:
                raise ValueError("obj and options cannot be both specified")
            return Stream._wrap(<uintptr_t>_stream_handle(obj), obj, -1)
        if options is not None:
            options = _stream_options(options)
            _stream_options_fill(options, &checked)   # checked before the device (which loads the driver)
        return _new_stream(_device_ordinal(Device() if device_id is None else device_id), options)

    @staticmethod
    cdef Stream _init_green(Context context, options):
        # Context.create_stream on a green context.
        cdef Stream self
        cdef cpp.StreamOptions stream_options
        options = _stream_options(options)
        if not options.nonblocking:
            raise ValueError(
                "Context.create_stream: StreamOptions.nonblocking is False; green context streams must be "
                "non-blocking (cuGreenCtxStreamCreate takes CU_STREAM_NON_BLOCKING only)"
            )
        _stream_options_fill(options, &stream_options)
        self = Stream.__new__(Stream)
        with nogil:
            cpp.green_stream_make(self._owner, context._green.get()[0], stream_options)
        self._handle = self._owner.value().handle()
        self._device_id = context._device_id
        self._context = context
        self._green = context._green
        return self

    # A plain C method (no binding), which the interpreter calls directly.
    @cython.binding(False)
    def close(self):
        """Destroys a stream this Stream created (cuStreamDestroy: queued work
        still runs); a stream owned elsewhere is only forgotten."""
        if self._builtin:
            return
        if self._owner.has_value() or self._green.get() != NULL:
            with nogil:
                self._owner.reset()
                self._green.reset()
        self._foreign = None
        self._closed = True

    @property
    def is_closed(self):
        return self._closed

    def __cuda_stream__(self):
        return (0, <uintptr_t>_stream_handle_of(self))

    def __hash__(self):
        return hash(("Stream", <uintptr_t>self._handle))

    def __eq__(self, other):
        return isinstance(other, Stream) and (<Stream>other)._handle == self._handle

    def __repr__(self):
        return f"<Stream handle={<uintptr_t>self._handle:#x}{' closed' if self._closed else ''}>"

    @property
    def handle(self):
        """The CUstream (cubind.bindings.driver.CUstream); int() gives its address."""
        return _raw_handle("driver", "CUstream", <uintptr_t>_stream_handle_of(self))

    @property
    def is_nonblocking(self):
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef cbool value
        with nogil:
            value = cpp.StreamRef(handle).is_non_blocking()
        return value

    @property
    def priority(self):
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef int value
        with nogil:
            value = cpp.StreamRef(handle).priority()
        return value

    def sync(self):
        """Blocks until all work submitted so far has completed (cuStreamSynchronize)."""
        cdef cpp.CUstream handle = _stream_handle_of(self)
        with nogil:
            cpp.StreamRef(handle).sync()

    def record(self, event=None, options=None):
        """Records event (a new one made with options when None) on this stream:
        it captures the work submitted so far (cuEventRecord). Returns it."""
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef Event e
        cdef bint timing
        cdef cpp.EventOptions event_options
        if event is None:
            # A new event, made and recorded with the GIL released once.
            _event_options(options, &timing, &event_options)
            if self._green.get() != NULL:
                return Event._make(self._device_id, timing, event_options, self._green, self._context._handle, &handle)
            # The stream's device is valid: no second check of the ordinal.
            return Event._make(self._device(), timing, event_options, shared_ptr[cpp.GreenContext](), 0, &handle)
        if not isinstance(event, Event):
            raise TypeError(f"Stream.record: event must be an Event or None, not {type(event).__name__}")
        e = <Event>event
        e._require_open()
        with nogil:
            cpp.EventRef(e._handle).record(cpp.StreamRef(handle))
        return event

    def wait(self, event_or_stream):
        """Work submitted to this stream from now on waits for the event, or
        for the work submitted so far to the other stream (cuStreamWaitEvent)."""
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef cpp.CUstream other
        cdef cpp.CUevent event
        if isinstance(event_or_stream, Event):
            (<Event>event_or_stream)._require_open()
            if (<Event>event_or_stream)._imported:
                _require_ipc_event_device(self, <Event>event_or_stream)
            event = (<Event>event_or_stream)._handle
            with nogil:
                cpp.StreamRef(handle).wait(cpp.EventRef(event))
            return
        try:
            other = _stream_handle(event_or_stream)
        except TypeError:
            raise TypeError(
                f"Stream.wait: expected an Event or a stream, not {type(event_or_stream).__name__}"
            ) from None
        if other == handle:
            return
        with nogil:
            cpp.StreamRef(handle).wait(cpp.StreamRef(other))

    def launch_host_func(self, callback, *, user_data=None):
        """Queues callback to run on a driver thread once the work submitted
        so far has completed (cuLaunchHostFunc); later work waits for it.
        callback is a Python callable taking no arguments, or a ctypes
        function pointer of CUhostFn's prototype, CFUNCTYPE(None, c_void_p),
        called with user_data (an int address passed as it is, or a
        bytes-like object, copied), as GraphBuilder.callback takes them. It
        is kept alive (with the copy) until it has run, whatever the caller
        drops; it must not call CUDA, and what a Python callable raises goes
        to sys.unraisablehook. While the stream is being captured, the
        callback becomes a host node of the graph, run at every launch of
        it, and the graph keeps it alive (a user object) until the graph and
        its instantiations are gone. Beyond cuda.core."""
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef cpp.CaptureStatus status
        cdef cpp.CUhostFn function
        cdef cpp.CUhostFn release
        cdef void* data
        # Checked before any driver call; release(data) lets go of what
        # host_function took on every path that does not hand it over.
        host_function(callback, user_data, "Stream", "launch_host_func", "callback", &function, &data, &release)
        try:
            with nogil:
                status = cpp.capture_status(cpp.StreamRef(handle))
        except BaseException:
            release(data)
            raise
        if status == cpp.CaptureStatus.active:
            # The graph's user object owns data from here on, failed or not.
            with nogil:
                cpp.capture_host_func(cpp.StreamRef(handle), function, data, release)
            return
        # Queued, the host function releases data itself after its call.
        function = run_once(function)
        try:
            with nogil:
                cpp.StreamRef(handle).launch_host_func(function, data)
        except BaseException:
            release(data)
            raise

    def create_graph_builder(self):
        """A GraphBuilder capturing on this stream (which it does not close)."""
        _stream_handle_of(self)
        from cubind.core._graph._graph_builder import _graph_builder_on

        return _graph_builder_on(self, False)

    cdef int _device(self) except -1:
        cdef cpp.CUstream handle
        cdef cpp.CUcontext context
        if self._device_id < 0:
            handle = _stream_handle_of(self)
            if self._builtin:
                return Device()._id
            with nogil:
                context = _stream_context(handle)
                self._device_id = _context_device(context)
        return self._device_id

    @property
    def device(self):
        """The device of the stream's context."""
        return Device(self._device())

    @property
    def context(self):
        """The stream's context (cuStreamGetCtx): for a stream of a green
        context, the Context that made it."""
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef cpp.CUcontext context
        if self._context is not None:
            return self._context
        if self._builtin:
            return Device(self._device()).context
        with nogil:
            context = _stream_context(handle)
        return _context_of(<uintptr_t>context, self._device())

    @property
    def resources(self):
        """The resources of the stream's context: a green context's SMs, or the
        whole device's. A default stream has no context of its own: it asks
        about the context current now (the device's, with none current)."""
        cdef cpp.CUstream handle = _stream_handle_of(self)
        cdef cpp.CUcontext context
        cdef int ordinal
        if self._green.get() != NULL:
            return DeviceResources._of(self._device_id, <uintptr_t>self._context._handle, self._green)
        if self._builtin:
            with nogil:
                context = _current_context()
            if context == NULL:
                return Device().resources
        else:
            with nogil:
                context = _stream_context(handle)
        with nogil:
            ordinal = _context_device(context)
        green = _green_contexts.get(<uintptr_t>context)
        if green is not None:
            return (<Context>green).resources
        return DeviceResources._of(ordinal, <uintptr_t>context, shared_ptr[cpp.GreenContext]())

    @staticmethod
    def from_handle(handle):
        """A Stream over a stream created elsewhere (an int address or a
        CUstream); it is not owned: close() only forgets it."""
        cdef uintptr_t value
        if isinstance(handle, Stream):
            return handle
        value = _handle_address(handle, "Stream", "from_handle", "handle")
        if value == 0:
            raise ValueError("Stream.from_handle: handle is 0; use LEGACY_DEFAULT_STREAM for the legacy default stream")
        return Stream._wrap(value, None, -1)


cdef Stream _builtin_stream(uintptr_t handle):
    cdef Stream stream = Stream._wrap(handle, None, -1)
    stream._builtin = True
    return stream


LEGACY_DEFAULT_STREAM = _legacy_default_stream = _builtin_stream(<uintptr_t>cpp.CU_STREAM_LEGACY)


PER_THREAD_DEFAULT_STREAM = _per_thread_default_stream = _builtin_stream(<uintptr_t>cpp.CU_STREAM_PER_THREAD)


def default_stream():
    """The default stream: LEGACY_DEFAULT_STREAM, or PER_THREAD_DEFAULT_STREAM
    where the environment asks for it (see Device.default_stream)."""
    return Device.default_stream.fget(None)

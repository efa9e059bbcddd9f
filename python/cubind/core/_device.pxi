# Device, DeviceProperties and Context (cubind::Device, cubind::Context).

include "_device_attributes.pxi"

ComputeCapability = namedtuple("ComputeCapability", ["major", "minor"])
ComputeCapability.__doc__ = "A named tuple of (major, minor) CUDA compute capability version numbers."

# One Device object per device per thread, as in cuda.core.
_per_thread = threading.local()


cdef int _device_count() except -1:
    cdef int count
    with nogil:
        count = cpp.device_count()
    return count


cdef int _device_ordinal(device) except -1:
    # A Device or an int, checked against the devices present.
    if isinstance(device, Device):
        return device._id
    try:
        ordinal = device.__index__()
    except AttributeError:
        raise TypeError(f"device must be a Device or an int, not {type(device).__name__}") from None
    count = _device_count()
    if not 0 <= ordinal < count:
        raise ValueError(f"device_id must be within [0, {count}), got {ordinal}")
    return ordinal


class DeviceProperties:
    """Every CUDA device attribute of one device (cuDeviceGetAttribute), by
    the name cuda.core gives it: Device().properties.multiprocessor_count."""

    __slots__ = ("_id", "_cache")

    def __init__(self, *args, **kwargs):
        raise RuntimeError("DeviceProperties cannot be instantiated directly; use Device.properties")

    @classmethod
    def _init(cls, handle):
        self = object.__new__(cls)
        self._id = handle
        self._cache = {}
        return self


def _device_property(name, int attribute, as_bool):
    def get(self):
        try:
            return self._cache[name]
        except KeyError:
            pass
        value = _device_attribute(self._id, attribute)
        value = bool(value) if as_bool else value
        self._cache[name] = value
        return value

    get.__name__ = name
    return property(get, doc=f"cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_{name.upper()})")


cdef int _device_attribute(int ordinal, int attribute) except? -1:
    cdef int value
    with nogil:
        value = cpp.device_attribute(ordinal, <cpp.CUdevice_attribute>attribute)
    return value


for _name, _attribute, _as_bool in _DEVICE_ATTRIBUTES:
    setattr(DeviceProperties, _name, _device_property(_name, _attribute, _as_bool))


class Device:
    """A CUDA device. Device() is the device of the current context, or 0 when
    none is current; Device(n) is device n. There is one Device object per
    device per thread."""

    __slots__ = ("_id", "_memory_resource", "_properties", "_entered", "__weakref__")

    def __new__(cls, device_id=None):
        cdef cpp.CUcontext current
        cdef int ordinal
        devices = getattr(_per_thread, "devices", None)
        if devices is None:
            devices = _per_thread.devices = {}
        if device_id is None:
            with nogil:
                current = cpp.context_current()
            if current != NULL:
                with nogil:
                    ordinal = cpp.context_device(current)
            else:
                ordinal = 0
                _device_ordinal(0)
        else:
            ordinal = _device_ordinal(device_id)
        device = devices.get(ordinal)
        if device is None:
            device = object.__new__(cls)
            device._id = ordinal
            device._memory_resource = None
            device._properties = None
            device._entered = []
            devices[ordinal] = device
        return device

    @classmethod
    def get_all_devices(cls):
        """Every device this process sees, as a tuple."""
        return tuple(cls(i) for i in range(_device_count()))

    @property
    def device_id(self):
        return self._id

    @property
    def pci_bus_id(self):
        """"0000:3b:00.0" (cuDeviceGetPCIBusId)."""
        cdef int ordinal = self._id
        cdef string text
        with nogil:
            text = cpp.device_pci_bus_id(ordinal)
        return text.decode()

    def can_access_peer(self, peer):
        """Whether this device can read and write peer's memory (cuDeviceCanAccessPeer)."""
        cdef int ordinal = self._id
        cdef int other = _device_ordinal(peer)
        cdef cbool can
        if other == ordinal:
            return True
        with nogil:
            can = cpp.device_can_access_peer(ordinal, other)
        return can

    @property
    def uuid(self):
        """The device's UUID, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (cuDeviceGetUuid)."""
        cdef int ordinal = self._id
        cdef string text
        with nogil:
            text = cpp.device_uuid(ordinal)
        return text.decode()

    @property
    def name(self):
        cdef int ordinal = self._id
        cdef string text
        with nogil:
            text = cpp.device_name(ordinal)
        return text.decode()

    @property
    def properties(self):
        if self._properties is None:
            self._properties = DeviceProperties._init(self._id)
        return self._properties

    @property
    def compute_capability(self):
        cdef int ordinal = self._id
        cdef cpp.ComputeCapability cc
        with nogil:
            cc = cpp.device_compute_capability(ordinal)
        return ComputeCapability(cc.major, cc.minor)

    @property
    def arch(self):
        """The compute capability as digits: "90" for 9.0 (compile for "sm_" + arch)."""
        major, minor = self.compute_capability
        return f"{major}{minor}"

    @property
    def context(self):
        """The device's primary context."""
        cdef int ordinal = self._id
        cdef cpp.CUcontext handle
        with nogil:
            handle = cpp.device_primary_context(ordinal)
        return Context._wrap(<uintptr_t>handle, ordinal)

    @property
    def memory_resource(self):
        """Where Device.allocate gets memory: by default a DeviceMemoryResource
        over the device's default pool. Settable to any MemoryResource."""
        if self._memory_resource is None:
            self._memory_resource = DeviceMemoryResource(self._id)
        return self._memory_resource

    @memory_resource.setter
    def memory_resource(self, mr):
        if not isinstance(mr, MemoryResource):
            raise TypeError(f"Device.memory_resource must be a MemoryResource, not {type(mr).__name__}")
        self._memory_resource = mr

    @property
    def default_stream(self):
        """The legacy default stream, or the per-thread one when the environment
        sets CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM (as for cuda.core) or
        CUBIND_PER_THREAD_DEFAULT_STREAM to a non-zero value."""
        for variable in ("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "CUBIND_PER_THREAD_DEFAULT_STREAM"):
            value = os.environ.get(variable, "0")
            if value not in ("", "0"):
                return PER_THREAD_DEFAULT_STREAM
        return LEGACY_DEFAULT_STREAM

    def __int__(self):
        return self._id

    def __index__(self):
        return self._id

    def __repr__(self):
        return f"<Device {self._id}>"

    def __hash__(self):
        return hash(("Device", self._id))

    def __eq__(self, other):
        return isinstance(other, Device) and other._id == self._id

    def __reduce__(self):
        return Device, (self._id,)

    def set_current(self, ctx=None):
        """Makes the device's primary context current on this thread
        (cuCtxSetCurrent). With ctx (a Context of this device), makes that one
        current and returns the Context that was."""
        cdef int ordinal = self._id
        cdef cpp.CUcontext previous
        if ctx is None:
            with nogil:
                cpp.device_set_current(ordinal)
            return None
        if not isinstance(ctx, Context):
            raise TypeError(f"Device.set_current: ctx must be a Context or None, not {type(ctx).__name__}")
        if (<Context>ctx)._device_id != ordinal:
            raise ValueError(
                f"Device.set_current: ctx belongs to device {(<Context>ctx)._device_id}, not to device {ordinal}"
            )
        with nogil:
            previous = cpp.context_current()
            cpp.context_set_current(<cpp.CUcontext>(<Context>ctx)._handle)
        if previous == NULL:
            return None
        return Context._wrap(<uintptr_t>previous, cpp.context_device(previous))

    def create_context(self, options=None):
        """Not supported: cubind works in each device's primary context and
        creates no other (see docs/migration-from-cuda-core.md)."""
        raise NotImplementedError(
            "Device.create_context: cubind.core works in the primary context of each device "
            "(Device.context) and creates no other context"
        )

    def create_stream(self, obj=None, options=None):
        """A new stream on this device (cuStreamCreateWithPriority), or, with
        obj, a Stream over a foreign object's stream (__cuda_stream__), which
        is kept alive with it."""
        return Stream._init(obj, options, self._id)

    def create_event(self, options=None):
        """A new event on this device, not yet recorded (cuEventCreate)."""
        return Event._init(self._id, options)

    def allocate(self, size, *, stream):
        """size bytes from Device.memory_resource, ordered on stream."""
        mr = self._memory_resource
        if mr is None:
            mr = self.memory_resource
        if type(mr) is DeviceMemoryResource:
            # Its allocate is MemoryResource's: called in C, not through Python.
            return _allocate(<MemoryResource>mr, size, stream)
        return mr.allocate(size, stream=stream)

    def sync(self):
        """Waits for all work on the device's primary context (cuCtxSynchronize)."""
        cdef int ordinal = self._id
        with nogil:
            cpp.device_sync(ordinal)

    # Beyond cuda.core.

    def enable_peer_access(self, peer):
        """Lets this device's context access peer's memory (cuCtxEnablePeerAccess);
        idempotent. Raises CUDAError where the hardware cannot."""
        cdef int ordinal = self._id
        cdef int other = _device_ordinal(peer)
        with nogil:
            cpp.device_peer_access(ordinal, other, True)

    def disable_peer_access(self, peer):
        """cuCtxDisablePeerAccess; idempotent."""
        cdef int ordinal = self._id
        cdef int other = _device_ordinal(peer)
        with nogil:
            cpp.device_peer_access(ordinal, other, False)

    def __enter__(self):
        """with Device(n): makes n's primary context current, and restores the
        context that was current on exit."""
        cdef int ordinal = self._id
        cdef cpp.CUcontext previous
        with nogil:
            previous = cpp.context_current()
            cpp.device_set_current(ordinal)
        self._entered.append(<uintptr_t>previous)
        return self

    def __exit__(self, *exc):
        cdef uintptr_t previous = self._entered.pop()
        with nogil:
            cpp.context_set_current(<cpp.CUcontext>previous)
        return False


cdef class Context:
    """A CUDA context: in cubind, a device's primary context (Device.context)."""

    cdef uintptr_t _handle
    cdef int _device_id
    cdef bint _closed

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Context objects cannot be instantiated directly; use Device.context")

    @staticmethod
    cdef Context _wrap(uintptr_t handle, int device_id):
        cdef Context self = Context.__new__(Context)
        self._handle = handle
        self._device_id = device_id
        return self

    @property
    def handle(self):
        """The CUcontext (cubind.bindings.driver.CUcontext); None once closed."""
        if self._closed:
            return None
        return _raw_handle("driver", "CUcontext", self._handle)

    @property
    def is_closed(self):
        return self._closed

    @property
    def is_green(self):
        return False

    def create_stream(self, options=None):
        """A new stream in this context."""
        if self._closed:
            raise RuntimeError("Context has been closed")
        return Stream._init(None, options, self._device_id)

    def close(self):
        """Forgets the context; a primary context stays alive for the process."""
        self._closed = True

    @property
    def device(self):
        return Device(self._device_id)

    def __eq__(self, other):
        return isinstance(other, Context) and (<Context>other)._handle == self._handle

    def __hash__(self):
        return hash(("Context", self._handle))

    def __repr__(self):
        return f"<Context handle={self._handle:#x} device={self._device_id}>"

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Device and ComputeCapability (cubind::Device): one Device object per device
# per thread, and what a device makes (streams, events, contexts, buffers).

from cpython.dict cimport PyDict_GetItemWithError
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.pystate cimport PyThreadState_GetDict
from cpython.ref cimport PyObject
from libc.stdint cimport uintptr_t
from libcpp cimport bool as cbool
from libcpp.memory cimport shared_ptr
from libcpp.string cimport string

cimport cubind.core._cpp as cpp
from cubind.core._context cimport Context, _context_device, _context_of, _current_context, _make_current
from cubind.core._device_resources cimport _checked_options, DeviceResources
from cubind.core._event cimport _event_options, _new_event, Event
from cubind.core._memory._buffer cimport _allocate, MemoryResource
from cubind.core._memory._memory_pool cimport DeviceMemoryResource
from cubind.core._stream cimport (
    _legacy_default_stream as LEGACY_DEFAULT_STREAM,
    _per_thread_default_stream as PER_THREAD_DEFAULT_STREAM,
    _new_stream,
    Stream,
)

import os
from collections import namedtuple
from cubind.core._options import ContextOptions


ComputeCapability = namedtuple("ComputeCapability", ["major", "minor"])


ComputeCapability.__doc__ = "A named tuple of (major, minor) CUDA compute capability version numbers."


cdef extern from "_device_call.hpp" namespace "cubind_core":
    ctypedef object (*DeviceLookup)(object cls, object device_id)
    void _install_device_call "cubind_core::install_device_call"(object cls, DeviceLookup lookup, object key)
    int _call_known_device_count "cubind_core::known_device_count"
    Py_ssize_t _slot_offset "cubind_core::slot_offset"(object cls, const char* name) except? -2
    ctypedef object (*NewStream)(int ordinal)
    int _install_device_methods "cubind_core::install_device_methods"(
        object cls, Py_ssize_t id_slot, Py_ssize_t current_slot, NewStream make) except -1
    bint _plain_device_ordinal "cubind_core::plain_device_ordinal"(object self, int* ordinal) noexcept

cdef str _DEVICES_KEY = "cubind.core._device.devices"


# One Device object per device per thread, as in cuda.core: a list of them
# (index: ordinal) in the thread state's dictionary, where threading.local
# keeps its values too, read there without an attribute lookup.
cdef list _thread_devices():
    # This thread's Devices: a list indexed by ordinal, None where not made yet.
    cdef PyObject* state = PyThreadState_GetDict()
    cdef PyObject* found
    if state == NULL:
        raise RuntimeError("Device: this thread has no Python thread state")
    found = PyDict_GetItemWithError(<object>state, _DEVICES_KEY)
    if found != NULL:
        return <list><object>found
    devices = [None] * _device_count()
    (<dict><object>state)[_DEVICES_KEY] = devices
    return devices


# The device count, asked of the driver once: it cannot change in a process.
cdef int _known_device_count = -1


cdef int _device_count() except -1:
    global _known_device_count, _call_known_device_count
    cdef int count
    if _known_device_count >= 0:
        return _known_device_count
    with nogil:
        count = cpp.device_count()
    _known_device_count = count
    _call_known_device_count = count
    return count


cdef int _device_ordinal(device) except -1:
    # A Device or an int, checked against the devices present.
    cdef int overflow = 0
    cdef long long value
    if type(device) is int:
        value = PyLong_AsLongLongAndOverflow(device, &overflow)
        if overflow == 0 and 0 <= value < _device_count():
            return <int>value
    elif isinstance(device, Device):
        return device._id
    try:
        ordinal = device.__index__()
    except AttributeError:
        raise TypeError(f"device must be a Device or an int, not {type(device).__name__}") from None
    count = _device_count()
    if not 0 <= ordinal < count:
        raise ValueError(f"device_id must be within [0, {count}), got {ordinal}")
    return ordinal


cdef object _primary_context(int ordinal):
    # The device's primary context, as a Context.
    cdef cpp.CUcontext handle
    with nogil:
        handle = cpp.device_primary_context(ordinal)
    return Context._wrap(<uintptr_t>handle, ordinal)


cdef object _green_current(device):
    # The green Context that device.set_current(ctx) made current on this
    # thread, while it still is; else None.
    cdef Context ctx = device._current
    cdef cpp.CUcontext current
    if ctx is None or ctx._green.get() == NULL or ctx._closed:
        return None
    with nogil:
        current = _current_context()
    return ctx if <uintptr_t>current == ctx._handle else None


cdef object _device_call(object cls, object device_id):
    # Device(device_id) for cls: this thread's Device of that ordinal, made
    # at its first use.
    cdef cpp.CUcontext current
    cdef int ordinal
    cdef PyObject* found
    if device_id is None:
        with nogil:
            current = _current_context()
        if current != NULL:
            with nogil:
                ordinal = _context_device(current)
        else:
            ordinal = 0
            _device_ordinal(0)
    else:
        ordinal = _device_ordinal(device_id)
    devices = _thread_devices()
    device = devices[ordinal]
    if device is not None:
        return device
    device = object.__new__(cls)
    device._id = ordinal
    device._memory_resource = None
    device._properties = None
    device._entered = []
    device._current = None
    devices[ordinal] = device
    return device


class Device:
    """A CUDA device. Device() is the device of the current context, or 0 when
    none is current; Device(n) is device n. There is one Device object per
    device per thread."""

    # _current: the Context set_current(ctx) made current, kept alive while it is.
    __slots__ = ("_id", "_memory_resource", "_properties", "_entered", "_current", "__weakref__")

    def __new__(cls, device_id=None):
        # Device(...) itself reaches _device_call directly (install_device_call
        # below); this is the way of subclasses and of keyword arguments.
        return _device_call(cls, device_id)

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

    def to_system_device(self):
        """The :class:`cubind.core.system.Device` of this GPU (its NVML view:
        temperatures, clocks, PCI and NVLink state, ...), found by UUID.

        Raises what the NVML query raises where NVML is missing or does not
        know the UUID (cubind.core.system's NVML errors).
        """
        from cubind.core.system import Device as SystemDevice

        # NVML takes the UUID as CUDA writes it, without its "GPU-"/"MIG-"
        # prefix, which is also right for a MIG device's.
        return SystemDevice(uuid=self.uuid)

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
            from cubind.core._device_properties import DeviceProperties

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
        """The context of this device current on this thread: a green context
        made current by set_current(ctx), else the primary context."""
        green = _green_current(self)
        if green is not None:
            return green
        return _primary_context(self._id)

    @property
    def resources(self):
        """The device's hardware resources: DeviceResources, whose sm is all
        of its SMs, to split for green contexts (Device.create_context)."""
        return DeviceResources._of(self._id, 0, shared_ptr[cpp.GreenContext]())

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
        (cuCtxSetCurrent). With ctx (a Context of this device, a green one
        too), makes that one current instead and returns the Context that was;
        the device keeps ctx alive while it is current."""
        # device.set_current() itself, on a Device of this class, is
        # _device_call.hpp's set_current_method (installed below the class),
        # which leaves every other call to this method.
        cdef int ordinal = self._id
        cdef int previous_device = -1
        cdef cpp.CUcontext previous
        if ctx is None:
            with nogil:
                cpp.device_set_current(ordinal)
            self._current = None
            return None
        if not isinstance(ctx, Context):
            raise TypeError(f"Device.set_current: ctx must be a Context or None, not {type(ctx).__name__}")
        (<Context>ctx)._require_open()
        if (<Context>ctx)._device_id != ordinal:
            raise ValueError(
                f"Device.set_current: ctx belongs to device {(<Context>ctx)._device_id}, not to device {ordinal}"
            )
        with nogil:
            previous = _current_context()
            _make_current(<cpp.CUcontext>(<Context>ctx)._handle)
            if previous != NULL:
                previous_device = _context_device(previous)
        self._current = ctx
        if previous == NULL:
            return None
        return _context_of(<uintptr_t>previous, previous_device)

    def create_context(self, options=None):
        """A new green context on this device, made of the SMResource groups of
        ContextOptions.resources (cuDevResourceGenerateDesc, cuGreenCtxCreate).
        It is not made current: pass it to set_current, or make streams in it
        with Context.create_stream."""
        if options is None:
            # As in cuda.core: only green contexts are made here.
            raise NotImplementedError(
                "Device.create_context: options is None, and only green contexts can be made; pass "
                "ContextOptions(resources=[...]) with groups of Device.resources.sm.split(...) (the primary "
                "context is Device.context)"
            )
        options = _checked_options(options, ContextOptions, "Device.create_context")
        if options.resources is None:
            raise NotImplementedError(
                "Device.create_context: ContextOptions.resources is None, and only green contexts can be made; "
                "give the SMResource groups of Device.resources.sm.split(...)"
            )
        return Context._create_green(self._id, options.resources)

    def create_stream(self, obj=None, options=None):
        """A new stream on this device (cuStreamCreateWithPriority), or, with
        obj, a Stream over a foreign object's stream (__cuda_stream__), which
        is kept alive with it. While set_current(ctx) has a green context
        current, a new stream is that context's (Context.create_stream)."""
        # device.create_stream() itself, on a Device of this class, is
        # _device_call.hpp's create_stream_method (installed below the class).
        cdef int ordinal
        if obj is None:
            if _plain_device_ordinal(self, &ordinal):
                return _new_stream(ordinal, options)
            green = _green_current(self)
            if green is not None:
                return Stream._init_green(green, options)
            return _new_stream(self._id, options)
        return Stream._init(obj, options, self._id)

    def create_graph_builder(self):
        """A GraphBuilder capturing on a new stream of this device, which it
        owns (closed with the builder)."""
        from cubind.core._graph._graph_builder import _graph_builder_on

        return _graph_builder_on(self.create_stream(), True)

    def create_opaque_array(self, options):
        """A new OpaqueArray on this device (cuArray3DCreate): options is an
        OpaqueArrayOptions or a dict of its fields."""
        from cubind.core.texture._array import _create_opaque_array

        return _create_opaque_array(options, self._id)

    def create_mipmapped_array(self, options):
        """A new MipmappedArray on this device (cuMipmappedArrayCreate):
        options is a MipmappedArrayOptions or a dict of its fields."""
        from cubind.core.texture._mipmapped_array import _create_mipmapped_array

        return _create_mipmapped_array(options, self._id)

    def create_texture_object(self, *, resource, options=None):
        """A new TextureObject on this device reading resource (a
        ResourceDescriptor) with options (a TextureObjectOptions, a dict of
        its fields, or None for the defaults) (cuTexObjectCreate)."""
        from cubind.core.texture._texture import _create_texture_object

        return _create_texture_object(resource, options, self._id)

    def create_surface_object(self, *, resource):
        """A new SurfaceObject on this device over resource, a
        ResourceDescriptor of an OpaqueArray made with
        is_surface_load_store=True (cuSurfObjectCreate)."""
        from cubind.core.texture._surface import _create_surface_object

        return _create_surface_object(resource, self._id)

    def create_event(self, options=None):
        """A new event on this device, not yet recorded (cuEventCreate); in
        the green context set_current(ctx) made current, while it is."""
        cdef bint timing
        cdef cpp.EventOptions event_options
        cdef int ordinal
        if _plain_device_ordinal(self, &ordinal):
            return _new_event(ordinal, options)
        cdef Context green = _green_current(self)
        if green is not None:
            _event_options(options, &timing, &event_options)
            return Event._make(self._id, timing, event_options, green._green, green._handle, NULL)
        return _new_event(self._id, options)

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
            previous = _current_context()
            cpp.device_set_current(ordinal)
        self._entered.append(<uintptr_t>previous)
        return self

    def __exit__(self, *exc):
        cdef uintptr_t previous = self._entered.pop()
        with nogil:
            _make_current(<cpp.CUcontext>previous)
        return False


# For the modules this one loads, which cannot import Device by name while it loads.
_Device = Device
_install_device_call(Device, _device_call, _DEVICES_KEY)


cdef object _new_default_stream(int ordinal):
    return _new_stream(ordinal, None)


# device.set_current() and device.create_stream() in C, reading and writing
# the slots where a Device keeps its ordinal and the context set_current(ctx)
# made current (when either is not found, -1, the Python methods stay).
_install_device_methods(Device, _slot_offset(Device, b"_id"), _slot_offset(Device, b"_current"), _new_default_stream)

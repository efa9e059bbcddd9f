# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# The memory pools: DeviceMemoryResource and PinnedMemoryResource (cubind::DeviceMemoryResource,
# cubind::PinnedMemoryResource over cubind::MemoryPool), and LegacyPinnedMemoryResource.

from libc.stdint cimport uint64_t, uintptr_t
from libcpp cimport bool as cbool
from libcpp.memory cimport shared_ptr, static_pointer_cast

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device, _device_count, _device_ordinal
from cubind.core._errors cimport _raw_handle
from cubind.core._memory._buffer cimport _allocate, MemoryResource
from cubind.core._memory._ipc cimport (
    _alloc_handle_arg,
    IPCAllocationHandle,
    _new_uuid,
    _pool_from_registry,
    _pool_registry,
    _require_ipc,
)
from cubind.core._stream cimport _legacy_default_stream as LEGACY_DEFAULT_STREAM

from collections.abc import MutableSet as _MutableSet
from cubind.core import _reduction
from cubind.core._memory._ipc import _reduce_device_memory_resource, _reduce_pinned_memory_resource
from cubind.core._options import DeviceMemoryResourceOptions, PinnedMemoryResourceOptions


class _PoolAttributes:
    """What a memory resource's pool reports (cuMemPoolGetAttribute)."""

    __slots__ = ("_mr",)

    def __init__(self, mr):
        self._mr = mr

    @property
    def release_threshold(self):
        return self._mr._pool_query(0)

    @property
    def reserved_mem_current(self):
        return self._mr._pool_query(1)

    @property
    def used_mem_current(self):
        return self._mr._pool_query(2)

    def __repr__(self):
        return (f"<pool attributes release_threshold={self.release_threshold} "
                f"reserved_mem_current={self.reserved_mem_current} used_mem_current={self.used_mem_current}>")


class PeerAccessibleBySetProxy(_MutableSet):
    """The devices that may access a DeviceMemoryResource's memory besides its
    own, as Device objects: adding a device (a Device or its ordinal) grants
    access to the pool (cuMemPoolSetAccess), discarding revokes it. The
    pool's own device is ignored, as in cuda.core."""

    __slots__ = ("_mr",)

    def __init__(self, mr):
        self._mr = mr

    @classmethod
    def _from_iterable(cls, it):
        # What the set operators (|, &, -, ^) return: a plain set of Devices.
        return set(it)

    def _peer(self, device):
        # The ordinal of device, or None for the pool's own device.
        ordinal = _device_ordinal(device)
        return None if ordinal == self._mr.device_id else ordinal

    def __contains__(self, device):
        if not isinstance(device, (Device, int)):
            return False
        ordinal = self._peer(device)
        return ordinal is not None and bool(self._mr._peer_access(ordinal, 0))

    def __iter__(self):
        own = self._mr.device_id
        return iter([Device(i) for i in range(_device_count()) if i != own and self._mr._peer_access(i, 0)])

    def __len__(self):
        return sum(1 for _ in self)

    def add(self, device):
        ordinal = self._peer(device)
        if ordinal is not None:
            self._mr._peer_access(ordinal, 1)

    def discard(self, device):
        ordinal = self._peer(device)
        if ordinal is not None:
            self._mr._peer_access(ordinal, -1)

    def update(self, *others):
        for other in others:
            for device in other:
                self.add(device)

    def difference_update(self, *others):
        for other in others:
            for device in other:
                self.discard(device)

    def intersection_update(self, *others):
        keep = {d.device_id for d in self}
        for other in others:
            keep &= {_device_ordinal(d) for d in other}
        for device in list(self):
            if device.device_id not in keep:
                self.discard(device)

    def symmetric_difference_update(self, other):
        for device in {_device_ordinal(d) for d in other}:
            if device in self:
                self.discard(device)
            else:
                self.add(device)

    def __repr__(self):
        return f"{{{', '.join(repr(d) for d in self)}}}"


cdef class _MemPool(MemoryResource):
    """What DeviceMemoryResource and PinnedMemoryResource share: a
    stream-ordered memory pool (cubind::MemoryPool), owned or the driver's,
    and its IPC state: an IPC-enabled pool exports itself as an
    IPCAllocationHandle with a uuid; a pool imported from another process
    ("mapped") maps that process's buffers and cannot allocate."""


    cdef int _adopt(self, cpp.MemoryPool* pool) except -1:
        # Takes a pool the C++ core made; an IPC-enabled one exports itself
        # at once, so that it has its uuid from the start.
        cdef int fd
        self._pool = shared_ptr[cpp.MemoryPool](pool)
        self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.MemoryPool](self._pool)
        if not pool.is_imported():
            self._direct_pool = pool.handle()
        if pool.is_ipc_enabled():
            with nogil:
                fd = cpp.pool_export_fd(pool[0])
            self._alloc_handle = IPCAllocationHandle._init(fd, _new_uuid())
        return 0

    cdef cpp.MemoryPool* _get(self) except NULL:
        if not self._pool:
            raise RuntimeError(f"{type(self).__name__} has been closed")
        return self._pool.get()

    cdef int _ensure(self) except -1:
        self._get()
        return 0

    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._pool.reset()

    def allocate(self, size, *, stream):
        if self._mapped:
            raise TypeError(
                f"Cannot allocate from a mapped IPC-enabled memory resource: this {type(self).__name__} was "
                "imported from another process, which alone allocates from the pool"
            )
        return _allocate(self, size, stream)

    def close(self):
        """Lets go of the pool: one of its own is destroyed once its buffers
        are. The allocation handle is closed with it."""
        self._pool = shared_ptr[cpp.MemoryPool]()
        self._cpp = shared_ptr[cpp.MemoryResource]()
        self._direct_pool = NULL
        if self._alloc_handle is not None:
            self._alloc_handle.close()
            self._alloc_handle = None

    @property
    def is_closed(self):
        return not self._pool

    @property
    def handle(self):
        """The CUmemoryPool (cubind.bindings.driver.CUmemoryPool)."""
        return _raw_handle("driver", "CUmemoryPool", <uintptr_t>self._get().handle())

    @property
    def is_handle_owned(self):
        return self._get().owns_pool()

    @property
    def is_ipc_enabled(self):
        if not self._pool:
            return False
        return self._pool.get().is_ipc_enabled()

    @property
    def is_mapped(self):
        """Imported from another process: it maps that process's buffers
        and cannot allocate."""
        return self._mapped

    @property
    def uuid(self):
        """The uuid of an IPC-enabled pool (its exporter's, for a mapped
        one); None otherwise."""
        return None if self._alloc_handle is None else self._alloc_handle.uuid

    @property
    def allocation_handle(self):
        """The pool as an IPCAllocationHandle (a POSIX file descriptor) for
        another process: made once, owned by this resource."""
        self._get()
        _require_ipc(self, "export")
        return self._alloc_handle

    def register(self, uuid):
        """Registers this mapped resource under uuid (its exporter's), for
        from_registry and for unpickling buffers; returns the resource
        already registered under uuid, if any."""
        self._get()
        existing = _pool_registry.get(uuid)
        if existing is not None and not existing.is_closed:
            return existing
        _require_ipc(self, "register")
        if self.uuid is not None and self.uuid != uuid:
            raise ValueError(f"{type(self).__name__}.register: this resource's uuid is {self.uuid}, not {uuid}")
        _pool_registry[uuid] = self
        (<IPCAllocationHandle>self._alloc_handle)._uuid = uuid
        return self

    def __reduce__(self):
        # Plain pickle: by uuid, for a process that imported the pool already.
        # multiprocessing sends the pool itself (its reducer, below).
        _require_ipc(self, "pickle")
        return type(self).from_registry, (self.uuid,)

    @property
    def attributes(self):
        return _PoolAttributes(self)

    def _pool_query(self, int which):
        cdef cpp.MemoryPool* pool = self._get()
        cdef uint64_t value
        with nogil:
            if which == 0:
                value = pool.release_threshold()
            elif which == 1:
                value = pool.reserved_memory()
            else:
                value = pool.used_memory()
        return value


cdef _MemPool _import_pool(_MemPool self, object alloc_handle, int ordinal, bint pinned, str where):
    # from_allocation_handle: the registry's resource for the handle's uuid,
    # else the pool imported here (and registered when the uuid is known).
    if isinstance(alloc_handle, IPCAllocationHandle) and not alloc_handle.is_closed:
        known = _pool_registry.get(alloc_handle.uuid) if alloc_handle.uuid is not None else None
        if known is not None and not known.is_closed:
            if not isinstance(known, type(self)):
                raise TypeError(
                    f"the registry holds a {type(known).__name__} under {alloc_handle.uuid}, "
                    f"not a {type(self).__name__}"
                )
            return known
    handle = _alloc_handle_arg(alloc_handle, where)
    cdef int fd = int(handle)
    with nogil:
        if pinned:
            self._pool = cpp.pinned_pool_import(ordinal, fd)
        else:
            self._pool = cpp.device_pool_import(ordinal, fd)
    self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.MemoryPool](self._pool)
    self._alloc_handle = handle
    self._mapped = True
    if handle.uuid is not None:
        self.register(handle.uuid)
    return self


cdef int _device_pool_options(options, cpp.DeviceMemoryResourceOptions* out) except -1:
    # The one conversion of a DeviceMemoryResourceOptions to the core's struct.
    if options.max_size < 0:
        raise ValueError(f"DeviceMemoryResourceOptions.max_size is {options.max_size}; it must be >= 0")
    out.max_size = options.max_size
    out.ipc_enabled = bool(options.ipc_enabled)
    return 0


cdef class DeviceMemoryResource(_MemPool):
    """DeviceMemoryResource(device_id, options=None)
--

Stream-ordered device memory from a pool (cuMemAllocFromPoolAsync,
    cuMemFreeAsync): the device's default pool without options, a new pool of
    its own with DeviceMemoryResourceOptions. With ipc_enabled=True the pool
    and its buffers can be shared with other processes (see the IPC guide)."""


    def __init__(self, device_id, options=None):
        cdef int ordinal
        cdef cpp.DeviceMemoryResourceOptions pool_options
        cdef cpp.MemoryPool* pool
        if options is None:
            ordinal = _device_ordinal(device_id)
            self._device_id = ordinal
            with nogil:
                pool = cpp.device_pool_default(ordinal)
        else:
            if isinstance(options, dict):
                options = DeviceMemoryResourceOptions(**options)
            elif not isinstance(options, DeviceMemoryResourceOptions):
                raise TypeError(
                    f"options must be a DeviceMemoryResourceOptions, a dict or None, not {type(options).__name__}"
                )
            _device_pool_options(options, &pool_options)
            ordinal = _device_ordinal(device_id)
            self._device_id = ordinal
            with nogil:
                pool = cpp.device_pool_new(ordinal, pool_options)
        self._adopt(pool)

    @classmethod
    def from_allocation_handle(cls, device_id, alloc_handle):
        """The pool another process exported (its allocation_handle, or an
        int file descriptor, which is duplicated: the caller keeps and closes
        it), imported on device_id (cuMemPoolImportFromShareableHandle):
        a mapped resource, registered under the exporter's uuid when the
        handle carries it."""
        cdef DeviceMemoryResource self = DeviceMemoryResource.__new__(cls)
        self._device_id = _device_ordinal(device_id)
        return _import_pool(self, alloc_handle, self._device_id, False, "DeviceMemoryResource.from_allocation_handle")

    @staticmethod
    def from_registry(uuid):
        """The mapped DeviceMemoryResource registered under uuid.
        Raises RuntimeError when there is none."""
        return _pool_from_registry(DeviceMemoryResource, uuid)

    @property
    def device_id(self):
        return self._device_id

    @property
    def is_device_accessible(self):
        return True

    @property
    def is_host_accessible(self):
        return False

    def _peer_access(self, int peer, int change):
        # change: 1 grants, -1 revokes, 0 asks.
        cdef cpp.DeviceMemoryResource* pool = <cpp.DeviceMemoryResource*>self._get()
        cdef cbool accessible = False
        if peer == self._device_id:
            if change:
                raise ValueError(f"device {peer} is the pool's own device, which always has access")
            return True
        with nogil:
            if change > 0:
                cpp.pool_peer_access(pool, peer, 1)
            elif change < 0:
                cpp.pool_peer_access(pool, peer, -1)
            else:
                accessible = cpp.pool_peer_access(pool, peer, 0)
        return accessible

    @property
    def peer_accessible_by(self):
        """The other devices that may access this pool's memory: a live set of
        Device objects (add grants, discard revokes; each takes a Device or an
        ordinal). Assign an iterable of Devices or ordinals to set it whole."""
        return PeerAccessibleBySetProxy(self)

    @peer_accessible_by.setter
    def peer_accessible_by(self, devices):
        wanted = {_device_ordinal(d) for d in devices}
        current = {d.device_id for d in PeerAccessibleBySetProxy(self)}
        for d in current - wanted:
            self._peer_access(d, -1)
        for d in wanted - current:
            if d != self._device_id:
                self._peer_access(d, 1)


cdef int _pinned_pool_options(options, cpp.PinnedMemoryResourceOptions* out) except -1:
    # The one conversion of a PinnedMemoryResourceOptions to the core's struct.
    cdef int numa_id
    if options.max_size < 0:
        raise ValueError(f"PinnedMemoryResourceOptions.max_size is {options.max_size}; it must be >= 0")
    if options.numa_id is not None:
        if isinstance(options.numa_id, bool) or not isinstance(options.numa_id, int):
            raise TypeError(
                f"PinnedMemoryResourceOptions.numa_id must be an int or None, not {type(options.numa_id).__name__}"
            )
        if options.numa_id < 0:
            raise ValueError(f"numa_id must be >= 0, got {options.numa_id}")
        numa_id = options.numa_id
        out.numa_id = numa_id
    out.max_size = options.max_size
    out.ipc_enabled = bool(options.ipc_enabled)
    return 0


cdef class PinnedMemoryResource(_MemPool):
    """PinnedMemoryResource(options=None)
--

Stream-ordered page-locked host memory from a host memory pool
    (cuMemAllocFromPoolAsync on a pool placed on the host), readable and
    writable from the host and from every device that supports host pools.
    Without options, the driver's current pinned host pool (cuMemGetMemPool);
    with PinnedMemoryResourceOptions, a pool of its own: ipc_enabled shares it
    with other processes (placed on a NUMA node, the current device's unless
    numa_id says which), max_size bounds it. The current device's context
    makes the allocation calls on the default streams."""


    def __init__(self, options=None):
        cdef int ordinal
        cdef cpp.PinnedMemoryResourceOptions pool_options
        cdef cpp.PinnedMemoryResource* pool
        if options is not None:
            if isinstance(options, dict):
                options = PinnedMemoryResourceOptions(**options)
            elif not isinstance(options, PinnedMemoryResourceOptions):
                raise TypeError(
                    f"options must be a PinnedMemoryResourceOptions, a dict or None, not {type(options).__name__}"
                )
            _pinned_pool_options(options, &pool_options)
        ordinal = Device()._id
        with nogil:
            if options is None:
                pool = cpp.pinned_pool_current(ordinal)
            else:
                pool = cpp.pinned_pool_new(ordinal, pool_options)
        self._numa_id = pool.numa_id()
        self._adopt(pool)

    @classmethod
    def from_allocation_handle(cls, alloc_handle):
        """The pinned pool another process exported (its allocation_handle,
        or an int file descriptor, which is duplicated), imported with the
        current device's context: a mapped resource, registered under the
        exporter's uuid when the handle carries it."""
        cdef PinnedMemoryResource self = PinnedMemoryResource.__new__(cls)
        self._numa_id = -1
        return _import_pool(self, alloc_handle, Device()._id, True, "PinnedMemoryResource.from_allocation_handle")

    @staticmethod
    def from_registry(uuid):
        """The mapped PinnedMemoryResource registered under uuid.
        Raises RuntimeError when there is none."""
        return _pool_from_registry(PinnedMemoryResource, uuid)

    @property
    def device_id(self):
        return -1

    @property
    def numa_id(self):
        """The host NUMA node the pool is placed on; -1 when the system
        chooses, and for a mapped pool."""
        return self._numa_id

    @property
    def is_device_accessible(self):
        return True

    @property
    def is_host_accessible(self):
        return True


cdef class LegacyPinnedMemoryResource(MemoryResource):
    """LegacyPinnedMemoryResource()
--

Page-locked host memory (cuMemHostAlloc); stream is optional."""

    def __init__(self):
        pass

    cdef int _ensure(self) except -1:
        cdef int ordinal
        if not self._cpp:
            ordinal = Device()._id
            with nogil:
                self._cpp = shared_ptr[cpp.MemoryResource](cpp.legacy_pinned_new(ordinal))
        return 0

    def allocate(self, size, *, stream=None):
        return MemoryResource.allocate(self, size, stream=LEGACY_DEFAULT_STREAM if stream is None else stream)

    def deallocate(self, ptr, size, *, stream=None):
        MemoryResource.deallocate(self, ptr, size, stream=LEGACY_DEFAULT_STREAM if stream is None else stream)

    @property
    def device_id(self):
        return -1

    @property
    def is_device_accessible(self):
        return True

    @property
    def is_host_accessible(self):
        return True


_reduction.register(DeviceMemoryResource, _reduce_device_memory_resource)


_reduction.register(PinnedMemoryResource, _reduce_pinned_memory_resource)

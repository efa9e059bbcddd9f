# Buffer and the memory resources (cubind::Buffer, cubind::MemoryResource
# and its device-pool, pinned-pool and cuMemHostAlloc implementations), with
# the IPC of pools and buffers (the descriptor classes are in _ipc.pxi).

from collections.abc import MutableSet as _MutableSet


cdef class MemoryResource:
    """MemoryResource()
--

Where Buffers get their memory. Subclass it in Python to provide one:
    allocate(size, *, stream) returns a Buffer (Buffer.from_handle(ptr, size,
    self) for memory of your own), deallocate(ptr, size, *, stream) takes it
    back; is_device_accessible, is_host_accessible and device_id describe it."""

    cdef shared_ptr[cpp.MemoryResource] _cpp

    cdef int _ensure(self) except -1:
        # Resources that need a driver create their C++ resource here, at first use.
        return 0

    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._cpp.reset()

    def allocate(self, size, *, stream):
        return _allocate(self, size, stream)

    def deallocate(self, ptr, size, *, stream):
        cdef uintptr_t address = _handle_address(ptr, self, "deallocate", "ptr")
        cdef size_t nbytes
        cdef cpp.CUstream handle
        if isinstance(size, float) or not hasattr(size, "__index__") or size < 0:
            raise TypeError(f"{type(self).__name__}.deallocate: size must be an int >= 0, not {size!r}")
        nbytes = size
        self._ensure()
        if not self._cpp:
            raise NotImplementedError(f"{type(self).__name__} must implement deallocate(ptr, size, *, stream)")
        handle = _stream_handle(stream)
        with nogil:
            self._cpp.get().deallocate(<void*>address, nbytes, cpp.StreamRef(handle))

    @property
    def is_device_accessible(self):
        if not self._cpp:
            raise NotImplementedError(f"{type(self).__name__} must implement is_device_accessible")
        return self._cpp.get().is_device_accessible()

    @property
    def is_host_accessible(self):
        if not self._cpp:
            raise NotImplementedError(f"{type(self).__name__} must implement is_host_accessible")
        return self._cpp.get().is_host_accessible()

    @property
    def is_managed(self):
        return False

    @property
    def device_id(self):
        if not self._cpp:
            raise NotImplementedError(f"{type(self).__name__} must implement device_id")
        return self._cpp.get().device_id()


cdef Buffer _allocate(MemoryResource mr, object size, object stream):
    # MemoryResource.allocate, and Device.allocate's path to its resource
    # without a second Python call: the size and stream checked, the memory
    # taken with the GIL released, the Buffer filled in.
    cdef Buffer buffer
    cdef cpp.CUstream handle
    cdef size_t nbytes
    mr._ensure()
    if not mr._cpp:
        raise NotImplementedError(f"{type(mr).__name__} must implement allocate(size, *, stream)")
    handle = _stream_handle(stream)
    nbytes = _size_arg(size, mr, "allocate")
    buffer = Buffer.__new__(Buffer)
    with nogil:
        buffer._cpp.reset(cpp.buffer_allocate(mr._cpp, nbytes, handle))
    buffer._ptr = <uintptr_t>buffer._cpp.get().handle()
    buffer._size = nbytes
    buffer._mr = mr
    buffer._stream = stream
    return buffer


cdef inline size_t _size_arg(object size, object owner, str method) except? 0:
    # A size in bytes (an int, or anything with __index__) of at least 1; the
    # error names owner's class and method, and is only built on failure.
    cdef int overflow = 0
    cdef long long value
    if PyLong_CheckExact(size):
        value = PyLong_AsLongLongAndOverflow(size, &overflow)
        if overflow == 0 and value > 0:
            return <size_t>value
    return _size_arg_slow(size, owner, method)


cdef size_t _size_arg_slow(object size, object owner, str method) except? 0:
    where = _where(owner, method, "size")
    try:
        value = size.__index__()
    except AttributeError:
        raise TypeError(f"{where} must be an int, not {type(size).__name__}") from None
    if value <= 0:
        raise ValueError(f"{where} is {value}; it must be at least 1 byte")
    if value >= 2**63:
        raise ValueError(f"{where} is {value}, more than any device can hold")
    return value


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
    """The devices (ids) that may access a DeviceMemoryResource's memory
    besides its own: adding a device grants access to the pool
    (cuMemPoolSetAccess), discarding revokes it."""

    __slots__ = ("_mr",)

    def __init__(self, mr):
        self._mr = mr

    def __contains__(self, device):
        return self._mr._peer_access(_device_ordinal(device), 0)

    def __iter__(self):
        own = self._mr.device_id
        return iter([i for i in range(_device_count()) if i != own and self._mr._peer_access(i, 0)])

    def __len__(self):
        return sum(1 for _ in self)

    def add(self, device):
        self._mr._peer_access(_device_ordinal(device), 1)

    def discard(self, device):
        self._mr._peer_access(_device_ordinal(device), -1)

    def __repr__(self):
        return f"{{{', '.join(str(d) for d in self)}}}"


cdef class _MemPool(MemoryResource):
    """What DeviceMemoryResource and PinnedMemoryResource share: a
    stream-ordered memory pool (cubind::MemoryPool), owned or the driver's,
    and its IPC state: an IPC-enabled pool exports itself as an
    IPCAllocationHandle with a uuid; a pool imported from another process
    ("mapped") maps that process's buffers and cannot allocate."""

    cdef shared_ptr[cpp.MemoryPool] _pool
    cdef object _alloc_handle
    cdef bint _mapped
    cdef object __weakref__

    cdef int _adopt(self, cpp.MemoryPool* pool) except -1:
        # Takes a pool the C++ core made; an IPC-enabled one exports itself
        # at once, so that it has its uuid from the start.
        cdef int fd
        self._pool = shared_ptr[cpp.MemoryPool](pool)
        self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.MemoryPool](self._pool)
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


cdef class DeviceMemoryResource(_MemPool):
    """DeviceMemoryResource(device_id, options=None)
--

Stream-ordered device memory from a pool (cuMemAllocFromPoolAsync,
    cuMemFreeAsync): the device's default pool without options, a new pool of
    its own with DeviceMemoryResourceOptions. With ipc_enabled=True the pool
    and its buffers can be shared with other processes (see the IPC guide)."""

    cdef int _device_id

    def __init__(self, device_id, options=None):
        cdef int ordinal
        cdef size_t max_size = 0
        cdef cbool ipc_enabled = False
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
            if options.max_size < 0:
                raise ValueError(f"DeviceMemoryResourceOptions.max_size is {options.max_size}; it must be >= 0")
            max_size = options.max_size
            ipc_enabled = bool(options.ipc_enabled)
            ordinal = _device_ordinal(device_id)
            self._device_id = ordinal
            with nogil:
                pool = cpp.device_pool_new(ordinal, max_size, ipc_enabled)
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
        device ids (add grants, discard revokes). Assign an iterable of devices
        to set it whole."""
        return PeerAccessibleBySetProxy(self)

    @peer_accessible_by.setter
    def peer_accessible_by(self, devices):
        wanted = {_device_ordinal(d) for d in devices}
        current = set(PeerAccessibleBySetProxy(self))
        for d in current - wanted:
            self._peer_access(d, -1)
        for d in wanted - current:
            if d != self._device_id:
                self._peer_access(d, 1)


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

    cdef int _numa_id

    def __init__(self, options=None):
        cdef int ordinal
        cdef size_t max_size = 0
        cdef cbool ipc_enabled = False
        cdef int numa_id = -1
        cdef cpp.PinnedMemoryResource* pool
        if options is not None:
            if isinstance(options, dict):
                options = PinnedMemoryResourceOptions(**options)
            elif not isinstance(options, PinnedMemoryResourceOptions):
                raise TypeError(
                    f"options must be a PinnedMemoryResourceOptions, a dict or None, not {type(options).__name__}"
                )
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
            max_size = options.max_size
            ipc_enabled = bool(options.ipc_enabled)
        ordinal = Device()._id
        with nogil:
            if options is None:
                pool = cpp.pinned_pool_current(ordinal)
            else:
                pool = cpp.pinned_pool_new(ordinal, max_size, ipc_enabled, numa_id)
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


multiprocessing.reduction.register(DeviceMemoryResource, _reduce_device_memory_resource)
multiprocessing.reduction.register(PinnedMemoryResource, _reduce_pinned_memory_resource)


# Made and dropped by the million (allocate + close): a free list spares the allocator.
@cython.freelist(16)
cdef class Buffer:
    """A block of memory from a MemoryResource (Device.allocate,
    MemoryResource.allocate), or one owned elsewhere (Buffer.from_handle).
    close() returns it to its resource, stream-ordered."""

    cdef unique_ptr[cpp.Buffer] _cpp
    cdef uintptr_t _ptr
    cdef size_t _size
    cdef object _mr
    cdef object _owner
    cdef object _stream
    cdef Py_ssize_t _exports
    # The IPC descriptor, once asked for or when imported; whether imported.
    cdef object _ipc
    cdef bint _mapped

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Buffer objects cannot be instantiated directly. Please use MemoryResource APIs.")

    def __dealloc__(self):
        if cpp.in_forked_child():
            # The memory is the parent's, and the driver unusable here: let go.
            self._cpp.release()
            return
        # A closed Buffer (the common end) has nothing left to return.
        if self._cpp or (self._mr is not None and self._ptr != 0):
            try:
                self._free(None)
            except BaseException:
                pass
        if self._cpp:
            with nogil:
                self._cpp.reset()

    cdef int _free(self, object stream) except -1:
        # Returns the memory, ordered on stream, or on the deallocation stream
        # (set_deallocation_stream's, else the allocation's) when None.
        cdef cpp.CUstream handle
        if stream is None:
            stream = self._stream
            if isinstance(stream, Stream) and (<Stream>stream)._closed:
                # That stream was closed first. Its queued work still runs, so
                # the free waits for the device to finish it and then goes to
                # the legacy stream: the destroyed stream's handle would hand
                # the driver a dangling pointer.
                device_id = getattr(self._mr, "device_id", -1)
                (Device(device_id) if device_id >= 0 else Device()).sync()
                stream = LEGACY_DEFAULT_STREAM
        if self._cpp:
            if stream is not None:
                handle = _stream_handle(stream)
                with nogil:
                    self._cpp.get().close(cpp.StreamRef(handle))
            else:
                with nogil:
                    self._cpp.get().close()
            self._cpp.reset()
        elif self._mr is not None and self._ptr != 0:
            self._mr.deallocate(self._ptr, self._size, stream=LEGACY_DEFAULT_STREAM if stream is None else stream)
        return 0

    @staticmethod
    def from_handle(ptr, size, mr=None, owner=None, *, stream=None):
        """A Buffer over memory allocated elsewhere: ptr (an int address),
        size in bytes. With mr, close() returns it through
        mr.deallocate(ptr, size, stream=...); owner (not with mr) is kept
        alive as long as the Buffer."""
        cdef Buffer self = Buffer.__new__(Buffer)
        if mr is not None and owner is not None:
            raise ValueError("owner and memory resource cannot be both specified together")
        if mr is not None and not isinstance(mr, MemoryResource):
            raise TypeError(f"Buffer.from_handle: mr must be a MemoryResource or None, not {type(mr).__name__}")
        self._ptr = _handle_address(ptr, "Buffer", "from_handle", "ptr")
        if size < 0:
            raise ValueError(f"Buffer.from_handle: size is {size}; it must be >= 0")
        self._size = size
        self._mr = mr
        self._owner = owner
        if stream is not None:
            _stream_handle(stream)
        self._stream = stream
        return self

    cdef int _require_open(self) except -1:
        if self._ptr == 0 and self._size == 0 and not self._cpp:
            raise RuntimeError("Buffer has been closed")
        return 0

    def close(self, stream=None):
        """Returns the memory to its resource, ordered on stream (or on the
        allocation or deallocation stream); the Buffer is closed after."""
        cdef cpp.CUstream handle
        if self._exports:
            raise BufferError("Buffer.close: a memoryview of the buffer is still open")
        self._free(stream)
        self._ptr = 0
        self._size = 0
        self._mr = None
        self._owner = None
        self._stream = None
        self._ipc = None
        self._mapped = False

    @property
    def is_closed(self):
        return self._ptr == 0 and self._size == 0 and not self._cpp

    @property
    def ipc_descriptor(self):
        """The IPCBufferDescriptor another process maps this buffer with
        (cuMemPoolExportPointer); the buffer must come from an IPC-enabled
        DeviceMemoryResource or PinnedMemoryResource."""
        cdef char payload[64]
        self._require_open()
        if self._ipc is not None:
            return self._ipc
        if not isinstance(self._mr, _MemPool) or not self._mr.is_ipc_enabled or not self._cpp:
            raise RuntimeError(
                "Buffer.ipc_descriptor: the buffer's memory resource is not IPC-enabled; allocate it from a "
                "DeviceMemoryResource or PinnedMemoryResource created with ipc_enabled=True to share it with "
                f"other processes (its memory resource: {type(self._mr).__name__})"
            )
        with nogil:
            cpp.buffer_export_ipc(self._cpp.get()[0], payload)
        self._ipc = IPCBufferDescriptor._init(payload[:64], self._size)
        return self._ipc

    @classmethod
    def from_ipc_descriptor(cls, mr, ipc_descriptor, *, stream):
        """Maps a buffer another process exported (its ipc_descriptor) through
        mr, the pool imported from that process (cuMemPoolImportPointer).
        Closing it unmaps it, ordered on stream; the exporting process frees
        the memory, and must not before this one has closed it."""
        cdef Buffer self
        cdef _MemPool pool
        cdef cpp.CUstream handle
        cdef bytes payload
        cdef const char* data
        cdef size_t size
        if not isinstance(mr, _MemPool):
            raise TypeError(
                "Buffer.from_ipc_descriptor: mr must be a DeviceMemoryResource or PinnedMemoryResource, "
                f"not {type(mr).__name__}"
            )
        if not isinstance(ipc_descriptor, IPCBufferDescriptor):
            raise TypeError(
                f"Buffer.from_ipc_descriptor: ipc_descriptor must be an IPCBufferDescriptor, "
                f"not {type(ipc_descriptor).__name__}"
            )
        pool = <_MemPool>mr
        pool._get()
        if not pool.is_ipc_enabled:
            raise RuntimeError(
                f"Buffer.from_ipc_descriptor: the {type(mr).__name__} is not IPC-enabled; pass the resource "
                "imported from the exporting process (from_allocation_handle)"
            )
        payload = _payload_of((<IPCBufferDescriptor>ipc_descriptor)._payload, "Buffer.from_ipc_descriptor")
        size = (<IPCBufferDescriptor>ipc_descriptor)._size
        data = payload
        handle = _stream_handle(stream)
        self = Buffer.__new__(Buffer)
        with nogil:
            self._cpp.reset(cpp.buffer_import_ipc(pool._pool, data, size, handle))
        self._ptr = <uintptr_t>self._cpp.get().handle()
        self._size = size
        self._mr = mr
        self._stream = stream
        self._ipc = ipc_descriptor
        self._mapped = True
        return self

    @staticmethod
    def _reduce_helper(mr, ipc_descriptor):
        # Unpickling: a mapping freed on the default stream of the pool's
        # device (the sender's stream means nothing here).
        device_id = mr.device_id
        device = Device(device_id) if device_id >= 0 else Device()
        device.set_current()
        return Buffer.from_ipc_descriptor(mr, ipc_descriptor, stream=device.default_stream)

    def __reduce__(self):
        # Pickled as its memory resource and descriptor: unpickling maps the
        # memory, so unpickle buffers only from trusted senders.
        self._require_open()
        return Buffer._reduce_helper, (self._mr, self.ipc_descriptor)

    def set_deallocation_stream(self, stream):
        """The stream close() frees on by default."""
        _stream_handle(stream)
        self._stream = stream

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def copy_to(self, dst=None, *, stream, options=None):
        """Copies this buffer into dst (a new buffer of the same resource when
        None), ordered on stream; returns dst. Sizes must be equal."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef Buffer target
        self._require_open()
        if options is not None:
            raise NotImplementedError("Buffer.copy_to: options (CopyOptions) are not supported yet")
        if dst is None:
            if self._mr is None:
                raise ValueError("Buffer.copy_to: a buffer without a memory resource needs dst")
            dst = self._mr.allocate(self._size, stream=stream)
        if not isinstance(dst, Buffer):
            raise TypeError(f"Buffer.copy_to: dst must be a Buffer, not {type(dst).__name__}")
        target = <Buffer>dst
        _copy(target, self, handle)
        return dst

    def copy_from(self, src, *, stream, options=None):
        """Copies src into this buffer, ordered on stream. Sizes must be equal."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        self._require_open()
        if options is not None:
            raise NotImplementedError("Buffer.copy_from: options (CopyOptions) are not supported yet")
        if not isinstance(src, Buffer):
            raise TypeError(f"Buffer.copy_from: src must be a Buffer, not {type(src).__name__}")
        _copy(self, <Buffer>src, handle)

    def fill(self, value, *, stream):
        """Sets every byte to value (an int 0..255), or every 1-, 2- or 4-byte
        element to the bytes of value (an object with the buffer protocol:
        a NumPy or ctypes scalar), ordered on stream (cuMemsetD8/16/32Async)."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef unsigned int pattern = 0
        cdef int width
        cdef const unsigned char[::1] raw
        cdef uintptr_t ptr = self._ptr
        cdef size_t count
        self._require_open()
        if isinstance(value, int):
            if not 0 <= value <= 255:
                raise OverflowError(f"Buffer.fill: value is {value}; an int fills bytes and must be within 0..255")
            width = 1
            pattern = value
        else:
            try:
                raw = memoryview(value).cast("B")
            except TypeError:
                raise TypeError(
                    f"Buffer.fill: value must be an int or support the buffer protocol, not {type(value).__name__}"
                ) from None
            width = raw.shape[0]
            if width not in (1, 2, 4):
                raise ValueError(f"Buffer.fill: value has {width} bytes; fill takes 1, 2 or 4")
            memcpy(&pattern, &raw[0], width)
        if self._size % width:
            raise ValueError(f"Buffer.fill: the buffer's {self._size} bytes are not a multiple of {width}")
        count = self._size // width
        with nogil:
            cpp.memset_async(<cpp.CUdeviceptr>ptr, pattern, width, count, handle)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The buffer as a DLPack capsule of a 1-D int8 tensor over its bytes:
        versioned (DLPack 1.0) when max_version allows it. The capsule keeps
        the Buffer alive until its consumer is done with it."""
        self._require_open()
        if copy:
            raise BufferError("Buffer.__dlpack__: copy=True is not supported; the export shares the memory")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(
                f"Buffer.__dlpack__: dl_device {tuple(dl_device)} differs from the buffer's {self.__dlpack_device__()}"
            )
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        return _dlpack_capsule(self, versioned)

    def __dlpack_device__(self):
        # kDLCUDA for device memory, kDLCUDAHost for pinned host memory.
        if self.is_device_accessible and not self.is_host_accessible:
            return (2, self.device_id)
        if self.is_host_accessible and self.is_device_accessible:
            return (3, 0)
        return (1, 0)

    def __getbuffer__(self, Py_buffer* view, int flags):
        self._require_open()
        if not self.is_host_accessible:
            raise BufferError("Buffer: only host-accessible memory (pinned) can be viewed from Python")
        PyBuffer_FillInfo(view, self, <void*>self._ptr, self._size, 0, flags)
        self._exports += 1

    def __releasebuffer__(self, Py_buffer* view):
        self._exports -= 1

    @property
    def device_id(self):
        if self._mr is None:
            raise RuntimeError("Buffer.device_id: the buffer has no memory resource")
        return self._mr.device_id

    @property
    def handle(self):
        """The address, as an int."""
        return self._ptr

    def __eq__(self, other):
        return isinstance(other, Buffer) and (<Buffer>other)._ptr == self._ptr and (<Buffer>other)._size == self._size

    def __hash__(self):
        return hash(("Buffer", self._ptr, self._size))

    def __repr__(self):
        return f"<Buffer ptr={self._ptr:#x} size={self._size}>"

    @property
    def is_device_accessible(self):
        return self._mr.is_device_accessible if self._mr is not None else True

    @property
    def is_host_accessible(self):
        return self._mr.is_host_accessible if self._mr is not None else False

    @property
    def is_managed(self):
        return self._mr.is_managed if self._mr is not None else False

    @property
    def is_mapped(self):
        """Mapped from another process (Buffer.from_ipc_descriptor)."""
        return self._mapped

    @property
    def memory_resource(self):
        return self._mr

    @property
    def size(self):
        return self._size

    @property
    def owner(self):
        return self._owner


cdef int _copy(Buffer dst, Buffer src, cpp.CUstream stream) except -1:
    cdef uintptr_t d = dst._ptr
    cdef uintptr_t s = src._ptr
    cdef size_t n = src._size
    dst._require_open()
    src._require_open()
    if dst._size != src._size:
        raise ValueError(f"buffer sizes mismatch: the source has {src._size} bytes, the destination {dst._size}")
    if dst._cpp and src._cpp:
        # The core picks cuMemcpyPeerAsync between two devices' memory.
        with nogil:
            dst._cpp.get().copy_from(src._cpp.get()[0], cpp.StreamRef(stream))
    else:
        with nogil:
            cpp.memcpy_async(<cpp.CUdeviceptr>d, <cpp.CUdeviceptr>s, n, stream)
    return 0

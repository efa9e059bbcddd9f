# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Sharing memory pools, their buffers and events with other processes: the
# allocation handle (a pool as a POSIX file descriptor), the descriptors of a
# buffer and of an event (plain bytes), the registry of imported pools by the
# exporter's uuid, and what multiprocessing needs to pickle them.


import os
import weakref
from cubind.core import _reduction


# The pools imported into this process, by the uuid their exporter gave them.
_pool_registry = weakref.WeakValueDictionary()


cdef object _new_uuid():
    # A fresh uuid for an exported pool (uuid is imported at the first export).
    import uuid
    return uuid.uuid4()


# Bytes of CUmemPoolPtrExportData and of CUipcEventHandle.
cdef Py_ssize_t _IPC_PAYLOAD_BYTES = 64


cdef class IPCAllocationHandle:
    """IPCAllocationHandle()
--

An IPC-enabled memory pool as a POSIX file descriptor
    (cuMemPoolExportToShareableHandle), with the uuid of the pool it names.
    It owns the descriptor and closes it. Pass it to another process through
    multiprocessing (it is pickled with the descriptor duplicated into the
    receiver) or over a Unix socket (SCM_RIGHTS); whoever holds the
    descriptor can map the whole pool."""


    def __cinit__(self):
        self._fd = -1

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "IPCAllocationHandle objects cannot be instantiated directly. Please use MemoryResource APIs."
        )

    @classmethod
    def _init(cls, handle, uuid):
        cdef IPCAllocationHandle self
        if isinstance(handle, bool) or not isinstance(handle, int):
            raise TypeError(f"IPCAllocationHandle: handle must be a file descriptor (int), not {type(handle).__name__}")
        if handle < 0:
            raise ValueError(f"IPCAllocationHandle: file descriptor {handle} is negative")
        self = IPCAllocationHandle.__new__(cls)
        self._fd = handle
        self._uuid = uuid
        return self

    def __dealloc__(self):
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def close(self):
        """Closes the file descriptor; closing twice does nothing."""
        cdef int fd = self._fd
        self._fd = -1
        if fd >= 0:
            os.close(fd)

    @property
    def is_closed(self):
        return self._fd < 0

    def __int__(self):
        if self._fd < 0:
            raise ValueError(f"IPCAllocationHandle (uuid {self._uuid}) has been closed; it has no file descriptor")
        return self._fd

    @property
    def handle(self):
        """The file descriptor; -1 once closed."""
        return self._fd

    @property
    def uuid(self):
        """The uuid of the exporting memory resource (None for a descriptor
        adopted from an int)."""
        return self._uuid

    def __repr__(self):
        return f"<IPCAllocationHandle fd={self._fd} uuid={self._uuid}>"

    def __reduce__(self):
        raise TypeError(
            "IPCAllocationHandle carries a file descriptor, which plain pickle cannot move to another process: "
            "send it through multiprocessing (a Queue, a Pipe, Process arguments) or over a Unix socket "
            "with SCM_RIGHTS"
        )


cdef class IPCBufferDescriptor:
    """IPCBufferDescriptor()
--

What another process needs to map a buffer of a shared pool
    (cuMemPoolExportPointer): 64 bytes of export data and the size. Plain
    bytes, picklable and sendable over any channel. The receiver treats both
    as untrusted: Buffer.from_ipc_descriptor checks the size against what the
    driver mapped."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "IPCBufferDescriptor objects cannot be instantiated directly. Please use MemoryResource APIs."
        )

    @staticmethod
    def _init(reserved, size):
        cdef IPCBufferDescriptor self
        if not isinstance(reserved, bytes):
            raise TypeError(f"IPCBufferDescriptor: reserved must be bytes, not {type(reserved).__name__}")
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(f"IPCBufferDescriptor: size must be an int >= 1, not {size!r}")
        self = IPCBufferDescriptor.__new__(IPCBufferDescriptor)
        self._payload = reserved
        self._size = size
        return self

    def __reduce__(self):
        return IPCBufferDescriptor._init, (self._payload, self._size)

    @property
    def size(self):
        return self._size

    def __eq__(self, other):
        if not isinstance(other, IPCBufferDescriptor):
            return NotImplemented
        return (<IPCBufferDescriptor>other)._payload == self._payload and (<IPCBufferDescriptor>other)._size == self._size

    def __hash__(self):
        return hash((self._payload, self._size))

    def __repr__(self):
        return f"<IPCBufferDescriptor size={self._size}>"


cdef class IPCEventDescriptor:
    """IPCEventDescriptor()
--

What another process needs to open an IPC-enabled event
    (cuIpcGetEventHandle): 64 bytes, and whether waits block. Any process of
    the same user on this machine that obtains the bytes can open the event."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError("IPCEventDescriptor objects cannot be instantiated directly. Please use Event APIs.")

    @staticmethod
    def _init(reserved, is_blocking_sync):
        cdef IPCEventDescriptor self
        if not isinstance(reserved, bytes):
            raise TypeError(f"IPCEventDescriptor: reserved must be bytes, not {type(reserved).__name__}")
        self = IPCEventDescriptor.__new__(IPCEventDescriptor)
        self._reserved = reserved
        self._blocking = bool(is_blocking_sync)
        return self

    def __eq__(self, other):
        if not isinstance(other, IPCEventDescriptor):
            return NotImplemented
        return (<IPCEventDescriptor>other)._reserved == self._reserved

    def __hash__(self):
        return hash(self._reserved)

    def __reduce__(self):
        return IPCEventDescriptor._init, (self._reserved, self._blocking)

    def __repr__(self):
        return f"<IPCEventDescriptor is_blocking_sync={bool(self._blocking)}>"


cdef bytes _payload_of(object data, str where):
    # The 64 bytes the driver reads, from a descriptor received from elsewhere.
    if not isinstance(data, bytes):
        raise TypeError(f"{where}: the descriptor's payload is {type(data).__name__}, not bytes")
    if len(data) != _IPC_PAYLOAD_BYTES:
        raise ValueError(f"{where}: the descriptor's payload is {len(data)} bytes; the driver's is {_IPC_PAYLOAD_BYTES}")
    return data


def _reduce_allocation_handle(alloc_handle):
    # The descriptor travels as multiprocessing's DupFd: handed to a spawned
    # child at its start, or fetched later from the sending process (which
    # must then still be running).
    if alloc_handle.is_closed:
        raise RuntimeError(f"IPCAllocationHandle (uuid {alloc_handle.uuid}) has been closed; there is nothing to send")
    from multiprocessing.reduction import DupFd  # loaded: multiprocessing is pickling this

    duplicate = DupFd(alloc_handle.handle)
    return _reconstruct_allocation_handle, (type(alloc_handle), duplicate, alloc_handle.uuid)


def _reconstruct_allocation_handle(cls, df, uuid):
    try:
        fd = df.detach()
    except (OSError, EOFError) as error:
        raise RuntimeError(
            f"the file descriptor of memory pool {uuid} could not be received from the process that sent it "
            f"({type(error).__name__}: {error}); multiprocessing hands descriptors over through the sending "
            "process, which has probably exited"
        ) from error
    return cls._init(fd, uuid)


def _reduce_device_memory_resource(mr):
    # Through multiprocessing: the pool itself (its descriptor); the receiver
    # imports it and registers it under the exporter's uuid.
    _require_ipc(mr, "pickle")
    return type(mr).from_allocation_handle, (mr.device_id, mr.allocation_handle)


def _reduce_pinned_memory_resource(mr):
    _require_ipc(mr, "pickle")
    return type(mr).from_allocation_handle, (mr.allocation_handle,)


def _reduce_event(event):
    return type(event).from_ipc_descriptor, (event.ipc_descriptor,)


cdef int _require_ipc(object mr, str what) except -1:
    if not mr.is_ipc_enabled:
        raise RuntimeError(
            f"{type(mr).__name__}: cannot {what} a memory resource that is not IPC-enabled; create it with "
            f"{type(mr).__name__}Options(ipc_enabled=True) to share it with other processes"
        )
    return 0


cdef object _pool_from_registry(object cls, object uuid):
    try:
        mr = _pool_registry[uuid]
    except KeyError:
        raise RuntimeError(
            f"Memory resource {uuid} was not found: no {cls.__name__} imported into this process was "
            "registered under it (send the memory resource itself through multiprocessing first, or call "
            "from_allocation_handle and register)"
        ) from None
    if not isinstance(mr, cls):
        raise TypeError(f"the registry holds a {type(mr).__name__} under {uuid}, not a {cls.__name__}")
    if mr.is_closed:
        raise RuntimeError(f"{cls.__name__} {uuid} has been closed")
    return mr


cdef object _alloc_handle_arg(object alloc_handle, str where):
    # An IPCAllocationHandle as given, or one over a duplicate of an int
    # descriptor (the caller keeps and closes the original).
    if isinstance(alloc_handle, IPCAllocationHandle):
        if alloc_handle.is_closed:
            raise RuntimeError(f"{where}: the IPCAllocationHandle (uuid {alloc_handle.uuid}) has been closed")
        return alloc_handle
    if isinstance(alloc_handle, bool) or not isinstance(alloc_handle, int):
        raise TypeError(
            f"{where}: alloc_handle must be an IPCAllocationHandle or a file descriptor (int), "
            f"not {type(alloc_handle).__name__}"
        )
    if alloc_handle < 0:
        raise ValueError(f"{where}: alloc_handle is {alloc_handle}, not an open file descriptor")
    duplicate = os.dup(alloc_handle)
    try:
        return IPCAllocationHandle._init(duplicate, None)
    except BaseException:
        os.close(duplicate)
        raise


_reduction.register(IPCAllocationHandle, _reduce_allocation_handle)

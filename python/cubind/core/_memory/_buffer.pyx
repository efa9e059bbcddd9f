# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Buffer and MemoryResource, the base of every memory resource (cubind::Buffer,
# cubind::MemoryResource); the pools are in _memory_pool, the IPC descriptor
# classes in _ipc.

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uintptr_t
from libc.string cimport memcpy

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device
from cubind.core._dlpack cimport _dlpack_capsule
from cubind.core._errors cimport _handle_address, _where
from cubind.core._memory._ipc cimport IPCBufferDescriptor, _payload_of
from cubind.core._memory._memory_pool cimport _MemPool
from cubind.core._stream cimport _legacy_default_stream as LEGACY_DEFAULT_STREAM, Stream, _stream_handle

import collections.abc
from collections.abc import MutableSet as _MutableSet


cdef class MemoryResource:
    """MemoryResource()
--

Where Buffers get their memory. Subclass it in Python to provide one:
    allocate(size, *, stream) returns a Buffer (Buffer.from_handle(ptr, size,
    self) for memory of your own), deallocate(ptr, size, *, stream) takes it
    back; is_device_accessible, is_host_accessible and device_id describe it."""


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


cdef int _allocate_into(Buffer buffer, MemoryResource mr, object size, object stream) except -1:
    # MemoryResource.allocate into a new Buffer (or one of a subclass, made
    # by its resource), and Device.allocate's path to its resource without a
    # second Python call: the size and stream checked, the memory taken with
    # the GIL released, the Buffer filled in.
    cdef cpp.CUstream handle
    cdef size_t nbytes
    cdef bint direct
    if not mr._cpp:
        # Made at first use, or closed (_ensure raises then).
        mr._ensure()
    if not mr._cpp:
        raise NotImplementedError(f"{type(mr).__name__} must implement allocate(size, *, stream)")
    handle = _stream_handle(stream)
    if type(size) is int and size == 0:
        # As in cuda.core: a buffer of 0 bytes at address 0, of this
        # resource, with no driver call (there is nothing to allocate).
        buffer._mr = mr
        buffer._stream = stream
        buffer._empty = True
        return 0
    nbytes = _size_arg(size, mr, "allocate")
    with nogil:
        direct = cpp.buffer_allocate_from_pool(buffer._cpp, mr._cpp, mr._direct_pool, nbytes, handle)
    buffer._direct = direct
    buffer._ptr = <uintptr_t>buffer._cpp.handle()
    buffer._size = nbytes
    buffer._mr = mr
    buffer._stream = stream
    return 0


cdef Buffer _allocate(MemoryResource mr, object size, object stream):
    cdef Buffer buffer = Buffer.__new__(Buffer)
    _allocate_into(buffer, mr, size, stream)
    return buffer


cdef int _copy_with_options(Buffer dst, Buffer src, object stream, object options) except -1:
    # Buffer.copy_to / copy_from with a CopyOptions: a batch of one copy
    # (cuMemcpyBatchAsync takes the attributes), checked as copy_batch checks
    # its own; imported at first use, as utils.copy_batch is.
    from cubind.core._memory._copy_batch import _copy_batch
    from cubind.core._memory_options import CopyOptions

    if not isinstance(options, CopyOptions):
        raise TypeError(f"options must be a CopyOptions or None, not {type(options).__name__}")
    _copy_batch(stream, [src], [dst], options=options)
    return 0


cdef size_t _size_arg_slow(object size, object owner, str method) except? 0:
    where = _where(owner, method, "size")
    try:
        value = size.__index__()
    except AttributeError:
        raise TypeError(f"{where} must be an int, not {type(size).__name__}") from None
    if value < 0:
        # cuda.core's type (its size is a size_t); then what is wrong.
        raise OverflowError(f"{where} is {value}; a size cannot be negative")
    if value == 0:
        raise ValueError(f"{where} is 0; it must be at least 1 byte")
    if value >= 2**64:
        raise OverflowError(f"{where} is {value}, which does not fit a size_t")
    if value >= 2**63:
        raise ValueError(f"{where} is {value}, more than any device can hold")
    return value


# Made and dropped by the million (allocate + close): a free list spares the allocator.
@cython.freelist(16)
cdef class Buffer:
    """A block of memory from a MemoryResource (Device.allocate,
    MemoryResource.allocate), or one owned elsewhere (Buffer.from_handle).
    close() returns it to its resource, stream-ordered."""

    # The IPC descriptor, once asked for or when imported; whether imported.

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Buffer objects cannot be instantiated directly. Please use MemoryResource APIs.")

    def __dealloc__(self):
        if cpp.in_forked_child():
            # The memory is the parent's, and the driver unusable here: let go.
            cpp.buffer_abandon(self._cpp)
            return
        # A closed Buffer (the common end) has nothing left to return.
        if _holds(self) or (self._mr is not None and self._ptr != 0):
            try:
                self._free(None)
            except BaseException:
                pass
        if _holds(self):
            with nogil:
                cpp.buffer_reset(self._cpp)

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
        if _holds(self):
            if stream is not None:
                handle = _stream_handle(stream)
                if self._direct:
                    with nogil:
                        cpp.buffer_close_to_pool(self._cpp, handle)
                else:
                    with nogil:
                        self._cpp.close(cpp.StreamRef(handle))
            else:
                with nogil:
                    self._cpp.close()
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
            # cuda.core's type (its size is a size_t); then what is wrong.
            raise OverflowError(f"Buffer.from_handle: size is {size}; a size cannot be negative")
        self._size = size
        self._mr = mr
        self._owner = owner
        if stream is not None:
            _stream_handle(stream)
        self._stream = stream
        return self

    cdef int _require_open(self) except -1:
        if self._ptr == 0 and self._size == 0 and not _holds(self) and not self._empty:
            raise RuntimeError("Buffer has been closed")
        return 0

    # close() is a plain C method (no binding): called without keywords on a
    # Buffer of exactly its defining class, the interpreter calls it directly
    # (ManagedBuffer defines its own for that reason).
    @cython.binding(False)
    def close(self, stream=None):
        """Returns the memory to its resource, ordered on stream (or on the
        allocation or deallocation stream); the Buffer is closed after."""
        self._close(stream)

    cdef int _close(self, object stream) except -1:
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
        self._empty = False
        self._direct = False
        return 0

    @property
    def is_closed(self):
        return self._ptr == 0 and self._size == 0 and not _holds(self) and not self._empty

    @property
    def ipc_descriptor(self):
        """The IPCBufferDescriptor another process maps this buffer with
        (cuMemPoolExportPointer); the buffer must come from an IPC-enabled
        DeviceMemoryResource or PinnedMemoryResource."""
        cdef char payload[64]
        self._require_open()
        if self._ipc is not None:
            return self._ipc
        if not isinstance(self._mr, _MemPool) or not self._mr.is_ipc_enabled or not _holds(self):
            raise RuntimeError(
                "Buffer.ipc_descriptor: the buffer's memory resource is not IPC-enabled; allocate it from a "
                "DeviceMemoryResource or PinnedMemoryResource created with ipc_enabled=True to share it with "
                f"other processes (its memory resource: {type(self._mr).__name__})"
            )
        with nogil:
            cpp.buffer_export_ipc(self._cpp, payload)
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
            cpp.buffer_import_ipc(self._cpp, pool._pool, data, size, handle)
        self._ptr = <uintptr_t>self._cpp.handle()
        self._size = size
        self._mr = mr
        self._stream = stream
        self._ipc = ipc_descriptor
        self._mapped = True
        return self

    @staticmethod
    def _reduce_helper(mr, ipc_descriptor):
        # Unpickling: a mapping freed on the default stream of the pool's
        # device (the sender's stream means nothing here). The current device
        # stays as it is: what is unpickled next (an IPC event, say) opens in
        # the receiver's context, as it does on cuda.core.
        device_id = mr.device_id
        device = Device(device_id) if device_id >= 0 else Device()
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
        None), ordered on stream; returns dst. Sizes must be equal. With
        options (a CopyOptions), the copy is one cuMemcpyBatchAsync with
        those attributes, as utils.copy_batch makes it."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef Buffer target
        self._require_open()
        if dst is None:
            if self._mr is None:
                raise ValueError("Buffer.copy_to: a buffer without a memory resource needs dst")
            dst = self._mr.allocate(self._size, stream=stream)
        if not isinstance(dst, Buffer):
            raise TypeError(f"Buffer.copy_to: dst must be a Buffer, not {type(dst).__name__}")
        target = <Buffer>dst
        if options is not None:
            _copy_with_options(target, self, stream, options)
            return dst
        _copy(target, self, handle)
        return dst

    def copy_from(self, src, *, stream, options=None):
        """Copies src into this buffer, ordered on stream. Sizes must be equal.
        options: a CopyOptions, as for copy_to."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        self._require_open()
        if not isinstance(src, Buffer):
            raise TypeError(f"Buffer.copy_from: src must be a Buffer, not {type(src).__name__}")
        if options is not None:
            _copy_with_options(self, <Buffer>src, stream, options)
            return
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
            if width == 1:
                cpp.fill_memory(<cpp.CUdeviceptr>ptr, <uint8_t>pattern, count, cpp.StreamRef(handle))
            elif width == 2:
                cpp.fill_memory(<cpp.CUdeviceptr>ptr, <uint16_t>pattern, count, cpp.StreamRef(handle))
            else:
                cpp.fill_memory(<cpp.CUdeviceptr>ptr, <uint32_t>pattern, count, cpp.StreamRef(handle))

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
    if _holds(dst) and _holds(src):
        # The core picks cuMemcpyPeerAsync between two devices' memory.
        with nogil:
            dst._cpp.copy_from(src._cpp, cpp.StreamRef(stream))
    else:
        with nogil:
            cpp.copy_memory(<cpp.CUdeviceptr>d, <cpp.CUdeviceptr>s, n, cpp.StreamRef(stream))
    return 0

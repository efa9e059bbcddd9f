# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# VirtualMemoryResource: memory through the driver's virtual memory
# management (cubind::VirtualMemoryResource), which modify_allocation grows.

from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr, static_pointer_cast

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device
from cubind.core._memory._buffer cimport Buffer, MemoryResource, _size_arg
from cubind.core._stream cimport _legacy_default_stream as LEGACY_DEFAULT_STREAM, _stream_handle

from cubind.core._memory_options import (
    HOST_LOCATION_TYPES,
    _virtual_memory_settings,
    VirtualMemoryResourceOptions,
)


cdef class VirtualMemoryResource(MemoryResource):
    """VirtualMemoryResource(device_id, config=None)
--

Memory through CUDA's virtual memory management: physical memory
    (cuMemCreate) mapped into a reserved address range (cuMemAddressReserve,
    cuMemMap) with access set per device (cuMemSetAccess), as configured by
    VirtualMemoryResourceOptions. Sizes round up to the granularity.
    modify_allocation grows a buffer, keeping its contents. A low-level
    tool: the other resources serve the common needs."""


    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._vmm.reset()

    def __init__(self, device_id, config=None):
        cdef cpp.VirtualMemorySettings settings
        cdef int ordinal
        config = _virtual_memory_config(config)
        _virtual_memory_fill(config, &settings)
        device = Device(device_id)
        if str(config.location_type) in HOST_LOCATION_TYPES:
            self._device = None
        else:
            self._device = device
            if not device.properties.virtual_memory_management_supported:
                raise RuntimeError("VirtualMemoryResource requires CUDA VMM API support")
            if config.gpu_direct_rdma and not device.properties.gpu_direct_rdma_supported:
                raise RuntimeError("GPU Direct RDMA is not supported on this device")
        self._config = config
        ordinal = device._id
        with nogil:
            self._vmm = shared_ptr[cpp.VirtualMemoryResource](cpp.virtual_memory_new(ordinal, settings))
        self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.VirtualMemoryResource](self._vmm)

    @property
    def device(self):
        """The Device, or None for a resource of host memory."""
        return self._device

    @property
    def config(self):
        """The VirtualMemoryResourceOptions later allocations use."""
        return self._config

    @config.setter
    def config(self, config):
        cdef cpp.VirtualMemorySettings settings
        config = _virtual_memory_config(config)
        _virtual_memory_fill(config, &settings)
        with nogil:
            cpp.virtual_memory_set_options(self._vmm.get(), settings)
        self._config = config

    def allocate(self, size, *, stream=None):
        """A Buffer of size bytes rounded up to the granularity. Allocation is
        immediate; stream (optional) is where the buffer is freed in order."""
        cdef size_t nbytes = _size_arg(size, self, "allocate")
        cdef size_t aligned
        cdef cpp.VirtualMemoryResource* vmm = self._vmm.get()
        with nogil:
            aligned = vmm.aligned_size(nbytes)
        return MemoryResource.allocate(self, aligned, stream=LEGACY_DEFAULT_STREAM if stream is None else stream)

    def deallocate(self, ptr, size, *, stream=None):
        """Unmaps and frees the allocation at ptr, after stream's queued work."""
        MemoryResource.deallocate(self, ptr, size, stream=LEGACY_DEFAULT_STREAM if stream is None else stream)

    def modify_allocation(self, buf, new_size, config=None):
        """Grows buf to new_size bytes, keeping its contents. The address
        range right after it is reserved and new physical memory mapped
        there, and buf is returned with its new size; where that range is
        taken, a larger range is reserved elsewhere, the old physical memory
        mapped into it beside the new, and a new Buffer is returned (buf is
        then closed). A size of at most buf.size only re-applies the access
        rights. config, when given, becomes this resource's configuration
        first. On failure nothing has changed."""
        cdef Buffer buffer
        cdef uintptr_t old_ptr
        cdef uintptr_t new_ptr
        cdef size_t nbytes
        cdef void* moved
        cdef cpp.VirtualMemoryResource* vmm = self._vmm.get()
        cdef cpp.CUstream handle
        if not isinstance(buf, Buffer):
            raise TypeError(f"buf must be a Buffer, got {type(buf).__name__}")
        buffer = <Buffer>buf
        if buffer.is_closed:
            raise RuntimeError("Buffer has been closed")
        if buffer._mr is not self or not buffer._cpp:
            raise ValueError("VirtualMemoryResource.modify_allocation: buf was not allocated by this resource")
        if isinstance(new_size, float) or not hasattr(new_size, "__index__") or new_size < 0:
            raise TypeError(f"VirtualMemoryResource.modify_allocation: new_size must be an int >= 0, not {new_size!r}")
        if config is not None:
            self.config = config
        old_ptr = buffer._ptr
        nbytes = max(new_size, buffer._size)
        with nogil:
            moved = vmm.grow(<void*>old_ptr, nbytes)
        new_ptr = <uintptr_t>moved
        if new_size <= buffer._size:
            return buf
        handle = _stream_handle(LEGACY_DEFAULT_STREAM if buffer._stream is None else buffer._stream)
        if new_ptr == old_ptr:
            # Same address: the C++ Buffer takes the new size.
            buffer._cpp.get().release()
            buffer._cpp.reset(cpp.buffer_adopt(new_ptr, new_size, self._cpp, handle))
            buffer._size = new_size
            return buf
        grown = Buffer.__new__(Buffer)
        (<Buffer>grown)._cpp.reset(cpp.buffer_adopt(new_ptr, new_size, self._cpp, handle))
        (<Buffer>grown)._ptr = new_ptr
        (<Buffer>grown)._size = new_size
        (<Buffer>grown)._mr = self
        (<Buffer>grown)._stream = buffer._stream
        # The old address is gone; the old Buffer is closed without a free.
        buffer._cpp.get().release()
        buffer._cpp.reset()
        buffer._ptr = 0
        buffer._size = 0
        buffer._mr = None
        buffer._stream = None
        return grown

    @property
    def is_device_accessible(self):
        return str(self._config.location_type) == "device"

    @property
    def is_host_accessible(self):
        return str(self._config.location_type) in HOST_LOCATION_TYPES

    @property
    def is_managed(self):
        return False

    @property
    def device_id(self):
        return self._device._id if self._device is not None else -1

    def __repr__(self):
        return f"<VirtualMemoryResource device={self._device}>"


cdef object _virtual_memory_config(config):
    if config is None:
        return VirtualMemoryResourceOptions()
    if isinstance(config, dict):
        return VirtualMemoryResourceOptions(**config)
    if not isinstance(config, VirtualMemoryResourceOptions):
        raise TypeError(
            f"config must be a VirtualMemoryResourceOptions, a dict or None, not {type(config).__name__}"
        )
    return config


cdef int _virtual_memory_fill(config, cpp.VirtualMemorySettings* out) except -1:
    settings = _virtual_memory_settings(config)
    out.allocation_type = settings["allocation_type"]
    out.location_type = settings["location_type"]
    out.location_id = 0
    out.handle_type = settings["handle_type"]
    out.granularity = settings["granularity"]
    out.gpu_direct_rdma = settings["gpu_direct_rdma"]
    out.addr_hint = settings["addr_hint"]
    out.addr_align = settings["addr_align"]
    out.peers = settings["peers"]
    out.self_access = settings["self_access"]
    out.peer_access = settings["peer_access"]
    return 0

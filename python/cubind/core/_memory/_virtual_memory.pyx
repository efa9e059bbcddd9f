# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# VirtualMemoryResource: memory through the driver's virtual memory
# management (cubind::VirtualMemoryResource), which modify_allocation grows.

from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr, static_pointer_cast

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device
from cubind.core._memory._buffer cimport Buffer, MemoryResource, _holds, _size_arg
from cubind.core._stream cimport _legacy_default_stream as LEGACY_DEFAULT_STREAM, _stream_handle

from cubind.core._memory_options import VirtualMemoryResourceOptions
from cubind.core.typing import _StrEnum as StrEnum


HOST_LOCATION_TYPES = frozenset({"host", "host_numa", "host_numa_current"})


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
        cdef cpp.VirtualMemoryResourceOptions options
        cdef int ordinal
        config = _virtual_memory_config(config)
        options = _virtual_memory_options(config)
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
            self._vmm = shared_ptr[cpp.VirtualMemoryResource](cpp.virtual_memory_new(ordinal, options))
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
        cdef cpp.VirtualMemoryResourceOptions options
        config = _virtual_memory_config(config)
        options = _virtual_memory_options(config)
        with nogil:
            self._vmm.get().set_options(options)
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
        if buffer._mr is not self or not _holds(buffer):
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
            buffer._cpp.release()
            cpp.buffer_adopt(buffer._cpp, new_ptr, new_size, self._cpp, handle)
            buffer._size = new_size
            return buf
        grown = Buffer.__new__(Buffer)
        cpp.buffer_adopt((<Buffer>grown)._cpp, new_ptr, new_size, self._cpp, handle)
        (<Buffer>grown)._ptr = new_ptr
        (<Buffer>grown)._size = new_size
        (<Buffer>grown)._mr = self
        (<Buffer>grown)._stream = buffer._stream
        # The old address is gone; the old Buffer is closed without a free.
        buffer._cpp.release()
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


# The driver's values of VirtualMemoryResourceOptions' strings.
_ALLOCATION_TYPES = {"pinned": cpp.CU_MEM_ALLOCATION_TYPE_PINNED, "managed": cpp.CU_MEM_ALLOCATION_TYPE_MANAGED}
_LOCATION_TYPES = {
    "device": cpp.CU_MEM_LOCATION_TYPE_DEVICE,
    "host": cpp.CU_MEM_LOCATION_TYPE_HOST,
    "host_numa": cpp.CU_MEM_LOCATION_TYPE_HOST_NUMA,
    "host_numa_current": cpp.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT,
}
_HANDLE_TYPES = {
    None: cpp.CU_MEM_HANDLE_TYPE_NONE,
    "posix_fd": cpp.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
    "win32_kmt": cpp.CU_MEM_HANDLE_TYPE_WIN32_KMT,
    "fabric": cpp.CU_MEM_HANDLE_TYPE_FABRIC,
}
_GRANULARITIES = {"minimum": cpp.CU_MEM_ALLOC_GRANULARITY_MINIMUM,
                  "recommended": cpp.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED}
_ACCESS = {None: cpp.CU_MEM_ACCESS_FLAGS_PROT_NONE, "r": cpp.CU_MEM_ACCESS_FLAGS_PROT_READ,
           "rw": cpp.CU_MEM_ACCESS_FLAGS_PROT_READWRITE}


cdef int _lookup(dict table, value, str what) except -1:
    key = value.value if isinstance(value, StrEnum) else value
    try:
        return table[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unsupported {what}: {value!r}") from None


cdef cpp.VirtualMemoryResourceOptions _virtual_memory_options(config) except *:
    # The one conversion of a VirtualMemoryResourceOptions to the core's
    # struct, with its checks.
    cdef cpp.VirtualMemoryResourceOptions out
    if config.handle_type == "win32":
        raise NotImplementedError("handle_type 'win32' is not supported; use 'win32_kmt' on Windows")
    out.allocation_type = <cpp.CUmemAllocationType>_lookup(_ALLOCATION_TYPES, config.allocation_type, "allocation_type")
    out.location_type = <cpp.CUmemLocationType>_lookup(_LOCATION_TYPES, config.location_type, "location_type")
    out.handle_type = <cpp.CUmemAllocationHandleType>_lookup(_HANDLE_TYPES, config.handle_type, "handle_type")
    out.granularity = <cpp.CUmemAllocationGranularity_flags>_lookup(_GRANULARITIES, config.granularity, "granularity")
    out.self_access = <cpp.CUmemAccess_flags>_lookup(_ACCESS, config.self_access, "access spec")
    out.peer_access = <cpp.CUmemAccess_flags>_lookup(_ACCESS, config.peer_access, "access spec")
    out.gpu_direct_rdma = bool(config.gpu_direct_rdma)
    hint = 0 if config.addr_hint is None else config.addr_hint
    align = 0 if config.addr_align is None else config.addr_align
    for name, value in (("addr_hint", hint), ("addr_align", align)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"VirtualMemoryResourceOptions.{name} must be an int >= 0 or None, not {value!r}")
    if align & (align - 1):
        raise ValueError(f"VirtualMemoryResourceOptions.addr_align is {align}; it must be a power of two")
    out.addr_hint = hint
    out.addr_align = align
    for peer in config.peers:
        ordinal = getattr(peer, "device_id", peer)
        if isinstance(ordinal, bool) or not isinstance(ordinal, int) or ordinal < 0:
            raise ValueError(f"VirtualMemoryResourceOptions.peers holds {peer!r}; expected device ordinals")
        out.peers.push_back(ordinal)
    return out


def _options_fields(config):
    """The core's VirtualMemoryResourceOptions that config converts to, as a
    dict of its fields: for tests of the conversion."""
    cdef cpp.VirtualMemoryResourceOptions o = _virtual_memory_options(config)
    return {"allocation_type": <int>o.allocation_type, "location_type": <int>o.location_type,
            "location_id": o.location_id, "handle_type": <int>o.handle_type, "granularity": <int>o.granularity,
            "gpu_direct_rdma": o.gpu_direct_rdma, "addr_hint": o.addr_hint, "addr_align": o.addr_align,
            "peers": list(o.peers), "self_access": <int>o.self_access, "peer_access": <int>o.peer_access}

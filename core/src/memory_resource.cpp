#include "cubind/memory_resource.hpp"

#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

void require_bytes(std::size_t bytes, const char* where) {
  if (bytes == 0) {
    throw std::out_of_range(std::string(where) + ": size is 0 bytes; an allocation holds at least 1 byte");
  }
}

void* to_pointer(CUdeviceptr ptr) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)); }
CUdeviceptr to_deviceptr(void* ptr) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr)); }

CUmemLocation device_location(const Device& device) {
  CUmemLocation location{};
  location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  location.id = device.ordinal();
  return location;
}

// A pool's allocation on a stream being captured would become a graph's
// allocation node, owned by the graph and not by the pool (cuda.core refuses
// it the same way): refused before the driver is asked for anything. The
// legacy default stream cannot be captured; another stream's global capture
// makes the query fail, with the driver's reason. A check that passes builds
// no string (name is a C string).
void refuse_capture(StreamRef stream, const char* name) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  detail::check(raw::cuStreamIsCapturing(stream.handle(), &status), "cuStreamIsCapturing");
  if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
    throw std::logic_error(std::string(name) +
                           " cannot perform memory operations on a capturing stream (consider using "
                           "GraphMemoryResource). Allocate graph memory from a GraphMemoryResource while "
                           "capturing, or from this resource before the capture begins.");
  }
}

// Pinned and managed memory are not freed in stream order: the stream's queued
// work may still read or write them, so it has to finish first.
void wait_for_stream(StreamRef stream) {
  detail::check(raw::cuStreamSynchronize(stream.handle()), "cuStreamSynchronize");
}

}  // namespace

// IpcPoolHandle

IpcPoolHandle IpcPoolHandle::from_native_handle(int fd) {
  if (fd < 0) {
    throw std::invalid_argument("cubind::IpcPoolHandle::from_native_handle: file descriptor " + std::to_string(fd) +
                                " is negative");
  }
  return IpcPoolHandle(fd);
}

IpcPoolHandle::IpcPoolHandle(IpcPoolHandle&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

IpcPoolHandle& IpcPoolHandle::operator=(IpcPoolHandle&& other) noexcept {
  if (this != &other) {
    IpcPoolHandle old(std::move(*this));
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

IpcPoolHandle::~IpcPoolHandle() {
  if (fd_ >= 0) ::close(fd_);
}

int IpcPoolHandle::release() {
  if (fd_ < 0) detail::throw_null("cubind::IpcPoolHandle::release", "IpcPoolHandle");
  return std::exchange(fd_, -1);
}

// MemoryPool

MemoryPool::MemoryPool(const char* name, const Device& device, CUmemoryPool pool, bool owns_pool, bool ipc_enabled,
                       bool imported)
    : name_(name),
      allocate_where_(std::string("cubind::") + name + "::allocate"),
      deallocate_where_(std::string("cubind::") + name + "::deallocate"),
      device_(device),
      context_(nullptr),
      pool_(pool),
      owns_pool_(owns_pool),
      ipc_enabled_(ipc_enabled),
      imported_(imported) {
  try {
    context_ = detail::primary_context(device.ordinal());
  } catch (...) {
    // The destructor does not run for a half-built object.
    if (owns_pool) raw::cuMemPoolDestroy(pool);
    throw;
  }
}

MemoryPool::~MemoryPool() {
  // The driver defers the destruction until outstanding allocations are freed.
  if (owns_pool_) detail::release_quietly([this] { return raw::cuMemPoolDestroy(pool_); });
}

CUmemoryPool MemoryPool::create(const CUmemPoolProps& props) {
  CUmemoryPool pool = nullptr;
  detail::check(raw::cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  return pool;
}

CUmemoryPool MemoryPool::import(const Device& device, const IpcPoolHandle& handle, const char* where) {
  if (handle.fd() < 0) detail::throw_null(where, "IpcPoolHandle");
  ContextGuard guard(device);
  CUmemoryPool pool = nullptr;
  // For POSIX descriptors the "handle" argument is the descriptor itself, in a pointer.
  detail::check(raw::cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(handle.fd())),
                                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                "cuMemPoolImportFromShareableHandle");
  return pool;
}

void* MemoryPool::allocate(std::size_t bytes, StreamRef stream) {
  if (bytes == 0 || imported_) {
    require_bytes(bytes, allocate_where_.c_str());
    throw std::logic_error(allocate_where_ +
                           ": the pool was imported from another process, which alone allocates from it");
  }
  CUdeviceptr ptr = 0;
  // A stream names its own context, so only a default stream (this device's
  // under the guard) makes the pool's context current around the call.
  std::optional<ContextGuard> guard;
  if (detail::is_default_stream(stream.handle())) {
    guard.emplace(Context::from_native_handle(context_));
  } else {
    detail::require_stream(stream, allocate_where_.c_str());
  }
  refuse_capture(stream, name_);
  detail::check(raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool_, stream.handle()), "cuMemAllocFromPoolAsync");
  return to_pointer(ptr);
}

void MemoryPool::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  std::optional<ContextGuard> guard;
  if (detail::is_default_stream(stream.handle())) {
    guard.emplace(Context::from_native_handle(context_));
  } else {
    detail::require_stream(stream, deallocate_where_.c_str());
  }
  detail::check(raw::cuMemFreeAsync(to_deviceptr(ptr), stream.handle()), "cuMemFreeAsync");
}

std::uint64_t MemoryPool::release_threshold() const {
  cuuint64_t value = 0;
  detail::check(raw::cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value), "cuMemPoolGetAttribute");
  return value;
}

void MemoryPool::set_release_threshold(std::uint64_t bytes) {
  cuuint64_t value = bytes;
  detail::check(raw::cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value), "cuMemPoolSetAttribute");
}

std::uint64_t MemoryPool::used_memory() const {
  cuuint64_t value = 0;
  detail::check(raw::cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value), "cuMemPoolGetAttribute");
  return value;
}

std::uint64_t MemoryPool::reserved_memory() const {
  cuuint64_t value = 0;
  detail::check(raw::cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &value),
                "cuMemPoolGetAttribute");
  return value;
}

void MemoryPool::trim_to(std::size_t bytes_to_keep) {
  detail::check(raw::cuMemPoolTrimTo(pool_, bytes_to_keep), "cuMemPoolTrimTo");
}

IpcPoolHandle MemoryPool::export_ipc_handle() const {
  if (!ipc_enabled_) {
    throw std::logic_error(
        std::string("cubind::") + name_ +
        "::export_ipc_handle: the pool was not created with ipc_enabled in its options");
  }
  ContextGuard guard(device_);
  int fd = -1;
  detail::check(raw::cuMemPoolExportToShareableHandle(&fd, pool_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                "cuMemPoolExportToShareableHandle");
  return IpcPoolHandle::from_native_handle(fd);
}

// DeviceMemoryResource

namespace {

CUmemoryPool default_device_pool(const Device& device) {
  CUmemoryPool pool = nullptr;
  detail::check(raw::cuDeviceGetDefaultMemPool(&pool, device.handle()), "cuDeviceGetDefaultMemPool");
  return pool;
}

CUmemoryPool new_device_pool(const Device& device, const DeviceMemoryResourceOptions& options) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = options.ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  props.location = device_location(device);
  props.maxSize = options.max_size;
  CUmemoryPool pool = nullptr;
  detail::check(raw::cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  return pool;
}

}  // namespace

DeviceMemoryResource::DeviceMemoryResource(const Device& device)
    : MemoryPool("DeviceMemoryResource", device, default_device_pool(device), false, false, false) {}

DeviceMemoryResource::DeviceMemoryResource(const Device& device, const DeviceMemoryResourceOptions& options)
    : MemoryPool("DeviceMemoryResource", device, new_device_pool(device, options), true, options.ipc_enabled, false) {
  // From here on the destructor destroys the pool if the body throws.
  if (options.release_threshold) set_release_threshold(*options.release_threshold);
}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::from_ipc_handle(const Device& device,
                                                                            const IpcPoolHandle& handle) {
  CUmemoryPool pool = import(device, handle, "cubind::DeviceMemoryResource::from_ipc_handle");
  // The constructor destroys the pool if it throws.
  return std::shared_ptr<DeviceMemoryResource>(new DeviceMemoryResource(device, pool, true, true, true));
}

void DeviceMemoryResource::set_access(const Device& peer, CUmemAccess_flags flags, const char* where) {
  if (peer == device_) {
    throw std::invalid_argument(std::string(where) + ": device " + std::to_string(peer.ordinal()) +
                                " is the pool's own device, which always has access");
  }
  CUmemAccessDesc access{};
  access.location = device_location(peer);
  access.flags = flags;
  detail::check(raw::cuMemPoolSetAccess(pool_, &access, 1), "cuMemPoolSetAccess");
}

void DeviceMemoryResource::grant_peer_access(const Device& peer) {
  set_access(peer, CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "cubind::DeviceMemoryResource::grant_peer_access");
}

void DeviceMemoryResource::revoke_peer_access(const Device& peer) {
  set_access(peer, CU_MEM_ACCESS_FLAGS_PROT_NONE, "cubind::DeviceMemoryResource::revoke_peer_access");
}

bool DeviceMemoryResource::is_accessible_from(const Device& peer) const {
  CUmemLocation location = device_location(peer);
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  detail::check(raw::cuMemPoolGetAccess(&flags, pool_, &location), "cuMemPoolGetAccess");
  return flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

// PinnedMemoryResource

CUmemLocation pinned_pool_location(const PinnedMemoryResourceOptions& options, int device_ordinal,
                                   int device_numa_id) {
  CUmemLocation location{};
  if (options.numa_id) {
    if (*options.numa_id < 0) {
      throw std::invalid_argument("cubind::PinnedMemoryResourceOptions: numa_id is " +
                                  std::to_string(*options.numa_id) + "; it must be >= 0 (or unset)");
    }
    location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    location.id = *options.numa_id;
  } else if (options.ipc_enabled) {
    // The driver exports only pools placed on a NUMA node.
    if (device_numa_id < 0) {
      throw std::runtime_error(
          "cubind::PinnedMemoryResource: an IPC-enabled pinned pool is placed on a host NUMA node, and device " +
          std::to_string(device_ordinal) + " reports none (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID is " +
          std::to_string(device_numa_id) + "); set numa_id explicitly");
    }
    location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    location.id = device_numa_id;
  } else {
    location.type = CU_MEM_LOCATION_TYPE_HOST;
    location.id = 0;  // ignored for CU_MEM_LOCATION_TYPE_HOST
  }
  return location;
}

namespace {

int numa_of(const CUmemLocation& location) {
  return location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ? location.id : -1;
}

CUmemoryPool current_pinned_pool(const Device& device) {
  ContextGuard guard(device);
  CUmemLocation location{};
  location.type = CU_MEM_LOCATION_TYPE_HOST;
  CUmemoryPool pool = nullptr;
  detail::check(raw::cuMemGetMemPool(&pool, &location, CU_MEM_ALLOCATION_TYPE_PINNED), "cuMemGetMemPool");
  return pool;
}

CUmemLocation pinned_location(const PinnedMemoryResourceOptions& options, const Device& device) {
  const bool needs_node = options.ipc_enabled && !options.numa_id;
  return pinned_pool_location(options, device.ordinal(),
                              needs_node ? device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) : -1);
}

CUmemoryPool new_pinned_pool(const Device& device, const PinnedMemoryResourceOptions& options) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = options.ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  props.location = pinned_location(options, device);
  props.maxSize = options.max_size;
  ContextGuard guard(device);
  CUmemoryPool pool = nullptr;
  detail::check(raw::cuMemPoolCreate(&pool, &props), "cuMemPoolCreate");
  return pool;
}

}  // namespace

PinnedMemoryResource::PinnedMemoryResource(const Device& device, CUmemoryPool pool, bool owns_pool,
                                           bool ipc_enabled, bool imported, int numa_id)
    : MemoryPool("PinnedMemoryResource", device, pool, owns_pool, ipc_enabled, imported), numa_id_(numa_id) {
  // From here on the destructor destroys an owned pool if the body throws.
  grant_device_access();
}

PinnedMemoryResource::PinnedMemoryResource(const Device& device)
    : PinnedMemoryResource(device, current_pinned_pool(device), false, false, false, -1) {}

PinnedMemoryResource::PinnedMemoryResource(const Device& device, const PinnedMemoryResourceOptions& options)
    : PinnedMemoryResource(device, new_pinned_pool(device, options), true, options.ipc_enabled, false,
                           numa_of(pinned_location(options, device))) {}

std::shared_ptr<PinnedMemoryResource> PinnedMemoryResource::from_ipc_handle(const Device& device,
                                                                            const IpcPoolHandle& handle) {
  CUmemoryPool pool = import(device, handle, "cubind::PinnedMemoryResource::from_ipc_handle");
  return std::shared_ptr<PinnedMemoryResource>(
      new PinnedMemoryResource(device, pool, true, true, true, -1));
}

void PinnedMemoryResource::grant_device_access() {
  // Shared pools are always placed on a NUMA node.
  const bool on_numa_node = numa_id_ >= 0 || imported_;
  const CUdevice_attribute supported = on_numa_node ? CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED
                                                    : CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED;
  const int count = Device::count();
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    const Device device = Device::get(ordinal);
    if (device.attribute(supported) == 0) continue;
    CUmemLocation location = device_location(device);
    CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    detail::check(raw::cuMemPoolGetAccess(&flags, pool_, &location), "cuMemPoolGetAccess");
    if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) continue;
    CUmemAccessDesc access{};
    access.location = location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    detail::check(raw::cuMemPoolSetAccess(pool_, &access, 1), "cuMemPoolSetAccess");
  }
}

// LegacyPinnedMemoryResource

LegacyPinnedMemoryResource::LegacyPinnedMemoryResource(const Device& device) : device_(device) {}

void* LegacyPinnedMemoryResource::allocate(std::size_t bytes, StreamRef stream) {
  require_bytes(bytes, "cubind::LegacyPinnedMemoryResource::allocate");
  detail::require_stream(stream, "cubind::LegacyPinnedMemoryResource::allocate");
  ContextGuard guard(device_);
  void* ptr = nullptr;
  detail::check(raw::cuMemHostAlloc(&ptr, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc");
  return ptr;
}

void LegacyPinnedMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  detail::require_stream(stream, "cubind::LegacyPinnedMemoryResource::deallocate");
  ContextGuard guard(device_);
  wait_for_stream(stream);
  detail::check(raw::cuMemFreeHost(ptr), "cuMemFreeHost");
}

// ManagedMemoryResource

ManagedMemoryResource::ManagedMemoryResource(const Device& device) : device_(device) {}

ManagedMemoryResource::ManagedMemoryResource(const Device& device, const ManagedMemoryResourceOptions& options)
    : device_(device) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  if (options.preferred_location) {
    props.location = *options.preferred_location;
  } else {
    props.location.type = CU_MEM_LOCATION_TYPE_NONE;
  }
  ContextGuard guard(device_);
  detail::check(raw::cuMemPoolCreate(&pool_, &props), "cuMemPoolCreate");
  owns_pool_ = true;
}

ManagedMemoryResource::ManagedMemoryResource(const Device& device, CUmemoryPool pool, Current)
    : device_(device), pool_(pool) {}

std::shared_ptr<ManagedMemoryResource> ManagedMemoryResource::current_pool(const Device& device,
                                                                           CUmemLocation location) {
  ContextGuard guard(device);
  CUmemoryPool pool = nullptr;
  detail::check(raw::cuMemGetMemPool(&pool, &location, CU_MEM_ALLOCATION_TYPE_MANAGED), "cuMemGetMemPool");
  return std::shared_ptr<ManagedMemoryResource>(new ManagedMemoryResource(device, pool, Current{}));
}

ManagedMemoryResource::~ManagedMemoryResource() {
  // The driver defers the destruction until outstanding allocations are freed.
  if (owns_pool_) detail::release_quietly([&] { return raw::cuMemPoolDestroy(pool_); });
}

void* ManagedMemoryResource::allocate(std::size_t bytes, StreamRef stream) {
  require_bytes(bytes, "cubind::ManagedMemoryResource::allocate");
  detail::require_stream(stream, "cubind::ManagedMemoryResource::allocate");
  CUdeviceptr ptr = 0;
  // A pool's call on a stream of its own needs no guard: the stream names its
  // context (as MemoryPool::allocate). The default stream and cuMemAllocManaged
  // take the device's.
  std::optional<ContextGuard> guard;
  if (pool_ == nullptr || detail::is_default_stream(stream.handle())) guard.emplace(device_);
  refuse_capture(stream, "ManagedMemoryResource");
  if (pool_ != nullptr) {
    detail::check(raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool_, stream.handle()), "cuMemAllocFromPoolAsync");
  } else {
    detail::check(raw::cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
  }
  return to_pointer(ptr);
}

void ManagedMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  detail::require_stream(stream, "cubind::ManagedMemoryResource::deallocate");
  std::optional<ContextGuard> guard;
  if (pool_ == nullptr || detail::is_default_stream(stream.handle())) guard.emplace(device_);
  if (pool_ != nullptr) {
    detail::check(raw::cuMemFreeAsync(to_deviceptr(ptr), stream.handle()), "cuMemFreeAsync");
    return;
  }
  wait_for_stream(stream);
  detail::check(raw::cuMemFree(to_deviceptr(ptr)), "cuMemFree");
}

PoolEntryPoints pool_entry_points() {
  PoolEntryPoints entries{};
  entries.stream_is_capturing =
      reinterpret_cast<decltype(entries.stream_is_capturing)>(raw::driver_entry_point("cuStreamIsCapturing"));
  entries.alloc_from_pool_async =
      reinterpret_cast<decltype(entries.alloc_from_pool_async)>(raw::driver_entry_point("cuMemAllocFromPoolAsync"));
  entries.free_async = reinterpret_cast<decltype(entries.free_async)>(raw::driver_entry_point("cuMemFreeAsync"));
  return entries;
}

}  // namespace cubind

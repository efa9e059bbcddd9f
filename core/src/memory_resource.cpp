#include "cubind/memory_resource.hpp"

#include <unistd.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "runtime_support.hpp"

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

// DeviceMemoryResource

DeviceMemoryResource::DeviceMemoryResource(const Device& device)
    : device_(device), context_(detail::primary_context(device.ordinal())) {
  detail::check(raw::cuDeviceGetDefaultMemPool(&pool_, device.handle()), "cuDeviceGetDefaultMemPool");
}

DeviceMemoryResource::DeviceMemoryResource(const Device& device, const DeviceMemoryResourceOptions& options)
    : device_(device), context_(detail::primary_context(device.ordinal())) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = options.ipc_enabled ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
  props.location = device_location(device);
  props.maxSize = options.max_size;
  detail::check(raw::cuMemPoolCreate(&pool_, &props), "cuMemPoolCreate");
  owns_pool_ = true;
  ipc_enabled_ = options.ipc_enabled;
  if (options.release_threshold) {
    try {
      set_release_threshold(*options.release_threshold);
    } catch (...) {
      // The destructor does not run for a half-built object.
      raw::cuMemPoolDestroy(pool_);
      throw;
    }
  }
}

DeviceMemoryResource::DeviceMemoryResource(const Device& device, CUmemoryPool imported, Imported)
    : device_(device), context_(detail::primary_context(device.ordinal())), pool_(imported), owns_pool_(true) {}

std::shared_ptr<DeviceMemoryResource> DeviceMemoryResource::from_ipc_handle(const Device& device,
                                                                            const IpcPoolHandle& handle) {
  if (handle.fd() < 0) detail::throw_null("cubind::DeviceMemoryResource::from_ipc_handle", "IpcPoolHandle");
  ContextGuard guard(device);
  CUmemoryPool pool = nullptr;
  // For POSIX descriptors the "handle" argument is the descriptor itself, in a pointer.
  detail::check(raw::cuMemPoolImportFromShareableHandle(&pool, reinterpret_cast<void*>(static_cast<std::intptr_t>(handle.fd())),
                                                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                "cuMemPoolImportFromShareableHandle");
  try {
    return std::shared_ptr<DeviceMemoryResource>(new DeviceMemoryResource(device, pool, Imported{}));
  } catch (...) {
    raw::cuMemPoolDestroy(pool);
    throw;
  }
}

DeviceMemoryResource::~DeviceMemoryResource() {
  // The driver defers the destruction until outstanding allocations are freed.
  if (owns_pool_) detail::release_quietly([this] { return raw::cuMemPoolDestroy(pool_); });
}

void* DeviceMemoryResource::allocate(std::size_t bytes, StreamRef stream) {
  constexpr const char* where = "cubind::DeviceMemoryResource::allocate";
  require_bytes(bytes, where);
  CUdeviceptr ptr = 0;
  if (detail::is_default_stream(stream.handle())) {
    // Under the guard a default stream is this device's.
    ContextGuard guard(Context::from_native_handle(context_));
    detail::check(raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool_, stream.handle()), "cuMemAllocFromPoolAsync");
  } else {
    // A stream names its own context, so no guard: this path is the one the
    // allocation benchmarks hold to the raw call's speed.
    detail::require_stream_context(stream, context_, where);
    detail::check(raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool_, stream.handle()), "cuMemAllocFromPoolAsync");
  }
  return to_pointer(ptr);
}

void DeviceMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  if (detail::is_default_stream(stream.handle())) {
    ContextGuard guard(Context::from_native_handle(context_));
    detail::check(raw::cuMemFreeAsync(to_deviceptr(ptr), stream.handle()), "cuMemFreeAsync");
  } else {
    detail::require_stream_context(stream, context_, "cubind::DeviceMemoryResource::deallocate");
    detail::check(raw::cuMemFreeAsync(to_deviceptr(ptr), stream.handle()), "cuMemFreeAsync");
  }
}

std::uint64_t DeviceMemoryResource::release_threshold() const {
  cuuint64_t value = 0;
  detail::check(raw::cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value), "cuMemPoolGetAttribute");
  return value;
}

void DeviceMemoryResource::set_release_threshold(std::uint64_t bytes) {
  cuuint64_t value = bytes;
  detail::check(raw::cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value), "cuMemPoolSetAttribute");
}

std::uint64_t DeviceMemoryResource::used_memory() const {
  cuuint64_t value = 0;
  detail::check(raw::cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &value), "cuMemPoolGetAttribute");
  return value;
}

std::uint64_t DeviceMemoryResource::reserved_memory() const {
  cuuint64_t value = 0;
  detail::check(raw::cuMemPoolGetAttribute(pool_, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &value),
                "cuMemPoolGetAttribute");
  return value;
}

void DeviceMemoryResource::trim_to(std::size_t bytes_to_keep) {
  detail::check(raw::cuMemPoolTrimTo(pool_, bytes_to_keep), "cuMemPoolTrimTo");
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

IpcPoolHandle DeviceMemoryResource::export_ipc_handle() const {
  if (!ipc_enabled_) {
    throw std::logic_error(
        "cubind::DeviceMemoryResource::export_ipc_handle: the pool was not created with "
        "DeviceMemoryResourceOptions::ipc_enabled");
  }
  ContextGuard guard(device_);
  int fd = -1;
  detail::check(raw::cuMemPoolExportToShareableHandle(&fd, pool_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                "cuMemPoolExportToShareableHandle");
  return IpcPoolHandle::from_native_handle(fd);
}

// PinnedMemoryResource

PinnedMemoryResource::PinnedMemoryResource(const Device& device) : device_(device) {}

void* PinnedMemoryResource::allocate(std::size_t bytes, StreamRef stream) {
  require_bytes(bytes, "cubind::PinnedMemoryResource::allocate");
  detail::require_stream(stream, "cubind::PinnedMemoryResource::allocate");
  ContextGuard guard(device_);
  void* ptr = nullptr;
  detail::check(raw::cuMemHostAlloc(&ptr, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc");
  return ptr;
}

void PinnedMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  detail::require_stream(stream, "cubind::PinnedMemoryResource::deallocate");
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
  ContextGuard guard(device_);
  CUdeviceptr ptr = 0;
  if (pool_ != nullptr) {
    detail::check(raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool_, stream.handle()), "cuMemAllocFromPoolAsync");
  } else {
    detail::check(raw::cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
  }
  return to_pointer(ptr);
}

void ManagedMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  detail::require_stream(stream, "cubind::ManagedMemoryResource::deallocate");
  ContextGuard guard(device_);
  if (pool_ != nullptr) {
    detail::check(raw::cuMemFreeAsync(to_deviceptr(ptr), stream.handle()), "cuMemFreeAsync");
    return;
  }
  wait_for_stream(stream);
  detail::check(raw::cuMemFree(to_deviceptr(ptr)), "cuMemFree");
}

}  // namespace cubind

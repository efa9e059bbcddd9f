#include "cubind/virtual_memory.hpp"

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "driver_init.hpp"

namespace cubind {

namespace {

std::size_t round_up(std::size_t bytes, std::size_t granularity) {
  return (bytes + granularity - 1) / granularity * granularity;
}

bool is_host_type(CUmemLocationType type) {
  return type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
         type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
}

std::string hex(CUdeviceptr ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(ptr));
  return text;
}

CUdeviceptr to_deviceptr(void* ptr) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr)); }
void* to_pointer(CUdeviceptr ptr) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)); }

// Undo steps run in reverse unless commit() is called; a failing step is
// skipped, as the original error is the one to report.
class Rollback {
 public:
  template <typename F>
  void add(F step) {
    steps_.emplace_back(std::move(step));
  }
  void commit() noexcept { steps_.clear(); }
  ~Rollback() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      detail::release_quietly([&] { return (*it)(); });
    }
  }

 private:
  std::vector<std::function<CUresult()>> steps_;
};

}  // namespace

VirtualMemoryResource::VirtualMemoryResource(const Device& device, VirtualMemoryResourceOptions options)
    : device_(device), options_(std::move(options)) {
  if (options_.addr_align & (options_.addr_align - 1)) {
    throw std::invalid_argument("cubind::VirtualMemoryResource: addr_align " + std::to_string(options_.addr_align) +
                                " is not a power of two");
  }
}

VirtualMemoryResource::~VirtualMemoryResource() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [base, allocation] : allocations_) free_allocation(base, allocation);
}

void VirtualMemoryResource::set_options(VirtualMemoryResourceOptions options) {
  std::lock_guard<std::mutex> lock(mutex_);
  options_ = std::move(options);
}

bool VirtualMemoryResource::is_device_accessible() const noexcept {
  return options_.location_type == CU_MEM_LOCATION_TYPE_DEVICE;
}

bool VirtualMemoryResource::is_host_accessible() const noexcept { return is_host_type(options_.location_type); }

int VirtualMemoryResource::device_id() const noexcept {
  return options_.location_type == CU_MEM_LOCATION_TYPE_DEVICE ? device_.ordinal() : -1;
}

CUmemAllocationProp VirtualMemoryResource::properties() const {
  CUmemAllocationProp prop{};
  prop.type = options_.allocation_type;
  prop.location.type = options_.location_type;
  prop.location.id = options_.location_type == CU_MEM_LOCATION_TYPE_DEVICE ? device_.ordinal() : options_.location_id;
  prop.requestedHandleTypes = options_.handle_type;
  prop.allocFlags.gpuDirectRDMACapable = options_.gpu_direct_rdma ? 1 : 0;
  return prop;
}

std::vector<CUmemAccessDesc> VirtualMemoryResource::access_descriptors() const {
  std::vector<CUmemAccessDesc> descriptors;
  CUmemAllocationProp prop = properties();
  if (options_.self_access != CU_MEM_ACCESS_FLAGS_PROT_NONE) {
    CUmemAccessDesc own{};
    own.location = prop.location;
    own.flags = options_.self_access;
    descriptors.push_back(own);
  }
  if (options_.peer_access != CU_MEM_ACCESS_FLAGS_PROT_NONE) {
    for (int peer : options_.peers) {
      CUmemAccessDesc desc{};
      desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      desc.location.id = peer;
      desc.flags = options_.peer_access;
      descriptors.push_back(desc);
    }
  }
  return descriptors;
}

void VirtualMemoryResource::set_access(CUdeviceptr ptr, std::size_t bytes) const {
  std::vector<CUmemAccessDesc> descriptors = access_descriptors();
  if (descriptors.empty()) return;
  detail::check(raw::cuMemSetAccess(ptr, bytes, descriptors.data(), descriptors.size()), "cuMemSetAccess");
}

std::size_t VirtualMemoryResource::granularity() const {
  CUmemAllocationProp prop = properties();
  std::size_t value = 0;
  detail::check(raw::cuMemGetAllocationGranularity(&value, &prop, options_.granularity),
                "cuMemGetAllocationGranularity");
  if (value == 0) throw std::runtime_error("cubind::VirtualMemoryResource: the driver reports a granularity of 0");
  return value;
}

std::size_t VirtualMemoryResource::aligned_size(std::size_t bytes) const {
  ContextGuard guard(device_);
  return round_up(bytes, granularity());
}

std::size_t VirtualMemoryResource::mapped_size(void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = allocations_.find(to_deviceptr(ptr));
  if (found == allocations_.end()) {
    throw std::invalid_argument("cubind::VirtualMemoryResource::mapped_size: " + hex(to_deviceptr(ptr)) +
                                " is not an allocation of this resource");
  }
  return found->second.size;
}

void* VirtualMemoryResource::allocate(std::size_t bytes, StreamRef /*stream*/) {
  if (bytes == 0) {
    throw std::out_of_range("cubind::VirtualMemoryResource::allocate: size is 0 bytes; an allocation holds at least 1 byte");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ContextGuard guard(device_);
  const std::size_t gran = granularity();
  const std::size_t size = round_up(bytes, gran);
  const std::size_t align = options_.addr_align ? options_.addr_align : gran;
  CUmemAllocationProp prop = properties();
  Rollback rollback;
  CUmemGenericAllocationHandle handle = 0;
  detail::check(raw::cuMemCreate(&handle, size, &prop, 0), "cuMemCreate");
  rollback.add([=] { return raw::cuMemRelease(handle); });
  CUdeviceptr ptr = 0;
  detail::check(raw::cuMemAddressReserve(&ptr, size, align, options_.addr_hint, 0), "cuMemAddressReserve");
  rollback.add([=] { return raw::cuMemAddressFree(ptr, size); });
  detail::check(raw::cuMemMap(ptr, size, 0, handle, 0), "cuMemMap");
  rollback.add([=] { return raw::cuMemUnmap(ptr, size); });
  set_access(ptr, size);
  Allocation allocation;
  allocation.reservations.push_back({ptr, size});
  allocation.chunks.push_back({handle, 0, size});
  allocation.size = size;
  allocations_.emplace(ptr, std::move(allocation));
  rollback.commit();
  return to_pointer(ptr);
}

void VirtualMemoryResource::free_allocation(CUdeviceptr base, const Allocation& allocation) noexcept {
  for (const Chunk& chunk : allocation.chunks) {
    detail::release_quietly([&] { return raw::cuMemUnmap(base + chunk.offset, chunk.size); });
    detail::release_quietly([&] { return raw::cuMemRelease(chunk.handle); });
  }
  for (const Range& range : allocation.reservations) {
    detail::release_quietly([&] { return raw::cuMemAddressFree(range.ptr, range.size); });
  }
}

void VirtualMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  const CUdeviceptr base = to_deviceptr(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = allocations_.find(base);
  if (found == allocations_.end()) {
    throw std::invalid_argument("cubind::VirtualMemoryResource::deallocate: " + hex(base) +
                                " is not an allocation of this resource");
  }
  ContextGuard guard(device_);
  // Queued work may still use the memory.
  detail::check(raw::cuStreamSynchronize(stream.handle()), "cuStreamSynchronize");
  Allocation allocation = std::move(found->second);
  allocations_.erase(found);
  for (const Chunk& chunk : allocation.chunks) {
    detail::check(raw::cuMemUnmap(base + chunk.offset, chunk.size), "cuMemUnmap");
    detail::check(raw::cuMemRelease(chunk.handle), "cuMemRelease");
  }
  for (const Range& range : allocation.reservations) {
    detail::check(raw::cuMemAddressFree(range.ptr, range.size), "cuMemAddressFree");
  }
}

void* VirtualMemoryResource::grow(void* ptr, std::size_t new_size) {
  const CUdeviceptr base = to_deviceptr(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = allocations_.find(base);
  if (found == allocations_.end()) {
    throw std::invalid_argument("cubind::VirtualMemoryResource::grow: " + hex(base) +
                                " is not an allocation of this resource");
  }
  Allocation& allocation = found->second;
  ContextGuard guard(device_);
  if (new_size <= allocation.size) {
    for (const Chunk& chunk : allocation.chunks) set_access(base + chunk.offset, chunk.size);
    return ptr;
  }
  const std::size_t gran = granularity();
  const std::size_t old_size = allocation.size;
  const std::size_t total = round_up(new_size, gran);
  const std::size_t extra = total - old_size;
  const std::size_t align = options_.addr_align ? options_.addr_align : gran;
  CUmemAllocationProp prop = properties();

  // In place: the range right after the end.
  CUdeviceptr wanted = base + old_size;
  CUdeviceptr got = 0;
  CUresult status = raw::cuMemAddressReserve(&got, extra, align, wanted, 0);
  if (status == CUDA_ERROR_INVALID_VALUE || status == CUDA_ERROR_NOT_PERMITTED ||
      status == CUDA_ERROR_NOT_INITIALIZED || status == CUDA_ERROR_NOT_SUPPORTED) {
    detail::check(status, "cuMemAddressReserve");
  }
  if (status == CUDA_SUCCESS && got == wanted) {
    Rollback rollback;
    rollback.add([=] { return raw::cuMemAddressFree(got, extra); });
    CUmemGenericAllocationHandle handle = 0;
    detail::check(raw::cuMemCreate(&handle, extra, &prop, 0), "cuMemCreate");
    rollback.add([=] { return raw::cuMemRelease(handle); });
    detail::check(raw::cuMemMap(got, extra, 0, handle, 0), "cuMemMap");
    rollback.add([=] { return raw::cuMemUnmap(got, extra); });
    set_access(got, extra);
    allocation.reservations.push_back({got, extra});
    allocation.chunks.push_back({handle, old_size, extra});
    allocation.size = total;
    rollback.commit();
    return ptr;
  }
  if (status == CUDA_SUCCESS) detail::check(raw::cuMemAddressFree(got, extra), "cuMemAddressFree");

  // Elsewhere: a range for the whole, the old physical memory mapped at its
  // start (it stays mapped at the old address until the end, so nothing is
  // lost on failure) and new physical memory after it.
  Rollback rollback;
  CUdeviceptr moved = 0;
  detail::check(raw::cuMemAddressReserve(&moved, total, align, 0, 0), "cuMemAddressReserve");
  rollback.add([=] { return raw::cuMemAddressFree(moved, total); });
  for (const Chunk& chunk : allocation.chunks) {
    detail::check(raw::cuMemMap(moved + chunk.offset, chunk.size, 0, chunk.handle, 0), "cuMemMap");
    rollback.add([=] { return raw::cuMemUnmap(moved + chunk.offset, chunk.size); });
    set_access(moved + chunk.offset, chunk.size);
  }
  CUmemGenericAllocationHandle handle = 0;
  detail::check(raw::cuMemCreate(&handle, extra, &prop, 0), "cuMemCreate");
  rollback.add([=] { return raw::cuMemRelease(handle); });
  detail::check(raw::cuMemMap(moved + old_size, extra, 0, handle, 0), "cuMemMap");
  rollback.add([=] { return raw::cuMemUnmap(moved + old_size, extra); });
  set_access(moved + old_size, extra);
  rollback.commit();

  Allocation grown;
  grown.reservations.push_back({moved, total});
  grown.chunks = allocation.chunks;
  grown.chunks.push_back({handle, old_size, extra});
  grown.size = total;
  // The old addresses go; their physical memory stays mapped at the new ones.
  for (const Chunk& chunk : allocation.chunks) {
    detail::release_quietly([&] { return raw::cuMemUnmap(base + chunk.offset, chunk.size); });
  }
  for (const Range& range : allocation.reservations) {
    detail::release_quietly([&] { return raw::cuMemAddressFree(range.ptr, range.size); });
  }
  allocations_.erase(found);
  allocations_.emplace(moved, std::move(grown));
  return to_pointer(moved);
}

}  // namespace cubind

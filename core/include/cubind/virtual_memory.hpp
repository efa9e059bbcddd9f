// Memory through the driver's virtual memory management: physical memory
// (cuMemCreate) mapped into an address range reserved apart from it
// (cuMemAddressReserve, cuMemMap), with access granted per device
// (cuMemSetAccess). An allocation can grow in place: more address space is
// reserved right after its end and new physical memory mapped there, so its
// address and contents stay (grow); where the driver cannot give that range,
// a larger range is reserved elsewhere and the old physical memory mapped
// into it beside the new, which keeps the contents but moves the address.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "cubind/memory_resource.hpp"

namespace cubind {

struct VirtualMemoryResourceOptions {
  CUmemAllocationType allocation_type = CU_MEM_ALLOCATION_TYPE_PINNED;
  CUmemLocationType location_type = CU_MEM_LOCATION_TYPE_DEVICE;
  // The location's id: the device's ordinal for device memory, the NUMA node
  // for CU_MEM_LOCATION_TYPE_HOST_NUMA; ignored for other host types.
  int location_id = 0;
  // The shareable handle type the physical memory may be exported as.
  CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemAllocationGranularity_flags granularity = CU_MEM_ALLOC_GRANULARITY_RECOMMENDED;
  bool gpu_direct_rdma = false;
  // Where to try to reserve the address range; 0 lets the driver pick.
  CUdeviceptr addr_hint = 0;
  // Alignment of the address range; 0 is the granularity.
  std::size_t addr_align = 0;
  // Devices granted access besides the owning location, with peer_access.
  std::vector<int> peers;
  // 0 (CU_MEM_ACCESS_FLAGS_PROT_NONE) grants nothing.
  CUmemAccess_flags self_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CUmemAccess_flags peer_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
};

// allocate rounds sizes up to the granularity; allocation is immediate, not
// stream-ordered, and deallocate waits for the stream first, since queued
// work may still use the memory. `device`'s primary context performs the
// driver calls.
class VirtualMemoryResource final : public MemoryResource {
 public:
  VirtualMemoryResource(const Device& device, VirtualMemoryResourceOptions options);
  // Unmaps and frees whatever was not deallocated.
  ~VirtualMemoryResource() override;
  VirtualMemoryResource(const VirtualMemoryResource&) = delete;
  VirtualMemoryResource& operator=(const VirtualMemoryResource&) = delete;

  void* allocate(std::size_t bytes, StreamRef stream) override;
  // @throws std::invalid_argument for an address allocate did not return.
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override;
  bool is_device_accessible() const noexcept override;
  bool is_host_accessible() const noexcept override;
  int device_id() const noexcept override;

  const VirtualMemoryResourceOptions& options() const noexcept { return options_; }
  // Later allocations and growth use these; existing mappings keep theirs.
  void set_options(VirtualMemoryResourceOptions options);

  // cuMemGetAllocationGranularity for the current options.
  std::size_t granularity() const;
  // `bytes` rounded up to the granularity.
  std::size_t aligned_size(std::size_t bytes) const;
  // The bytes mapped behind an allocation (a multiple of the granularity).
  std::size_t mapped_size(void* ptr) const;

  // Makes the allocation at `ptr` at least `new_size` bytes, keeping its
  // contents, and returns its address: `ptr` when the range after it could be
  // reserved, another address otherwise (the old one is then freed). A size
  // within what is mapped already only re-applies the access rights. On
  // failure nothing has changed.
  // @throws std::invalid_argument for an address allocate did not return.
  void* grow(void* ptr, std::size_t new_size);

 private:
  struct Chunk {
    CUmemGenericAllocationHandle handle;
    std::size_t offset;
    std::size_t size;
  };
  struct Range {
    CUdeviceptr ptr;
    std::size_t size;
  };
  struct Allocation {
    std::vector<Range> reservations;
    std::vector<Chunk> chunks;
    std::size_t size = 0;
  };

  CUmemAllocationProp properties() const;
  std::vector<CUmemAccessDesc> access_descriptors() const;
  void set_access(CUdeviceptr ptr, std::size_t bytes) const;
  static void free_allocation(CUdeviceptr base, const Allocation& allocation) noexcept;

  Device device_;
  VirtualMemoryResourceOptions options_;
  mutable std::mutex mutex_;
  std::map<CUdeviceptr, Allocation> allocations_;
};

}  // namespace cubind

// Managed memory pools, virtual memory and batched copies for cubind.core's
// Cython modules: owners made on the heap by ordinal, and plain-int forms of
// the driver's structs, so that the .pxi files need none of their layouts.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "_owners.hpp"
#include "cubind/copy_batch.hpp"
#include "cubind/managed_memory.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/virtual_memory.hpp"

namespace cubind_core {

// type: CUmemLocationType (0: none).
inline CUmemLocation memory_location(int type, int id) {
  CUmemLocation location{};
  location.type = static_cast<CUmemLocationType>(type);
  location.id = id;
  return location;
}

inline cubind::ManagedMemoryResource* managed_pool_new(int ordinal, int type, int id) {
  cubind::ManagedMemoryResourceOptions options;
  if (type != 0) options.preferred_location = memory_location(type, id);
  return new cubind::ManagedMemoryResource(device(ordinal), options);
}

inline std::shared_ptr<cubind::ManagedMemoryResource> managed_pool_current(int ordinal) {
  return cubind::ManagedMemoryResource::current_pool(device(ordinal), memory_location(0, 0));
}

inline void managed_prefetch(std::uintptr_t ptr, std::size_t size, int type, int id, CUstream stream) {
  cubind::prefetch({ptr, size}, memory_location(type, id), cubind::StreamRef(stream));
}

// which: 0 prefetch, 1 discard, 2 discard and prefetch; types and ids: one
// location per range or one for all.
inline void managed_batch(int which, const std::vector<std::uintptr_t>& ptrs, const std::vector<std::size_t>& sizes,
                          const std::vector<int>& types, const std::vector<int>& ids, CUstream stream) {
  std::vector<cubind::ManagedRange> ranges;
  for (std::size_t i = 0; i < ptrs.size(); ++i) ranges.push_back({ptrs[i], sizes[i]});
  std::vector<CUmemLocation> locations;
  for (std::size_t i = 0; i < types.size(); ++i) locations.push_back(memory_location(types[i], ids[i]));
  if (which == 0) {
    cubind::prefetch_batch(ranges, locations, cubind::StreamRef(stream));
  } else if (which == 1) {
    cubind::discard_batch(ranges, cubind::StreamRef(stream));
  } else {
    cubind::discard_prefetch_batch(ranges, locations, cubind::StreamRef(stream));
  }
}

inline void managed_advise(std::uintptr_t ptr, std::size_t size, int advice, int type, int id) {
  cubind::advise({ptr, size}, static_cast<CUmem_advise>(advice), memory_location(type, id));
}

inline int managed_range_attribute(std::uintptr_t ptr, std::size_t size, int attribute) {
  return cubind::range_attribute({ptr, size}, static_cast<CUmem_range_attribute>(attribute));
}

inline std::vector<int> managed_accessed_by(std::uintptr_t ptr, std::size_t size, std::size_t slots) {
  return cubind::range_accessed_by({ptr, size}, slots);
}

// Per copy: source access order, hint types and ids (type 0: no hint), flags.
struct CopyAttributes {
  int src_access_order = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  int src_type = 0, src_id = 0, dst_type = 0, dst_id = 0;
  unsigned flags = 0;
};

inline void copy_batch(const std::vector<std::uintptr_t>& dsts, const std::vector<std::uintptr_t>& srcs,
                       const std::vector<std::size_t>& sizes, const std::vector<CopyAttributes>& attributes,
                       CUstream stream) {
  std::vector<cubind::BatchCopy> copies;
  for (std::size_t i = 0; i < dsts.size(); ++i) copies.push_back({dsts[i], srcs[i], sizes[i]});
  std::vector<CUmemcpyAttributes> native;
  for (const CopyAttributes& a : attributes) {
    CUmemcpyAttributes n = cubind::default_copy_attributes();
    n.srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(a.src_access_order);
    n.srcLocHint = memory_location(a.src_type, a.src_id);
    n.dstLocHint = memory_location(a.dst_type, a.dst_id);
    n.flags = a.flags;
    native.push_back(n);
  }
  cubind::copy_batch(copies, native, cubind::StreamRef(stream));
}

struct VirtualMemorySettings {
  int allocation_type = CU_MEM_ALLOCATION_TYPE_PINNED;
  int location_type = CU_MEM_LOCATION_TYPE_DEVICE;
  int location_id = 0;
  int handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  int granularity = CU_MEM_ALLOC_GRANULARITY_RECOMMENDED;
  bool gpu_direct_rdma = false;
  std::uintptr_t addr_hint = 0;
  std::size_t addr_align = 0;
  std::vector<int> peers;
  int self_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  int peer_access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
};

inline cubind::VirtualMemoryResourceOptions virtual_memory_options(const VirtualMemorySettings& s) {
  cubind::VirtualMemoryResourceOptions o;
  o.allocation_type = static_cast<CUmemAllocationType>(s.allocation_type);
  o.location_type = static_cast<CUmemLocationType>(s.location_type);
  o.location_id = s.location_id;
  o.handle_type = static_cast<CUmemAllocationHandleType>(s.handle_type);
  o.granularity = static_cast<CUmemAllocationGranularity_flags>(s.granularity);
  o.gpu_direct_rdma = s.gpu_direct_rdma;
  o.addr_hint = s.addr_hint;
  o.addr_align = s.addr_align;
  o.peers = s.peers;
  o.self_access = static_cast<CUmemAccess_flags>(s.self_access);
  o.peer_access = static_cast<CUmemAccess_flags>(s.peer_access);
  return o;
}

inline cubind::VirtualMemoryResource* virtual_memory_new(int ordinal, const VirtualMemorySettings& settings) {
  return new cubind::VirtualMemoryResource(device(ordinal), virtual_memory_options(settings));
}

inline void virtual_memory_set_options(cubind::VirtualMemoryResource* resource, const VirtualMemorySettings& settings) {
  resource->set_options(virtual_memory_options(settings));
}

inline cubind::Buffer* buffer_adopt(std::uintptr_t ptr, std::size_t size,
                                    const std::shared_ptr<cubind::MemoryResource>& resource, CUstream stream) {
  return new cubind::Buffer(
      cubind::Buffer::from_native_handle(reinterpret_cast<void*>(ptr), size, resource, cubind::StreamRef(stream)));
}

}  // namespace cubind_core

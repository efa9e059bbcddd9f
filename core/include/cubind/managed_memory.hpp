// Managed (unified) memory: where its pages live and how the driver should
// treat them. Prefetches, discards and advice over any managed range (from
// ManagedMemoryResource, cuMemAllocManaged or __managed__ variables), and
// the range queries that read the advice back. Locations are CUmemLocation
// (CUDA 13's form): a device, the host, a host NUMA node or the calling
// thread's NUMA node.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <vector>

#include "cubind/stream.hpp"

namespace cubind {

// A device by ordinal; the host (any NUMA node); a host NUMA node; the
// calling thread's NUMA node.
CUmemLocation device_memory_location(int ordinal) noexcept;
CUmemLocation host_memory_location() noexcept;
CUmemLocation host_numa_memory_location(int numa_id) noexcept;
CUmemLocation host_numa_current_memory_location() noexcept;

// One managed range.
struct ManagedRange {
  CUdeviceptr ptr = 0;
  std::size_t size = 0;
};

// Migrates the range to `location`, ordered on `stream` (cuMemPrefetchAsync).
// @throws std::invalid_argument for an empty range; CudaError from the driver.
void prefetch(ManagedRange range, CUmemLocation location, StreamRef stream);

// Each range to its location, one driver call (cuMemPrefetchBatchAsync).
// `locations` holds one location for every range, or a single one for all.
// @throws std::invalid_argument for no ranges, an empty range, or a count of
// locations that is neither 1 nor the count of ranges.
void prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<CUmemLocation>& locations,
                    StreamRef stream);

// Drops the ranges' contents: their pages are released without being copied
// anywhere, and read back as undefined (cuMemDiscardBatchAsync).
void discard_batch(const std::vector<ManagedRange>& ranges, StreamRef stream);

// Drops the contents and places fresh pages at the locations
// (cuMemDiscardAndPrefetchBatchAsync). `locations` as for prefetch_batch.
void discard_prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<CUmemLocation>& locations,
                            StreamRef stream);

// cuMemAdvise. The location is ignored by the read-mostly advice.
void advise(ManagedRange range, CUmem_advise advice, CUmemLocation location);

// A 4-byte range attribute (cuMemRangeGetAttribute): READ_MOSTLY,
// PREFERRED_LOCATION, PREFERRED_LOCATION_TYPE, PREFERRED_LOCATION_ID, ...
int range_attribute(ManagedRange range, CUmem_range_attribute attribute);

// The devices the range is advised as accessed by (-1 is the host), asking
// for room for `slots` entries (CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY).
std::vector<int> range_accessed_by(ManagedRange range, std::size_t slots);

namespace detail {

// Where each run of equal neighbours starts: the `...Idxs` arrays of the
// batched driver calls, which apply entry k of a list to the items from
// starts[k] up to starts[k + 1]. Equal is compared bytewise.
template <typename T>
std::vector<std::size_t> run_starts(const std::vector<T>& items);

// The batch's location list and its index list, collapsed into runs, for
// `count` ranges; `locations` has 1 or `count` entries.
void collapse_locations(const std::vector<CUmemLocation>& locations, std::size_t count,
                        std::vector<CUmemLocation>& out, std::vector<std::size_t>& starts, const char* where);

}  // namespace detail

}  // namespace cubind

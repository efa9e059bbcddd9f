#include "cubind/managed_memory.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind {

namespace {

CUmemLocation location_of(CUmemLocationType type, int id) noexcept {
  CUmemLocation location{};
  location.type = type;
  location.id = id;
  return location;
}

void require_range(ManagedRange range, const char* where) {
  if (range.ptr == 0) throw std::invalid_argument(std::string(where) + ": the range's address is 0");
  if (range.size == 0) throw std::invalid_argument(std::string(where) + ": the range is 0 bytes");
}

void split(const std::vector<ManagedRange>& ranges, std::vector<CUdeviceptr>& ptrs, std::vector<std::size_t>& sizes,
           const char* where) {
  if (ranges.empty()) throw std::invalid_argument(std::string(where) + ": no ranges");
  ptrs.reserve(ranges.size());
  sizes.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].ptr == 0 || ranges[i].size == 0) {
      throw std::invalid_argument(std::string(where) + ": range " + std::to_string(i) +
                                  (ranges[i].ptr == 0 ? " has address 0" : " is 0 bytes"));
    }
    ptrs.push_back(ranges[i].ptr);
    sizes.push_back(ranges[i].size);
  }
}

}  // namespace

CUmemLocation device_memory_location(int ordinal) noexcept { return location_of(CU_MEM_LOCATION_TYPE_DEVICE, ordinal); }
CUmemLocation host_memory_location() noexcept { return location_of(CU_MEM_LOCATION_TYPE_HOST, 0); }
CUmemLocation host_numa_memory_location(int numa_id) noexcept {
  return location_of(CU_MEM_LOCATION_TYPE_HOST_NUMA, numa_id);
}
CUmemLocation host_numa_current_memory_location() noexcept {
  return location_of(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0);
}

namespace detail {

template <typename T>
std::vector<std::size_t> run_starts(const std::vector<T>& items) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i == 0 || std::memcmp(&items[i], &items[i - 1], sizeof(T)) != 0) starts.push_back(i);
  }
  return starts;
}

template std::vector<std::size_t> run_starts<CUmemLocation>(const std::vector<CUmemLocation>&);
template std::vector<std::size_t> run_starts<CUmemcpyAttributes>(const std::vector<CUmemcpyAttributes>&);

void collapse_locations(const std::vector<CUmemLocation>& locations, std::size_t count,
                        std::vector<CUmemLocation>& out, std::vector<std::size_t>& starts, const char* where) {
  if (locations.size() != 1 && locations.size() != count) {
    throw std::invalid_argument(std::string(where) + ": " + std::to_string(locations.size()) + " locations for " +
                                std::to_string(count) + " ranges; give one for all or one per range");
  }
  if (locations.size() == 1) {
    out = locations;
    starts.assign(1, 0);
    return;
  }
  starts = run_starts(locations);
  out.clear();
  for (std::size_t start : starts) out.push_back(locations[start]);
}

}  // namespace detail

void prefetch(ManagedRange range, CUmemLocation location, StreamRef stream) {
  require_range(range, "cubind::prefetch");
  detail::check(raw::cuMemPrefetchAsync(range.ptr, range.size, location, 0, stream.handle()), "cuMemPrefetchAsync");
}

namespace {

// A batched call that places ranges at locations (cuMemPrefetchBatchAsync,
// cuMemDiscardAndPrefetchBatchAsync: the same parameters), the locations
// collapsed into runs.
template <typename BatchCall>
void batch_at_locations(BatchCall call, const char* call_name, const std::vector<ManagedRange>& ranges,
                        const std::vector<CUmemLocation>& locations, StreamRef stream, const char* where) {
  std::vector<CUdeviceptr> ptrs;
  std::vector<std::size_t> sizes;
  split(ranges, ptrs, sizes, where);
  std::vector<CUmemLocation> locs;
  std::vector<std::size_t> starts;
  detail::collapse_locations(locations, ranges.size(), locs, starts, where);
  detail::check(call(ptrs.data(), sizes.data(), ptrs.size(), locs.data(), starts.data(), locs.size(), 0,
                     stream.handle()),
                call_name);
}

}  // namespace

void prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<CUmemLocation>& locations,
                    StreamRef stream) {
  batch_at_locations(raw::cuMemPrefetchBatchAsync, "cuMemPrefetchBatchAsync", ranges, locations, stream,
                     "cubind::prefetch_batch");
}

void discard_batch(const std::vector<ManagedRange>& ranges, StreamRef stream) {
  std::vector<CUdeviceptr> ptrs;
  std::vector<std::size_t> sizes;
  split(ranges, ptrs, sizes, "cubind::discard_batch");
  detail::check(raw::cuMemDiscardBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), 0, stream.handle()),
                "cuMemDiscardBatchAsync");
}

void discard_prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<CUmemLocation>& locations,
                            StreamRef stream) {
  batch_at_locations(raw::cuMemDiscardAndPrefetchBatchAsync, "cuMemDiscardAndPrefetchBatchAsync", ranges,
                     locations, stream, "cubind::discard_prefetch_batch");
}

void advise(ManagedRange range, CUmem_advise advice, CUmemLocation location) {
  require_range(range, "cubind::advise");
  detail::check(raw::cuMemAdvise(range.ptr, range.size, advice, location), "cuMemAdvise");
}

int range_attribute(ManagedRange range, CUmem_range_attribute attribute) {
  require_range(range, "cubind::range_attribute");
  int value = 0;
  detail::check(raw::cuMemRangeGetAttribute(&value, sizeof value, attribute, range.ptr, range.size),
                "cuMemRangeGetAttribute");
  return value;
}

std::vector<int> range_accessed_by(ManagedRange range, std::size_t slots) {
  require_range(range, "cubind::range_accessed_by");
  // The driver fills unused slots with -2.
  std::vector<int> values(slots == 0 ? 1 : slots, -2);
  detail::check(raw::cuMemRangeGetAttribute(values.data(), values.size() * sizeof(int),
                                            CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, range.ptr, range.size),
                "cuMemRangeGetAttribute");
  std::vector<int> found;
  for (int v : values) {
    if (v != -2) found.push_back(v);
  }
  return found;
}

}  // namespace cubind

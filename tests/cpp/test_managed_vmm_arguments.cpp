// Managed-memory batches, batched copies and virtual memory: the argument
// checks that fire before any driver call, and the run encoding of the
// batched calls' attribute and location lists. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cubind/copy_batch.hpp"
#include "cubind/managed_memory.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::BatchCopy;
using cubind::ManagedRange;
using cubind::StreamRef;
using cubind_test::message_of;

CUstream some_stream() { return reinterpret_cast<CUstream>(std::uintptr_t{0x1000}); }

TEST(ManagedLocations, NameTheirKindAndId) {
  EXPECT_EQ(cubind::device_memory_location(3).type, CU_MEM_LOCATION_TYPE_DEVICE);
  EXPECT_EQ(cubind::device_memory_location(3).id, 3);
  EXPECT_EQ(cubind::host_memory_location().type, CU_MEM_LOCATION_TYPE_HOST);
  EXPECT_EQ(cubind::host_numa_memory_location(1).type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  EXPECT_EQ(cubind::host_numa_memory_location(1).id, 1);
  EXPECT_EQ(cubind::host_numa_current_memory_location().type, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
}

TEST(RunStarts, CollapseEqualNeighbours) {
  using L = std::vector<CUmemLocation>;
  const CUmemLocation d0 = cubind::device_memory_location(0), d1 = cubind::device_memory_location(1);
  const CUmemLocation host = cubind::host_memory_location();
  EXPECT_EQ(cubind::detail::run_starts(L{}), (std::vector<std::size_t>{}));
  EXPECT_EQ(cubind::detail::run_starts(L{d0, d0, d0}), (std::vector<std::size_t>{0}));
  EXPECT_EQ(cubind::detail::run_starts(L{d0, d1, d1, host, d0}), (std::vector<std::size_t>{0, 1, 3, 4}));
}

TEST(RunStarts, OfCopyAttributes) {
  CUmemcpyAttributes a = cubind::default_copy_attributes();
  CUmemcpyAttributes b = a;
  b.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
  EXPECT_EQ(cubind::detail::run_starts(std::vector<CUmemcpyAttributes>{a, a, b, b, a}),
            (std::vector<std::size_t>{0, 2, 4}));
}

TEST(CollapseLocations, OneForAllOrOnePerRange) {
  std::vector<CUmemLocation> out;
  std::vector<std::size_t> starts;
  const CUmemLocation d0 = cubind::device_memory_location(0), host = cubind::host_memory_location();
  cubind::detail::collapse_locations({d0}, 5, out, starts, "here");
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(starts, (std::vector<std::size_t>{0}));
  cubind::detail::collapse_locations({d0, d0, host}, 3, out, starts, "here");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].type, CU_MEM_LOCATION_TYPE_HOST);
  EXPECT_EQ(starts, (std::vector<std::size_t>{0, 2}));
  EXPECT_THROW(cubind::detail::collapse_locations({d0, host}, 3, out, starts, "here"), std::invalid_argument);
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::detail::collapse_locations({d0, host}, 3, out, starts, "here"); }),
            "here: 2 locations for 3 ranges; give one for all or one per range");
}

TEST(ManagedBatches, RefuseEmptyBatchesAndRanges) {
  const CUmemLocation d0 = cubind::device_memory_location(0);
  EXPECT_THROW(cubind::prefetch_batch({}, {d0}, StreamRef(some_stream())), std::invalid_argument);
  EXPECT_THROW(cubind::discard_batch({}, StreamRef(some_stream())), std::invalid_argument);
  EXPECT_THROW(cubind::discard_prefetch_batch({{0x2000, 0}}, {d0}, StreamRef(some_stream())), std::invalid_argument);
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::discard_batch({{0x2000, 16}, {0, 16}}, StreamRef(some_stream())); }),
            "cubind::discard_batch: range 1 has address 0");
  EXPECT_THROW(cubind::prefetch({0x2000, 0}, d0, StreamRef(some_stream())), std::invalid_argument);
  EXPECT_THROW(cubind::advise({0, 8}, CU_MEM_ADVISE_SET_READ_MOSTLY, d0), std::invalid_argument);
  EXPECT_THROW(cubind::prefetch_batch({{0x2000, 8}, {0x3000, 8}, {0x4000, 8}}, {d0, d0}, StreamRef(some_stream())),
               std::invalid_argument);
}

TEST(CopyBatch, DefaultAttributesAreStreamOrderedWithoutHints) {
  const CUmemcpyAttributes a = cubind::default_copy_attributes();
  EXPECT_EQ(a.srcAccessOrder, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
  EXPECT_EQ(a.srcLocHint.type, CU_MEM_LOCATION_TYPE_INVALID);
  EXPECT_EQ(a.dstLocHint.type, CU_MEM_LOCATION_TYPE_INVALID);
  EXPECT_EQ(a.flags, static_cast<unsigned>(CU_MEMCPY_FLAG_DEFAULT));
}

TEST(CopyBatch, RefusesBadArguments) {
  const std::vector<CUmemcpyAttributes> one{cubind::default_copy_attributes()};
  const std::vector<BatchCopy> two{{0x1000, 0x2000, 8}, {0x3000, 0x4000, 8}};
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::copy_batch({}, one, StreamRef(some_stream())); }), "cubind::copy_batch: no copies");
  EXPECT_THROW(cubind::copy_batch(two, one, StreamRef(CU_STREAM_LEGACY)), std::invalid_argument);
  EXPECT_THROW(cubind::copy_batch(two, one, StreamRef(CUstream{nullptr})), std::invalid_argument);
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::copy_batch(two, {one[0], one[0], one[0]}, StreamRef(some_stream())); }),
            "cubind::copy_batch: 3 attributes for 2 copies; give one for all or one per copy");
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::copy_batch({{0x1000, 0x2000, 0}}, one, StreamRef(some_stream())); }),
            "cubind::copy_batch: copy 0 is 0 bytes");
}

}  // namespace

// Managed memory pools and their advice, batched copies and virtual memory
// on a real GPU: contents checked by value after every step.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/copy_batch.hpp"
#include "cubind/device.hpp"
#include "cubind/managed_memory.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "cubind/virtual_memory.hpp"
#include "test_helpers.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::ManagedMemoryResource;
using cubind::ManagedRange;
using cubind::Stream;
using cubind::VirtualMemoryResource;
using cubind::VirtualMemoryResourceOptions;
using cubind::detail::check;

std::vector<std::uint32_t> pattern(std::size_t n, std::uint32_t first) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

class ManagedVmmGpuTest : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    stream.emplace(*device);
  }
  bool concurrent_managed_access() const {
    return dev().attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
  }
  std::optional<Stream> stream;
};

TEST_F(ManagedVmmGpuTest, ManagedPoolMemoryIsWrittenByTheHostAndPrefetched) {
  if (!concurrent_managed_access()) GTEST_SKIP() << "the device has no concurrent managed access";
  auto resource = std::make_shared<ManagedMemoryResource>(dev(), cubind::ManagedMemoryResourceOptions{});
  EXPECT_TRUE(resource->owns_pool());
  EXPECT_NE(resource->handle(), nullptr);
  const std::size_t n = 1 << 16;
  Buffer buffer = Buffer::allocate(resource, n * 4, *stream);
  stream->sync();
  auto* words = static_cast<std::uint32_t*>(buffer.data());
  for (std::size_t i = 0; i < n; ++i) words[i] = static_cast<std::uint32_t>(i * 3);
  const ManagedRange range{buffer.handle(), buffer.size()};
  cubind::prefetch(range, cubind::device_memory_location(dev().ordinal()), *stream);
  cubind::prefetch(range, cubind::host_memory_location(), *stream);
  stream->sync();
  for (std::size_t i = 0; i < n; i += 97) ASSERT_EQ(words[i], i * 3);
  buffer.close(*stream);
}

TEST_F(ManagedVmmGpuTest, CurrentManagedPoolAllocates) {
  CUmemLocation none{};
  none.type = CU_MEM_LOCATION_TYPE_NONE;
  auto resource = ManagedMemoryResource::current_pool(dev(), none);
  EXPECT_FALSE(resource->owns_pool());
  Buffer buffer = Buffer::allocate(resource, 4096, *stream);
  buffer.fill(std::uint8_t{7}, *stream);
  stream->sync();
  EXPECT_EQ(static_cast<unsigned char*>(buffer.data())[4095], 7);
}

TEST_F(ManagedVmmGpuTest, AdviceIsReadBack) {
  const cubind::ContextGuard guard(dev());  // range queries and advice act in the current context
  auto resource = std::make_shared<ManagedMemoryResource>(dev());
  Buffer buffer = Buffer::allocate(resource, 1 << 21, *stream);
  const ManagedRange range{buffer.handle(), buffer.size()};
  const CUmemLocation here = cubind::device_memory_location(dev().ordinal());
  EXPECT_EQ(cubind::range_attribute(range, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 0);
  cubind::advise(range, CU_MEM_ADVISE_SET_READ_MOSTLY, here);
  EXPECT_EQ(cubind::range_attribute(range, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY), 1);
  cubind::advise(range, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, here);
  EXPECT_EQ(cubind::range_attribute(range, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE), CU_MEM_LOCATION_TYPE_DEVICE);
  EXPECT_EQ(cubind::range_attribute(range, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID), dev().ordinal());
  cubind::advise(range, CU_MEM_ADVISE_SET_ACCESSED_BY, here);
  EXPECT_EQ(cubind::range_accessed_by(range, 8), (std::vector<int>{dev().ordinal()}));
  cubind::advise(range, CU_MEM_ADVISE_UNSET_ACCESSED_BY, here);
  EXPECT_TRUE(cubind::range_accessed_by(range, 8).empty());
}

TEST_F(ManagedVmmGpuTest, BatchedPrefetchDiscardAndCopy) {
  if (!concurrent_managed_access()) GTEST_SKIP() << "the device has no concurrent managed access";
  // cuMemcpyBatchAsync works in the current context, as cubind.core's callers have it.
  const cubind::ContextGuard guard(dev());
  auto resource = std::make_shared<ManagedMemoryResource>(dev());
  const std::size_t n = 4096;
  Buffer a = Buffer::allocate(resource, n * 4, *stream), b = Buffer::allocate(resource, n * 4, *stream);
  Buffer c = Buffer::allocate(resource, n * 4, *stream), d = Buffer::allocate(resource, n * 4, *stream);
  std::memcpy(a.data(), pattern(n, 1).data(), n * 4);
  std::memcpy(b.data(), pattern(n, 100000).data(), n * 4);
  std::vector<ManagedRange> ranges{{a.handle(), a.size()}, {b.handle(), b.size()}};
  cubind::prefetch_batch(ranges, {cubind::device_memory_location(dev().ordinal())}, *stream);
  cubind::copy_batch({{c.handle(), a.handle(), n * 4}, {d.handle(), b.handle(), n * 4}},
                     {cubind::default_copy_attributes()}, *stream);
  stream->sync();
  EXPECT_EQ(std::memcmp(c.data(), pattern(n, 1).data(), n * 4), 0);
  EXPECT_EQ(std::memcmp(d.data(), pattern(n, 100000).data(), n * 4), 0);
  cubind::discard_batch(ranges, *stream);
  cubind::discard_prefetch_batch(ranges, {cubind::device_memory_location(dev().ordinal()), cubind::host_memory_location()},
                                 *stream);
  stream->sync();
}

TEST_F(ManagedVmmGpuTest, VirtualMemoryGrowsKeepingItsContents) {
  if (!dev().attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) GTEST_SKIP() << "no VMM support";
  const cubind::ContextGuard guard(dev());  // for the raw copies below
  VirtualMemoryResourceOptions options;
  options.handle_type = CU_MEM_HANDLE_TYPE_NONE;
  auto resource = std::make_shared<VirtualMemoryResource>(dev(), options);
  const std::size_t gran = resource->aligned_size(1);
  ASSERT_GT(gran, 0u);
  void* ptr = resource->allocate(100, *stream);
  EXPECT_EQ(resource->mapped_size(ptr), gran);
  const std::size_t n = gran / 4;
  const auto first = pattern(n, 5);
  check(raw::cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(ptr), first.data(), gran), "cuMemcpyHtoD");
  void* grown = resource->grow(ptr, 3 * gran);
  EXPECT_EQ(resource->mapped_size(grown), 3 * gran);
  const auto second = pattern(2 * n, 900000);
  check(raw::cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(grown) + gran, second.data(), 2 * gran), "cuMemcpyHtoD");
  std::vector<std::uint32_t> back(3 * n);
  check(raw::cuMemcpyDtoH(back.data(), reinterpret_cast<CUdeviceptr>(grown), 3 * gran), "cuMemcpyDtoH");
  EXPECT_TRUE(std::equal(first.begin(), first.end(), back.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), back.begin() + n));
  // Within what is mapped: the same address.
  EXPECT_EQ(resource->grow(grown, 2 * gran), grown);
  resource->deallocate(grown, 3 * gran, *stream);
  EXPECT_THROW(resource->mapped_size(grown), std::invalid_argument);
}

}  // namespace

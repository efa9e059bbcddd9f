// Buffers and memory resources on a real GPU: copies round-trip through every
// kind of memory, fills of each width, stream-ordered frees seen in the pool's
// counters, pool settings, and the default streams used with no current context.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::Device;
using cubind::DeviceMemoryResource;
using cubind::DeviceMemoryResourceOptions;
using cubind::ManagedMemoryResource;
using cubind::LegacyPinnedMemoryResource;
using cubind::Stream;
using cubind::StreamRef;
using cubind::detail::check;
using cubind_test::HostGate;
using cubind_test::message_of;

class BufferGpuTest : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    stream.emplace(*device);
    pool = std::make_shared<DeviceMemoryResource>(*device);
  }
  const Stream& s() const { return *stream; }

  std::optional<Stream> stream;
  std::shared_ptr<DeviceMemoryResource> pool;
};

std::vector<std::uint32_t> pattern(std::size_t words) {
  std::vector<std::uint32_t> values(words);
  std::iota(values.begin(), values.end(), 0x1000u);
  return values;
}

TEST_F(BufferGpuTest, CopiesRoundTripHostDeviceDeviceHost) {
  const std::vector<std::uint32_t> in = pattern(1 << 16);
  const std::size_t bytes = in.size() * sizeof(std::uint32_t);
  std::vector<std::uint32_t> out(in.size(), 0);
  Buffer a = Buffer::allocate(pool, bytes, s());
  Buffer b = Buffer::allocate(pool, bytes, s());
  EXPECT_EQ(a.device_id(), 0);
  EXPECT_TRUE(a.is_device_accessible());
  EXPECT_FALSE(a.is_host_accessible());
  a.copy_from(in.data(), bytes, s());
  b.copy_from(a, s());
  b.copy_to(out.data(), bytes, s());
  s().sync();
  EXPECT_EQ(out, in);
}

TEST_F(BufferGpuTest, PinnedAndManagedMemoryAreReadFromTheHost) {
  const std::vector<std::uint32_t> in = pattern(4096);
  const std::size_t bytes = in.size() * sizeof(std::uint32_t);
  Buffer pinned = Buffer::allocate(std::make_shared<LegacyPinnedMemoryResource>(dev()), bytes, s());
  Buffer managed = Buffer::allocate(std::make_shared<ManagedMemoryResource>(dev()), bytes, s());
  Buffer on_device = Buffer::allocate(pool, bytes, s());
  EXPECT_EQ(pinned.device_id(), -1);
  EXPECT_TRUE(pinned.is_host_accessible());
  EXPECT_EQ(managed.device_id(), 0);
  EXPECT_TRUE(managed.is_host_accessible());
  std::memcpy(pinned.data(), in.data(), bytes);
  on_device.copy_from(pinned, s());
  managed.copy_from(on_device, s());
  s().sync();
  EXPECT_EQ(std::memcmp(managed.data(), in.data(), bytes), 0);
}

TEST_F(BufferGpuTest, FillsBytesAndWords) {
  constexpr std::size_t kBytes = 4096;
  Buffer buffer = Buffer::allocate(pool, kBytes, s());
  std::vector<unsigned char> out(kBytes);

  buffer.fill(std::uint8_t{0xab}, s());
  buffer.copy_to(out.data(), kBytes, s());
  s().sync();
  EXPECT_EQ(std::count(out.begin(), out.end(), 0xab), static_cast<long>(kBytes));

  buffer.fill(std::uint16_t{0x1234}, s());
  std::vector<std::uint16_t> halves(kBytes / 2);
  buffer.copy_to(halves.data(), kBytes, s());
  s().sync();
  EXPECT_EQ(std::count(halves.begin(), halves.end(), 0x1234), static_cast<long>(halves.size()));

  buffer.fill(std::uint32_t{0xdeadbeef}, s());
  std::vector<std::uint32_t> words(kBytes / 4);
  buffer.copy_to(words.data(), kBytes, s());
  s().sync();
  EXPECT_EQ(std::count(words.begin(), words.end(), 0xdeadbeefu), static_cast<long>(words.size()));
}

TEST_F(BufferGpuTest, ZeroSizesAndCopiesPastTheEndAreOutOfRange) {
  std::string message = message_of<std::out_of_range>([&] { Buffer::allocate(pool, 0, s()); });
  EXPECT_NE(message.find("size is 0 bytes"), std::string::npos) << message;
  message = message_of<std::out_of_range>([&] { pool->allocate(0, s()); });
  EXPECT_NE(message.find("cubind::DeviceMemoryResource::allocate: size is 0 bytes"), std::string::npos) << message;
  Buffer small = Buffer::allocate(pool, 100, s());
  Buffer large = Buffer::allocate(pool, 200, s());
  message = message_of<std::out_of_range>([&] { small.copy_from(large, s()); });
  EXPECT_NE(message.find("200 bytes, more than this buffer's 100 bytes"), std::string::npos) << message;
  large.copy_from(small, s());  // the other way round fits
  s().sync();
}

TEST_F(BufferGpuTest, FreesInStreamOrderOnItsAllocationStream) {
  DeviceMemoryResourceOptions options;
  options.release_threshold = UINT64_MAX;  // keep freed memory, so the counters show the free itself
  auto own = std::make_shared<DeviceMemoryResource>(dev(), options);
  EXPECT_TRUE(own->owns_pool());
  HostGate gate(dev());
  constexpr std::size_t kBytes = 1 << 20;
  {
    Buffer buffer = Buffer::allocate(own, kBytes, s());
    s().sync();
    EXPECT_GE(own->used_memory(), kBytes);
    gate.block(s());
  }
  // Reaching this line at all shows the free did not wait for the held stream.
  gate.open();
  s().sync();
  EXPECT_EQ(own->used_memory(), 0u);
  EXPECT_GE(own->reserved_memory(), kBytes);
  own->trim_to(0);
  EXPECT_EQ(own->reserved_memory(), 0u);
}

// The driver's entry points a binding calls itself for a pool's allocations
// on its own stream: the memory they allocate and free shows in the pool's
// counters as the resource's own does, and a capturing stream says so.
TEST_F(BufferGpuTest, PoolEntryPointsAllocateAndFreeFromThePool) {
  const cubind::PoolEntryPoints driver = cubind::pool_entry_points();
  ASSERT_NE(driver.stream_is_capturing, nullptr);
  ASSERT_NE(driver.alloc_from_pool_async, nullptr);
  ASSERT_NE(driver.free_async, nullptr);
  DeviceMemoryResourceOptions options;
  options.release_threshold = UINT64_MAX;
  auto own = std::make_shared<DeviceMemoryResource>(dev(), options);
  constexpr std::size_t kBytes = 1 << 20;
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  check(driver.stream_is_capturing(s().handle(), &capturing), "cuStreamIsCapturing");
  EXPECT_EQ(capturing, CU_STREAM_CAPTURE_STATUS_NONE);
  CUdeviceptr ptr = 0;
  check(driver.alloc_from_pool_async(&ptr, kBytes, own->handle(), s().handle()), "cuMemAllocFromPoolAsync");
  ASSERT_NE(ptr, 0u);
  s().sync();
  EXPECT_GE(own->used_memory(), kBytes);
  check(driver.free_async(ptr, s().handle()), "cuMemFreeAsync");
  s().sync();
  EXPECT_EQ(own->used_memory(), 0u);
}

TEST_F(BufferGpuTest, PoolSettingsReadBack) {
  DeviceMemoryResourceOptions options;
  options.release_threshold = 64u << 20;
  DeviceMemoryResource own(dev(), options);
  EXPECT_EQ(own.release_threshold(), 64u << 20);
  own.set_release_threshold(0);
  EXPECT_EQ(own.release_threshold(), 0u);
  EXPECT_TRUE(own.is_accessible_from(dev()));
  EXPECT_THROW(own.grant_peer_access(dev()), std::invalid_argument);
  EXPECT_FALSE(own.is_ipc_enabled());
  EXPECT_THROW(own.export_ipc_handle(), std::logic_error);

  const DeviceMemoryResource default_pool(dev());
  EXPECT_FALSE(default_pool.owns_pool());
  CUmemoryPool handle = nullptr;
  check(raw::cuDeviceGetDefaultMemPool(&handle, dev().handle()), "cuDeviceGetDefaultMemPool");
  EXPECT_EQ(default_pool.handle(), handle);
}

TEST_F(BufferGpuTest, OutlivesTheLastOtherReferenceToItsResource) {
  std::weak_ptr<DeviceMemoryResource> weak;
  Buffer buffer = [&] {
    auto own = std::make_shared<DeviceMemoryResource>(dev(), DeviceMemoryResourceOptions{});
    weak = own;
    return Buffer::allocate(own, 256, s());
  }();
  EXPECT_FALSE(weak.expired());
  buffer.fill(std::uint8_t{7}, s());
  buffer.close();
  s().sync();
  EXPECT_TRUE(weak.expired());
}

TEST_F(BufferGpuTest, AllocatesOnAStreamWhicheverContextIsCurrent) {
  CUcontext other = nullptr;
  check(raw::cuCtxCreate(&other, nullptr, 0, dev().handle()), "cuCtxCreate");
  CUcontext popped = nullptr;
  check(raw::cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  cubind_test::on_fresh_thread([&] {
    std::vector<unsigned char> out(512);
    {
      Buffer none_current = Buffer::allocate(pool, 512, s());
      none_current.fill(std::uint8_t{3}, s());
      none_current.copy_to(out.data(), out.size(), s());
    }
    {
      cubind::ContextGuard guard(cubind::Context::from_native_handle(other));
      Buffer other_current = Buffer::allocate(pool, 512, s());
      other_current.fill(std::uint8_t{4}, s());
      other_current.copy_to(out.data(), out.size(), s());
      s().sync();
      EXPECT_EQ(cubind::Context::current()->handle(), other);
    }
    EXPECT_EQ(std::count(out.begin(), out.end(), 4), 512);
    EXPECT_FALSE(cubind::Context::current().has_value());
  });
  check(raw::cuCtxDestroy(other), "cuCtxDestroy");
}

TEST_F(BufferGpuTest, DefaultStreamsMeanTheBuffersDeviceWithoutACurrentContext) {
  cubind_test::on_fresh_thread([&] {
    const std::vector<std::uint32_t> in = pattern(256);
    const std::size_t bytes = in.size() * sizeof(std::uint32_t);
    std::vector<std::uint32_t> out(in.size());
    for (StreamRef stream : {StreamRef::legacy_default(), StreamRef::per_thread_default()}) {
      Buffer buffer = Buffer::allocate(pool, bytes, stream);
      buffer.copy_from(in.data(), bytes, stream);
      buffer.copy_to(out.data(), bytes, stream);
      buffer.close();
      dev().sync();
      EXPECT_EQ(out, in);
    }
    EXPECT_FALSE(cubind::Context::current().has_value());
  });
}

}  // namespace

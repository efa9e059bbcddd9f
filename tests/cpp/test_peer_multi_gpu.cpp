// Two GPUs: peer access between primary contexts and on memory pools, and
// copies between the devices through Buffer (cuMemcpyPeerAsync).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/buffer.hpp"
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
using cubind::Stream;
using cubind::detail::check;
using cubind_test::message_of;

class PeerTest : public cubind_test::MultiGpuTest {
 protected:
  void SetUp() override {
    MultiGpuTest::SetUp();
    if (IsSkipped()) return;
    first.emplace(Device::get(0));
    second.emplace(Device::get(1));
  }

  std::optional<Device> first;
  std::optional<Device> second;
};

TEST_F(PeerTest, CanAccessPeerMatchesTheDriver) {
  int can = 0;
  check(raw::cuDeviceCanAccessPeer(&can, first->handle(), second->handle()), "cuDeviceCanAccessPeer");
  EXPECT_EQ(first->can_access_peer(*second), can != 0);
  EXPECT_TRUE(first->can_access_peer(*first));
}

TEST_F(PeerTest, EnableAndDisableAreIdempotent) {
  if (!first->can_access_peer(*second)) GTEST_SKIP() << "device 0 cannot access device 1";
  first->enable_peer_access(*second);
  first->enable_peer_access(*second);
  first->disable_peer_access(*second);
  first->disable_peer_access(*second);
  first->enable_peer_access(*second);
  const std::string message = message_of<std::invalid_argument>([&] { first->enable_peer_access(*first); });
  EXPECT_NE(message.find("is this device"), std::string::npos) << message;
}

TEST_F(PeerTest, BuffersCopyBetweenDevicesOnEitherDevicesStream) {
  constexpr std::size_t kWords = 1 << 20;
  constexpr std::size_t kBytes = kWords * sizeof(std::uint32_t);
  std::vector<std::uint32_t> in(kWords);
  std::iota(in.begin(), in.end(), 7u);
  Stream s0(*first);
  Stream s1(*second);
  auto pool0 = std::make_shared<DeviceMemoryResource>(*first, cubind::DeviceMemoryResourceOptions{});
  auto pool1 = std::make_shared<DeviceMemoryResource>(*second, cubind::DeviceMemoryResourceOptions{});
  // Pool allocations follow the pool's access list; open it where the hardware allows.
  if (first->can_access_peer(*second) && second->can_access_peer(*first)) {
    pool0->grant_peer_access(*second);
    pool1->grant_peer_access(*first);
  }
  Buffer on_first = Buffer::allocate(pool0, kBytes, s0);
  Buffer on_second = Buffer::allocate(pool1, kBytes, s1);
  on_first.copy_from(in.data(), kBytes, s0);
  s0.sync();

  for (const Stream* stream : {&s1, &s0}) {
    on_second.fill(std::uint32_t{0}, s1);
    s1.sync();
    on_second.copy_from(on_first, *stream);
    stream->sync();
    std::vector<std::uint32_t> out(kWords);
    on_second.copy_to(out.data(), kBytes, s1);
    s1.sync();
    EXPECT_EQ(out, in);
  }
}

TEST_F(PeerTest, ACopysStreamMustBelongToOneOfItsBuffers) {
  Stream s0(*first);
  Stream s1(*second);
  Buffer on_first = Buffer::allocate(std::make_shared<DeviceMemoryResource>(*first), 64, s0);
  Buffer on_second = Buffer::allocate(std::make_shared<DeviceMemoryResource>(*second), 64, s1);
  // A stream of a third context: on device 0, but not its primary context.
  CUcontext other = nullptr;
  check(raw::cuCtxCreate(&other, nullptr, 0, first->handle()), "cuCtxCreate");
  CUstream foreign = nullptr;
  check(raw::cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUcontext popped = nullptr;
  check(raw::cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  const std::string message =
      message_of<std::invalid_argument>([&] { on_second.copy_from(on_first, cubind::StreamRef(foreign)); });
  EXPECT_NE(message.find("the primary context of device 1"), std::string::npos) << message;
  EXPECT_NE(message.find("the primary context of device 0"), std::string::npos) << message;
  EXPECT_NE(message.find("non-primary context of device 0"), std::string::npos) << message;
  check(raw::cuStreamDestroy(foreign), "cuStreamDestroy");
  check(raw::cuCtxDestroy(other), "cuCtxDestroy");
}

TEST_F(PeerTest, PoolAccessIsGrantedAndRevoked) {
  if (!second->can_access_peer(*first)) GTEST_SKIP() << "device 1 cannot access device 0";
  auto pool = std::make_shared<DeviceMemoryResource>(*first, cubind::DeviceMemoryResourceOptions{});
  EXPECT_FALSE(pool->is_accessible_from(*second));
  pool->grant_peer_access(*second);
  EXPECT_TRUE(pool->is_accessible_from(*second));

  // Device 1 reads the pool's memory directly, through a plain copy on its own stream.
  Stream s0(*first);
  Stream s1(*second);
  Buffer source = Buffer::allocate(pool, 4096, s0);
  source.fill(std::uint32_t{0xfeedf00d}, s0);
  s0.sync();
  Buffer target = Buffer::allocate(std::make_shared<DeviceMemoryResource>(*second), 4096, s1);
  {
    cubind::ContextGuard guard(*second);
    check(raw::cuMemcpyAsync(target.handle(), source.handle(), 4096, s1.handle()), "cuMemcpyAsync");
  }
  std::vector<std::uint32_t> out(1024);
  target.copy_to(out.data(), 4096, s1);
  s1.sync();
  EXPECT_EQ(std::count(out.begin(), out.end(), 0xfeedf00du), 1024);

  pool->revoke_peer_access(*second);
  EXPECT_FALSE(pool->is_accessible_from(*second));
}

}  // namespace

// PinnedMemoryResource: stream-ordered page-locked host memory from a host
// memory pool, readable from the host and from the device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Buffer;
using cubind::DeviceMemoryResource;
using cubind::PinnedMemoryResource;
using cubind::PinnedMemoryResourceOptions;
using cubind::Stream;
using cubind_test::message_of;

class PinnedPoolGpuTest : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    if (dev().attribute(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) == 0) {
      GTEST_SKIP() << "the device does not support host memory pools";
    }
  }
};

void round_trip_through_the_device(const std::shared_ptr<PinnedMemoryResource>& pinned, const cubind::Device& device) {
  Stream stream(device);
  constexpr std::size_t kWords = 4096;
  constexpr std::size_t kBytes = kWords * sizeof(std::uint32_t);
  Buffer host = Buffer::allocate(pinned, kBytes, stream);
  Buffer on_device = Buffer::allocate(std::make_shared<DeviceMemoryResource>(device), kBytes, stream);
  EXPECT_EQ(host.device_id(), -1);
  EXPECT_TRUE(host.is_host_accessible());
  EXPECT_TRUE(host.is_device_accessible());
  // The device writes the pinned memory (a memset runs on the device), then
  // copies it out and back; the host reads the result.
  host.fill(std::uint32_t{0x11223344}, stream);
  on_device.copy_from(host, stream);
  on_device.fill(std::uint8_t{0x5a}, stream);
  host.copy_from(on_device, stream);
  stream.sync();
  std::vector<unsigned char> seen(kBytes);
  std::memcpy(seen.data(), host.data(), kBytes);
  EXPECT_EQ(std::vector<unsigned char>(kBytes, 0x5a), seen);
  host.close();
  on_device.close();
  stream.sync();
}

TEST_F(PinnedPoolGpuTest, TheCurrentPoolIsTheDriversAndServesHostAndDevice) {
  auto pinned = std::make_shared<PinnedMemoryResource>(dev());
  EXPECT_FALSE(pinned->owns_pool());
  EXPECT_FALSE(pinned->is_ipc_enabled());
  EXPECT_EQ(pinned->numa_id(), -1);
  EXPECT_NE(pinned->handle(), nullptr);
  round_trip_through_the_device(pinned, dev());
}

TEST_F(PinnedPoolGpuTest, AnOwnedPoolCountsItsMemory) {
  auto pinned = std::make_shared<PinnedMemoryResource>(dev(), PinnedMemoryResourceOptions{});
  EXPECT_TRUE(pinned->owns_pool());
  Stream stream(dev());
  Buffer buffer = Buffer::allocate(pinned, 1 << 20, stream);
  stream.sync();
  EXPECT_GE(pinned->used_memory(), 1u << 20);
  EXPECT_GE(pinned->reserved_memory(), pinned->used_memory());
  buffer.close();
  stream.sync();
  EXPECT_EQ(pinned->used_memory(), 0u);
  round_trip_through_the_device(pinned, dev());
}

TEST_F(PinnedPoolGpuTest, WithoutIpcThereIsNoHandleToExport) {
  auto pinned = std::make_shared<PinnedMemoryResource>(dev(), PinnedMemoryResourceOptions{});
  const std::string message = message_of<std::logic_error>([&] { pinned->export_ipc_handle(); });
  EXPECT_NE(message.find("cubind::PinnedMemoryResource::export_ipc_handle"), std::string::npos) << message;
}

TEST_F(PinnedPoolGpuTest, AnIpcPoolSitsOnTheDevicesNumaNodeAndExportsADescriptor) {
  const int node = dev().attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
  if (node < 0 || dev().attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) == 0) {
    GTEST_SKIP() << "the device has no host NUMA node or no NUMA host pools";
  }
  PinnedMemoryResourceOptions options;
  options.ipc_enabled = true;
  auto pinned = std::make_shared<PinnedMemoryResource>(dev(), options);
  EXPECT_TRUE(pinned->is_ipc_enabled());
  EXPECT_EQ(pinned->numa_id(), node);
  const cubind::IpcPoolHandle handle = pinned->export_ipc_handle();
  EXPECT_GE(handle.fd(), 0);
  Stream stream(dev());
  Buffer buffer = Buffer::allocate(pinned, 4096, stream);
  stream.sync();
  const cubind::IpcBufferDescriptor descriptor = buffer.export_ipc();
  EXPECT_EQ(descriptor.size, 4096u);
  // Only an imported pool maps exported buffers.
  EXPECT_THROW(Buffer::from_ipc(pinned, descriptor, stream), std::logic_error);
  round_trip_through_the_device(pinned, dev());
}

}  // namespace

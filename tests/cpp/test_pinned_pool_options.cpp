// Where a pinned host pool is placed, from its options: no GPU needed, the
// device's NUMA node is passed in as the driver would report it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cubind/memory_resource.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::PinnedMemoryResourceOptions;
using cubind::pinned_pool_location;
using cubind_test::message_of;

TEST(PinnedPoolLocation, WithoutOptionsTheSystemPlacesTheMemory) {
  const CUmemLocation location = pinned_pool_location(PinnedMemoryResourceOptions{}, 0, 3);
  EXPECT_EQ(location.type, CU_MEM_LOCATION_TYPE_HOST);
}

TEST(PinnedPoolLocation, AnExplicitNodeIsUsedWithOrWithoutIpc) {
  PinnedMemoryResourceOptions options;
  options.numa_id = 1;
  CUmemLocation location = pinned_pool_location(options, 0, 5);
  EXPECT_EQ(location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  EXPECT_EQ(location.id, 1);
  options.ipc_enabled = true;
  location = pinned_pool_location(options, 0, -1);
  EXPECT_EQ(location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  EXPECT_EQ(location.id, 1) << "an explicit node needs no node from the device";
}

TEST(PinnedPoolLocation, IpcWithoutANodeTakesTheDevicesNode) {
  PinnedMemoryResourceOptions options;
  options.ipc_enabled = true;
  const CUmemLocation location = pinned_pool_location(options, 0, 2);
  EXPECT_EQ(location.type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
  EXPECT_EQ(location.id, 2);
}

TEST(PinnedPoolLocation, IpcOnADeviceWithoutANodeSaysWhatToDo) {
  PinnedMemoryResourceOptions options;
  options.ipc_enabled = true;
  const std::string message = message_of<std::runtime_error>([&] { pinned_pool_location(options, 1, -1); });
  EXPECT_NE(message.find("device 1 reports none"), std::string::npos) << message;
  EXPECT_NE(message.find("set numa_id explicitly"), std::string::npos) << message;
}

TEST(PinnedPoolLocation, ANegativeNodeIsRefused) {
  PinnedMemoryResourceOptions options;
  options.numa_id = -2;
  const std::string message = message_of<std::invalid_argument>([&] { pinned_pool_location(options, 0, 0); });
  EXPECT_NE(message.find("numa_id is -2"), std::string::npos) << message;
}

}  // namespace

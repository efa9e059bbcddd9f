// Devices and contexts on a real GPU: every query against an independent raw
// driver call, the primary context retained once per device, and the current
// context changed only where the caller asked for it.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/event.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Context;
using cubind::ContextGuard;
using cubind::Device;
using cubind::detail::check;
using cubind_test::GpuTest;
using cubind_test::message_of;
using cubind_test::on_fresh_thread;

using DeviceGpuTest = GpuTest;
using ContextGpuTest = GpuTest;

TEST_F(DeviceGpuTest, CountMatchesTheDriver) {
  int count = 0;
  check(raw::cuDeviceGetCount(&count), "cuDeviceGetCount");
  EXPECT_EQ(Device::count(), count);
}

TEST_F(DeviceGpuTest, QueriesMatchIndependentDriverCalls) {
  for (int ordinal = 0; ordinal < Device::count(); ++ordinal) {
    const Device device = Device::get(ordinal);
    CUdevice handle = 0;
    check(raw::cuDeviceGet(&handle, ordinal), "cuDeviceGet");
    EXPECT_EQ(device.handle(), handle);
    EXPECT_EQ(device.ordinal(), ordinal);

    char name[256] = {};
    check(raw::cuDeviceGetName(name, sizeof name, handle), "cuDeviceGetName");
    EXPECT_EQ(device.name(), name);

    std::size_t bytes = 0;
    check(raw::cuDeviceTotalMem(&bytes, handle), "cuDeviceTotalMem");
    EXPECT_EQ(device.total_memory(), bytes);

    int major = 0;
    int minor = 0;
    check(raw::cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle), "cuDeviceGetAttribute");
    check(raw::cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle), "cuDeviceGetAttribute");
    EXPECT_EQ(device.compute_capability(), (cubind::ComputeCapability{major, minor}));
    EXPECT_EQ(device.arch(), "sm_" + std::to_string(major) + std::to_string(minor));

    int sms = 0;
    check(raw::cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle), "cuDeviceGetAttribute");
    EXPECT_EQ(device.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), sms);
    EXPECT_GT(sms, 0);

    char bus[64] = {};
    check(raw::cuDeviceGetPCIBusId(bus, sizeof bus, handle), "cuDeviceGetPCIBusId");
    EXPECT_EQ(device.pci_bus_id(), bus);

    CUuuid uuid{};
    check(raw::cuDeviceGetUuid(&uuid, handle), "cuDeviceGetUuid");
    char expected[40];
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    std::snprintf(expected, sizeof expected, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    EXPECT_EQ(device.uuid(), expected);
  }
}

TEST_F(DeviceGpuTest, OrdinalPastTheCountNamesBoth) {
  const int count = Device::count();
  const std::string message = message_of<std::out_of_range>([&] { Device::get(count); });
  EXPECT_NE(message.find("device ordinal " + std::to_string(count) + " is out of range"), std::string::npos) << message;
  EXPECT_NE(message.find("sees " + std::to_string(count) + " device"), std::string::npos) << message;
}

TEST_F(DeviceGpuTest, PrimaryContextIsRetainedOncePerDevice) {
  const Device device = Device::get(0);
  const Context first = device.primary_context();
  EXPECT_EQ(Context::primary(device), first);

  // The same context from many threads at once: one retain, one answer.
  std::vector<std::thread> threads;
  std::vector<CUcontext> seen(8);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = device.primary_context().handle(); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::set<CUcontext>(seen.begin(), seen.end()), std::set<CUcontext>{first.handle()});

  // The driver agrees it is the primary context, and it stays active after
  // an extra retain is given back: cubind holds its own.
  CUcontext retained = nullptr;
  check(raw::cuDevicePrimaryCtxRetain(&retained, device.handle()), "cuDevicePrimaryCtxRetain");
  EXPECT_EQ(retained, first.handle());
  check(raw::cuDevicePrimaryCtxRelease(device.handle()), "cuDevicePrimaryCtxRelease");
  unsigned int flags = 0;
  int active = 0;
  check(raw::cuDevicePrimaryCtxGetState(device.handle(), &flags, &active), "cuDevicePrimaryCtxGetState");
  EXPECT_EQ(active, 1);
  EXPECT_EQ(first.device(), device);
}

TEST_F(DeviceGpuTest, SetCurrentMakesThePrimaryContextCurrent) {
  on_fresh_thread([] {
    const Device device = Device::get(0);
    EXPECT_FALSE(Context::current().has_value());
    EXPECT_THROW(Device::current(), std::logic_error);
    device.set_current();
    ASSERT_TRUE(Context::current().has_value());
    EXPECT_EQ(*Context::current(), device.primary_context());
    EXPECT_EQ(Device::current(), device);
    device.sync();
  });
}

TEST_F(ContextGpuTest, GuardRestoresWhatWasCurrent) {
  on_fresh_thread([] {
    const Device device = Device::get(0);
    EXPECT_FALSE(Context::current().has_value());
    {
      ContextGuard guard(device);
      EXPECT_EQ(Context::current(), device.primary_context());
      {
        ContextGuard nested(device.primary_context());
        EXPECT_EQ(Context::current(), device.primary_context());
      }
      EXPECT_EQ(Context::current(), device.primary_context());
    }
    EXPECT_FALSE(Context::current().has_value());
  });
}

TEST_F(ContextGpuTest, GuardSwitchesToAnotherContextAndBack) {
  const Device device = Device::get(0);
  CUcontext other = nullptr;
  check(raw::cuCtxCreate(&other, nullptr, 0, device.handle()), "cuCtxCreate");
  CUcontext popped = nullptr;
  check(raw::cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  on_fresh_thread([&] {
    ContextGuard primary(device);
    {
      ContextGuard guard(Context::from_native_handle(other));
      EXPECT_EQ(Context::current()->handle(), other);
      EXPECT_EQ(Context::from_native_handle(other).device(), device);
    }
    EXPECT_EQ(Context::current(), device.primary_context());
  });
  check(raw::cuCtxDestroy(other), "cuCtxDestroy");
}

TEST_F(ContextGpuTest, CreatingObjectsChangesNoCurrentContext) {
  on_fresh_thread([] {
    const Device device = Device::get(0);
    cubind::Stream stream(device);
    cubind::Event event(device);
    cubind::TimedEvent timed(device);
    auto pool = std::make_shared<cubind::DeviceMemoryResource>(device);
    cubind::Buffer buffer = cubind::Buffer::allocate(pool, 256, stream);
    buffer.fill(std::uint8_t{1}, stream);
    event.record(stream);
    stream.sync();
    device.sync();
    EXPECT_FALSE(Context::current().has_value());
  });
}

}  // namespace

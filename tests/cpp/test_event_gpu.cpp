// Events on a real GPU: recording, querying and waiting, and timing measured
// across a gate the test holds closed for a known time.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/event.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Device;
using cubind::Event;
using cubind::EventOptions;
using cubind::Stream;
using cubind::TimedEvent;
using cubind_test::HostGate;

using namespace std::chrono_literals;

using EventGpuTest = cubind_test::DeviceTest;

TEST_F(EventGpuTest, RecordQueryAndSyncFollowTheWork) {
  Stream stream(dev());
  for (const EventOptions options : {EventOptions{}, EventOptions{true, false}}) {
    HostGate gate(dev());
    Event event(dev(), options);
    gate.block(stream);
    event.record(stream);
    EXPECT_FALSE(event.query());
    gate.open();
    event.sync();
    EXPECT_TRUE(event.query());
  }
}

TEST_F(EventGpuTest, TimedEventsMeasureTheTimeTheDeviceWasHeld) {
  Stream stream(dev());
  HostGate gate(dev());
  TimedEvent start(dev());
  TimedEvent end(dev());
  start.record(stream);
  gate.block(stream);
  end.record(stream);
  // Before both have completed there is nothing to measure.
  try {
    (void)(end - start);
    ADD_FAILURE() << "elapsed time of an unfinished event";
  } catch (const cubind::CudaError& e) {
    EXPECT_EQ(e.status(), CUDA_ERROR_NOT_READY) << e.what();
  }
  std::this_thread::sleep_for(50ms);
  gate.open();
  end.sync();
  const TimedEvent::Duration elapsed = end - start;
  EXPECT_GE(elapsed, 40ms);
  EXPECT_LT(elapsed, 10s);
}

TEST_F(EventGpuTest, OnlyInterprocessEventsExportAHandle) {
  const Event plain(dev());
  EXPECT_THROW(plain.ipc_handle(), cubind::CudaError);
  const Event shared(dev(), EventOptions{false, true});
  EXPECT_NO_THROW(shared.ipc_handle());
}

TEST_F(EventGpuTest, MovedEventsKeepWorking) {
  Stream stream(dev());
  Event event(dev());
  Event moved = std::move(event);
  moved.record(stream);
  moved.sync();
  event = std::move(moved);
  EXPECT_TRUE(event.query());
  EXPECT_THROW(moved.query(), std::logic_error);  // NOLINT(bugprone-use-after-move)
}

}  // namespace

// Streams on a real GPU. Ordering is tested with a HostGate: a stream waits on
// a pinned word until the test opens it, so "not yet run" and "run" are both
// certain, with no kernel and no timing guess.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/graph.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::Device;
using cubind::Event;
using cubind::Stream;
using cubind::StreamOptions;
using cubind::StreamRef;
using cubind::detail::check;
using cubind_test::HostGate;
using cubind_test::message_of;

using namespace std::chrono_literals;

using StreamGpuTest = cubind_test::DeviceTest;

TEST_F(StreamGpuTest, CreatesWithFlagsAndPriority) {
  int least = 0;
  int greatest = 0;
  {
    cubind::ContextGuard guard(dev());
    check(raw::cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
  }
  Stream urgent(dev(), StreamOptions{true, greatest});
  EXPECT_EQ(urgent.priority(), greatest);
  EXPECT_TRUE(urgent.is_non_blocking());
  Stream blocking(dev(), StreamOptions{false, std::nullopt});
  EXPECT_FALSE(blocking.is_non_blocking());
  EXPECT_EQ(blocking.device(), dev());
  EXPECT_EQ(blocking.context(), dev().primary_context());

  const std::string message = message_of<std::out_of_range>([&] { Stream(dev(), StreamOptions{true, least + 1}); });
  EXPECT_NE(message.find("priority " + std::to_string(least + 1)), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(greatest) + " (highest) to " + std::to_string(least) + " (lowest)"),
            std::string::npos)
      << message;
}

TEST_F(StreamGpuTest, AdoptsAForeignStream) {
  CUstream handle = nullptr;
  {
    cubind::ContextGuard guard(dev());
    check(raw::cuStreamCreate(&handle, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  {
    Stream adopted = Stream::from_native_handle(handle);
    EXPECT_EQ(adopted.context(), dev().primary_context());
    EXPECT_EQ(adopted.device(), dev());
    adopted.sync();
    EXPECT_EQ(adopted.release(), handle);
  }
  // Still alive after the released Stream went away; now owned again, and destroyed by it.
  check(raw::cuStreamQuery(handle), "cuStreamQuery");
  Stream owner = Stream::from_native_handle(handle);
}

TEST_F(StreamGpuTest, QueryAndSyncFollowTheWork) {
  Stream stream(dev());
  HostGate gate(dev());
  EXPECT_TRUE(stream.query());
  gate.block(stream);
  EXPECT_FALSE(stream.query());
  gate.open();
  stream.sync();
  EXPECT_TRUE(stream.query());
}

TEST_F(StreamGpuTest, WaitOnAnotherStreamOrdersTheWork) {
  Stream first(dev());
  Stream second(dev());
  HostGate gate(dev());
  gate.block(first);
  second.wait(first);
  const Event after = second.record();
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(after.query());
  EXPECT_FALSE(second.query());
  gate.open();
  after.sync();
  EXPECT_TRUE(first.query());
}

TEST_F(StreamGpuTest, WaitOnAnEventOrdersTheWork) {
  Stream first(dev());
  Stream second(dev());
  HostGate gate(dev());
  gate.block(first);
  const Event blocked = first.record();
  second.wait(blocked);
  std::atomic<bool> ran{false};
  second.launch_host_func([&] { ran = true; });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(ran);
  gate.open();
  second.sync();
  EXPECT_TRUE(ran);
}

TEST_F(StreamGpuTest, HostCallbackRunsInOrderAndKeepsItsCallableAlive) {
  Stream stream(dev());
  HostGate gate(dev());
  auto token = std::make_shared<int>(0);
  std::atomic<int> seen{-1};
  gate.block(stream);
  // Move-only, and the last owner of `value`: nothing else keeps it alive.
  auto value = std::make_unique<int>(42);
  stream.launch_host_func([value = std::move(value), token, &seen] { seen = *value; });
  EXPECT_EQ(token.use_count(), 2);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(seen, -1);
  gate.open();
  stream.sync();
  EXPECT_EQ(seen, 42);
  EXPECT_EQ(token.use_count(), 1) << "the callable is destroyed once it has run";
}

TEST_F(StreamGpuTest, HostCallbackExceptionIsRethrownByTheNextSync) {
  Stream stream(dev());
  std::atomic<bool> later_ran{false};
  stream.launch_host_func([] { throw std::runtime_error("boom from a host callback"); });
  stream.launch_host_func([&] { later_ran = true; });
  const std::string message = message_of<std::runtime_error>([&] { stream.sync(); });
  EXPECT_EQ(message, "boom from a host callback");
  EXPECT_TRUE(later_ran) << "the stream goes on after a callback throws";
  EXPECT_NO_THROW(stream.sync());
}

TEST_F(StreamGpuTest, CaptureBuildsAGraphThatRunsAgain) {
  Stream stream(dev());
  constexpr std::size_t kWords = 1024;
  auto pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
  auto pinned = std::make_shared<cubind::LegacyPinnedMemoryResource>(dev());
  Buffer device_words = Buffer::allocate(pool, kWords * 4, stream);
  Buffer host_words = Buffer::allocate(pinned, kWords * 4, stream);
  stream.sync();
  auto token = std::make_shared<int>(0);
  std::atomic<int> runs{0};

  {
    stream.begin_capture();
    EXPECT_TRUE(stream.is_capturing());
    device_words.fill(std::uint32_t{0x01020304}, stream);
    device_words.copy_to(host_words, stream);
    stream.launch_host_func([&runs, token] { ++runs; });
    const cubind::Graph graph = stream.end_capture();
    EXPECT_FALSE(stream.is_capturing());
    EXPECT_EQ(graph.node_count(), 3u);
    EXPECT_EQ(runs, 0) << "captured work does not run";

    const cubind::GraphExec exec = graph.instantiate();
    exec.upload(stream);
    auto* words = static_cast<std::uint32_t*>(host_words.data());
    for (int launch = 1; launch <= 3; ++launch) {
      std::fill(words, words + kWords, 0u);
      exec.launch(stream);
      stream.sync();
      EXPECT_EQ(runs, launch);
      EXPECT_EQ(std::count(words, words + kWords, 0x01020304u), static_cast<long>(kWords));
    }
  }
  // The graph and its instantiation owned the callable; with both gone the
  // driver frees it (on a thread of its own, hence the wait).
  for (int i = 0; i < 500 && token.use_count() > 1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(token.use_count(), 1);
}

TEST_F(StreamGpuTest, AStreamOfAnotherContextOrdersPoolMemoryButNotFillsOrCopies) {
  CUcontext other = nullptr;
  check(raw::cuCtxCreate(&other, nullptr, 0, dev().handle()), "cuCtxCreate");
  CUstream foreign = nullptr;
  check(raw::cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUcontext popped = nullptr;
  check(raw::cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  {
    // CUDA orders a pool's allocations and frees on a stream of any context.
    auto pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
    void* ordered = pool->allocate(64, StreamRef(foreign));
    EXPECT_NE(ordered, nullptr);
    pool->deallocate(ordered, 64, StreamRef(foreign));
    check(raw::cuStreamSynchronize(foreign), "cuStreamSynchronize");

    // A fill or a copy runs in the buffer's context: a stream of another is
    // refused, naming both.
    Stream stream(dev());
    Buffer buffer = Buffer::allocate(pool, 64, stream);
    std::string message = message_of<std::invalid_argument>([&] { buffer.fill(std::uint8_t{0}, StreamRef(foreign)); });
    EXPECT_NE(message.find("cubind::Buffer::fill"), std::string::npos) << message;
    EXPECT_NE(message.find("non-primary context of device 0"), std::string::npos) << message;
    EXPECT_NE(message.find("the primary context of device 0"), std::string::npos) << message;
    std::vector<unsigned char> host(64);
    message = message_of<std::invalid_argument>([&] { buffer.copy_to(host.data(), 64, StreamRef(foreign)); });
    EXPECT_NE(message.find("cubind::Buffer::copy_to"), std::string::npos) << message;
  }
  check(raw::cuStreamDestroy(foreign), "cuStreamDestroy");
  check(raw::cuCtxDestroy(other), "cuCtxDestroy");
}

TEST_F(StreamGpuTest, MovedFromStreamIsRejectedNotRunOnTheLegacyStream) {
  Stream stream(dev());
  Stream taken = std::move(stream);
  auto pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
  const std::string message = message_of<std::logic_error>([&] { pool->allocate(64, stream); });
  EXPECT_NE(message.find("null cubind::Stream"), std::string::npos) << message;
  EXPECT_THROW(taken.wait(stream), std::logic_error);
}

}  // namespace

// Shared by the tests of the core's owners (device, context, stream, event,
// graph, memory): checking exception messages, skipping without a GPU, and a
// host-controlled gate that holds a stream back so that ordering can be tested
// deterministically.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"

namespace cubind_test {

// The message of the E that `f` throws; a test failure when it throws nothing.
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception was thrown";
  return {};
}

// Why this machine cannot run a test needing `needed` GPUs; empty when it can.
inline std::string gpu_skip_reason(int needed) {
  try {
    const int count = cubind::Device::count();
    if (count >= needed) return {};
    return "needs " + std::to_string(needed) + (needed == 1 ? " GPU" : " GPUs") + ", this machine has " +
           std::to_string(count);
  } catch (const cubind::LoaderError& e) {
    return std::string("no CUDA driver: ") + e.what();
  } catch (const cubind::CudaError& e) {
    return std::string("the CUDA driver cannot start: ") + e.what();
  }
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = gpu_skip_reason(1);
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
};

// A GpuTest that holds device 0 for its tests.
class DeviceTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    device.emplace(cubind::Device::get(0));
  }
  const cubind::Device& dev() const { return *device; }

  std::optional<cubind::Device> device;
};

class MultiGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = gpu_skip_reason(2);
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
};

// A word of pinned memory a stream waits on (cuStreamWaitValue32): work queued
// behind block() runs only once open() has been called, with no kernel and no
// timing assumption. The destructor opens it, so a failing test cannot leave a
// stream blocked forever.
class HostGate {
 public:
  explicit HostGate(const cubind::Device& device)
      : word_(cubind::Buffer::allocate(std::make_shared<cubind::LegacyPinnedMemoryResource>(device), sizeof(std::uint32_t),
                                       cubind::StreamRef::legacy_default())) {
    *static_cast<volatile std::uint32_t*>(word_.data()) = 0;
    cubind::ContextGuard guard(device);
    cubind::detail::check(cubind::raw::cuMemHostGetDevicePointer(&device_address_, word_.data(), 0),
                          "cuMemHostGetDevicePointer");
  }
  ~HostGate() { open(); }
  HostGate(const HostGate&) = delete;
  HostGate& operator=(const HostGate&) = delete;

  void block(cubind::StreamRef stream) {
    cubind::detail::check(cubind::raw::cuStreamWaitValue32(stream.handle(), device_address_, 1, CU_STREAM_WAIT_VALUE_GEQ),
                          "cuStreamWaitValue32");
  }

  void open() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *static_cast<volatile std::uint32_t*>(word_.data()) = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

 private:
  cubind::Buffer word_;
  CUdeviceptr device_address_ = 0;
};

// Runs `f` on a new thread, which starts with no current context, and rethrows
// what it threw (gtest assertions inside still report).
template <typename F>
void on_fresh_thread(F&& f) {
  std::exception_ptr error;
  std::thread thread([&] {
    try {
      f();
    } catch (...) {
      error = std::current_exception();
    }
  });
  thread.join();
  if (error) std::rethrow_exception(error);
}

// Process entry of the child side of the IPC test (test_ipc_gpu.cpp), started
// by re-executing the test binary, so that it owns a fresh CUDA driver state.
int ipc_child_main(int socket_fd);

// A host function and its data's release, for graph tests: count_host_call
// adds the int its data points to to host_calls; release_host_data deletes
// that int and counts host_releases.
inline std::atomic<int> host_calls{0};
inline std::atomic<int> host_releases{0};
inline void CUDA_CB count_host_call(void* data) { host_calls += *static_cast<int*>(data); }
inline void CUDA_CB release_host_data(void* data) {
  delete static_cast<int*>(data);
  ++host_releases;
}

}  // namespace cubind_test

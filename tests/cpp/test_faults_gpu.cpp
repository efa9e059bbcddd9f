// Kernel faults through the C++ core: a store to an unmapped address, a trap
// and a failing device assert. A fault loses the context for the rest of the
// process, so each runs in a child forked before this process touches CUDA
// (a forked child cannot use CUDA its parent initialized; this binary's
// parent never does). The child checks that Stream::sync throws the fault's
// CudaError, that later calls throw the same one, and that the objects made
// before the fault are destroyed without a crash, then exits 0; it exits 77
// where there is no GPU, which the parent reports as a skip.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/event.hpp"
#include "cubind/launch.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

constexpr int kSkip = 77;

struct Fault {
  const char* body;      // the kernel's body; the kernel takes int* target = 0x10
  const char* expected;  // the driver's name for the error
};

const Fault kIllegalAddress{"*target = 1;", "CUDA_ERROR_ILLEGAL_ADDRESS"};
const Fault kTrap{"asm volatile(\"trap;\");", "CUDA_ERROR_LAUNCH_FAILED"};
const Fault kAssert{"assert(target == nullptr);", "CUDA_ERROR_ASSERT"};

// A check in the child: the message goes to stderr, which the parent shows.
#define CHILD_CHECK(condition, message)                                   \
  do {                                                                    \
    if (!(condition)) {                                                   \
      std::fprintf(stderr, "child: %s\n", std::string(message).c_str()); \
      return 1;                                                           \
    }                                                                     \
  } while (0)

// Calls f and returns the name of the CudaError it threw, or "" for none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const cubind::CudaError& e) {
    return e.error_name();
  }
  return "";
}

int run_fault(const Fault& fault) {
  const std::string skip_reason = cubind_test::gpu_skip_reason(1);
  if (!skip_reason.empty()) {
    std::fprintf(stderr, "child: %s\n", skip_reason.c_str());
    return kSkip;
  }
  const cubind::Device device = cubind::Device::get(0);
  cubind::Program program(std::string("extern \"C\" __global__ void fault(int* target) { ") + fault.body + " }",
                          "fault.cu");
  cubind::ProgramOptions options;
  options.arch = device.arch();
  cubind::CompileResult compiled = program.compile(cubind::CodeKind::cubin, options);
  CHILD_CHECK(compiled.ok, "NVRTC: " + compiled.log);
  const cubind::Kernel kernel = compiled.code.get_kernel("fault");
  cubind::Stream stream(device);
  auto pool = std::make_shared<cubind::DeviceMemoryResource>(device);
  std::optional<cubind::Buffer> before = cubind::Buffer::allocate(pool, 1 << 20, stream);
  const cubind::Event event = stream.record();
  stream.sync();

  cubind::launch(stream, cubind::LaunchConfig{1, 1}, kernel, reinterpret_cast<int*>(std::uintptr_t{0x10}));
  std::string seen = error_of([&] { stream.sync(); });
  CHILD_CHECK(seen == fault.expected, "Stream::sync threw '" + seen + "', expected " + fault.expected);
  // The error is sticky: the context is lost, and later calls report it.
  seen = error_of([&] { device.primary_context().sync(); });
  CHILD_CHECK(seen == fault.expected, "Context::sync after the fault threw '" + seen + "'");
  seen = error_of([&] { cubind::Buffer::allocate(pool, 256, stream); });
  CHILD_CHECK(seen == fault.expected, "Buffer::allocate after the fault threw '" + seen + "'");
  seen = error_of([&] { event.sync(); });
  CHILD_CHECK(seen == fault.expected, "Event::sync after the fault threw '" + seen + "'");
  // Destroying what was made before the fault: errors are swallowed, nothing crashes.
  before.reset();
  return 0;
}

// Forks, runs the fault in the child, and judges the child's exit.
void expect_fault_handled(const Fault& fault) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int code = 1;
    try {
      code = run_fault(fault);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: unexpected exception: %s\n", e.what());
    }
    std::fflush(nullptr);
    // exit, not _exit: the static destructors (the primary contexts' release) run after a fault too.
    std::exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << fault.expected << ": the child ended by signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (WEXITSTATUS(status) == kSkip) GTEST_SKIP() << "no GPU (the child said why on stderr)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << fault.expected << ": see the child's message above";
}

TEST(KernelFaults, AStoreToAnUnmappedAddressIsIllegalAddress) { expect_fault_handled(kIllegalAddress); }
TEST(KernelFaults, ATrapIsLaunchFailed) { expect_fault_handled(kTrap); }
TEST(KernelFaults, AFailedDeviceAssertIsAssert) { expect_fault_handled(kAssert); }

}  // namespace

// Create/destroy cycles of cubind::Program (NVRTC) and cubind::Linker (nvJitLink)
// leave the heap flat. Neither needs a GPU. The figures (the heap's growth, and
// the resident set's for reference) are printed and recorded as test
// properties (--gtest_output=xml).
//
// Under AddressSanitizer malloc's figures are not a measure (ASan allocates and
// quarantines freed memory itself), so the tests run a few cycles and leave
// leaks to LeakSanitizer, which reports any at exit.
#include <gtest/gtest.h>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cubind/error.hpp"
#include "cubind/linker.hpp"
#include "cubind/program.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define CUBIND_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CUBIND_TEST_UNDER_ASAN 1
#endif
#endif

namespace {

#ifdef CUBIND_TEST_UNDER_ASAN
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif

constexpr const char* kKernel =
    R"(extern "C" __global__ void scale(float* p, float f, int n) { int i = threadIdx.x; if (i < n) p[i] *= f; })";

// Bytes the process holds from malloc: in use in the heap, and in chunks
// malloc mapped on its own. Unlike the resident set it does not move with the
// allocator's arenas, trims and page faults, so a leak shows byte for byte.
long heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<long>(m.uordblks + m.hblkhd);
}

long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

cubind::ObjectCode compile(cubind::CodeKind kind) {
  cubind::Program program(kKernel, "scale.cu");
  cubind::ProgramOptions options;
  options.arch = "sm_90";
  cubind::CompileResult result = program.compile(kind, options, {"scale"});
  EXPECT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.lowered_names.at("scale"), "scale");
  return std::move(result.code);
}

// Runs `cycle` warmup times, then `cycles` more in kWindows equal windows, and
// returns the least growth of the heap per cycle over one window. A leak grows
// every window by its share; a cache that fills once grows one window.
constexpr int kWindows = 4;

template <typename Cycle>
double growth_per_cycle(const char* what, int cycles, int warmup, Cycle cycle) {
  for (int i = 0; i < warmup; ++i) cycle();
  const int per_window = cycles / kWindows;
  long least = 0;
  std::string heap_each, rss_each;
  for (int w = 0; w < kWindows; ++w) {
    const long heap_before = heap_bytes();
    const long rss_before = resident_bytes();
    for (int i = 0; i < per_window; ++i) cycle();
    const long grown = heap_bytes() - heap_before;
    least = w == 0 ? grown : std::min(least, grown);
    heap_each += (w ? ", " : "") + std::to_string(grown);
    rss_each += (w ? ", " : "") + std::to_string(resident_bytes() - rss_before);
  }
  const double per_cycle = static_cast<double>(least) / per_window;
  std::printf("leak %s: %d windows of %d cycles after %d warm-up: heap grew %s B (least %+.2f B/cycle); RSS %s B\n",
              what, kWindows, per_window, warmup, heap_each.c_str(), per_cycle, rss_each.c_str());
  ::testing::Test::RecordProperty("cycles_per_window", per_window);
  ::testing::Test::RecordProperty("heap_bytes_each_window", heap_each);
  ::testing::Test::RecordProperty("rss_bytes_each_window", rss_each);
  ::testing::Test::RecordProperty("heap_bytes_per_cycle", std::to_string(per_cycle));
  return per_cycle;
}

// NVRTC keeps about 120 bytes per compiled program itself (the same through
// nvrtcCreateProgram/nvrtcDestroyProgram alone); nvJitLink keeps nothing per
// link once warm. What cubind could leak per cycle is larger: a CUBIN is
// about 3 KiB, a program's log and names some hundred bytes more.
constexpr double kAllowedBytesPerCycle = 512;

TEST(Leaks, ProgramCompileCyclesKeepTheHeapFlat) {
  const int cycles = kUnderAsan ? 20 : 1000;
  const double grown = growth_per_cycle("cubind::Program", cycles, kUnderAsan ? 2 : 100, [] {
    const cubind::ObjectCode code = compile(cubind::CodeKind::cubin);
    ASSERT_GE(code.bytes().size(), 4u);
    ASSERT_EQ(std::string(code.bytes().data() + 1, 3), "ELF");
  });
  if (!kUnderAsan) {
    EXPECT_LE(grown, kAllowedBytesPerCycle);
  }
}

TEST(Leaks, LinkerCyclesKeepTheHeapFlat) {
  const cubind::ObjectCode ptx = compile(cubind::CodeKind::ptx);
  const int cycles = kUnderAsan ? 50 : 2000;
  const double grown = growth_per_cycle("cubind::Linker", cycles, kUnderAsan ? 5 : 200, [&] {
    cubind::LinkerOptions options;
    options.arch = "sm_90";
    cubind::Linker linker(options);
    linker.add(ptx);
    cubind::LinkResult result = linker.link();
    ASSERT_TRUE(result.ok) << result.error_log;
    ASSERT_EQ(std::string(result.code.bytes().data() + 1, 3), "ELF");
  });
  if (!kUnderAsan) {
    EXPECT_LE(grown, kAllowedBytesPerCycle);
  }
}

TEST(Leaks, RejectedLinkerOptionsLeaveNothingBehind) {
  // nvJitLinkCreate makes a handle even when it rejects the options (-ptx without -lto here).
  cubind::LinkerOptions options;
  options.arch = "sm_90";
  options.ptx = true;
  const int cycles = kUnderAsan ? 50 : 2000;
  const double grown = growth_per_cycle("cubind::Linker, rejected options", cycles, kUnderAsan ? 5 : 200, [&] {
    EXPECT_THROW(cubind::Linker linker(options), cubind::NvJitLinkError);
  });
  if (!kUnderAsan) {
    EXPECT_LE(grown, kAllowedBytesPerCycle);
  }
}

}  // namespace

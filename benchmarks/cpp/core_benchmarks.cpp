// cubind's runtime layer against the raw driver calls beneath it, in one run,
// each pair measured back to back and summarized over repetitions by the
// median and by the best one (the least disturbed by the machine). The last
// lines are a table of ratios:
//   allocate + free  DeviceMemoryResource           vs cuMemAllocFromPoolAsync + cuMemFreeAsync  (goal: at most 1.05x the time)
//                    Buffer (owns a reference to its resource; for information)
//   peer copy        Buffer::copy_from              vs cuMemcpyPeerAsync                          (goal: at least 95% of the bandwidth)
//   device copy      Buffer::copy_from              vs cuMemcpyAsync, within one GPU
// Peer copies need two GPUs and are left out, with a note, on fewer.
//
// The allocation goal is judged by the paired benchmarks
// (alloc_free/paired/...): separate benchmarks of the raw and cubind sides,
// seconds apart, see different states of the machine, and the ratio of their
// medians moves by several percent from run to run. A paired benchmark times
// short blocks of raw pairs and of cubind pairs alternately, in one loop, and
// takes the median of the per-round ratios, which slow drift cancels out of.
// The separate benchmarks stay, as informational rows.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "paired.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::ContextGuard;
using cubind::Device;
using cubind::DeviceMemoryResource;
using cubind::Stream;
using cubind_bench::driver_failure;

constexpr int kRepetitions = 9;

// Paired allocation benchmarks: rounds of one block of raw pairs and one block
// of cubind pairs each, the order alternating (even rounds raw first, odd
// rounds cubind first), after warm-up rounds that are not recorded.
constexpr int kPairedRounds = 2000;
constexpr int kPairedWarmupRounds = 20;
constexpr int kPairsPerBlock = 256;
constexpr double kAllocGoal = 1.05;  // cubind / raw time

// One device, one stream, one pool for every allocation benchmark, so that
// both sides of a comparison hit the same warm pool.
struct Gpu {
  Device device;
  Stream stream;
  std::shared_ptr<DeviceMemoryResource> pool;

  static std::map<int, std::unique_ptr<Gpu>>& all() {
    static std::map<int, std::unique_ptr<Gpu>> gpus;
    return gpus;
  }

  static Gpu& get(int ordinal) {
    auto& gpu = all()[ordinal];
    if (!gpu) {
      const Device device = Device::get(ordinal);
      cubind::DeviceMemoryResourceOptions options;
      // Keep freed memory in the pool across synchronizations: the benchmark
      // measures the allocator, not the operating system.
      options.release_threshold = UINT64_MAX;
      gpu.reset(new Gpu{device, Stream(device), std::make_shared<DeviceMemoryResource>(device, options)});
    }
    return *gpu;
  }
};

void alloc_free_raw(benchmark::State& state, std::size_t bytes) {
  Gpu& gpu = Gpu::get(0);
  ContextGuard guard(gpu.device);
  const CUmemoryPool pool = gpu.pool->handle();
  const CUstream stream = gpu.stream.handle();
  for (auto _ : state) {
    CUdeviceptr ptr = 0;
    if (raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool, stream) != CUDA_SUCCESS ||
        raw::cuMemFreeAsync(ptr, stream) != CUDA_SUCCESS) {
      state.SkipWithError("cuMemAllocFromPoolAsync or cuMemFreeAsync failed");
      break;
    }
    benchmark::DoNotOptimize(ptr);
  }
  gpu.stream.sync();
}

void alloc_free_resource(benchmark::State& state, std::size_t bytes, bool context_current) {
  Gpu& gpu = Gpu::get(0);
  std::optional<ContextGuard> guard;
  if (context_current) guard.emplace(gpu.device);
  DeviceMemoryResource& pool = *gpu.pool;
  const cubind::StreamRef stream = gpu.stream;
  for (auto _ : state) {
    void* ptr = pool.allocate(bytes, stream);
    pool.deallocate(ptr, bytes, stream);
    benchmark::DoNotOptimize(ptr);
  }
  gpu.stream.sync();
}

void alloc_free_buffer(benchmark::State& state, std::size_t bytes) {
  Gpu& gpu = Gpu::get(0);
  ContextGuard guard(gpu.device);
  for (auto _ : state) {
    Buffer buffer = Buffer::allocate(gpu.pool, bytes, gpu.stream);
    benchmark::DoNotOptimize(buffer.data());
  }
  gpu.stream.sync();
}

// Raw cuMemAllocFromPoolAsync + cuMemFreeAsync pairs against `cubind_pair`
// (one cubind allocate + free, which throws on failure), on the pool and
// stream of Gpu::get(0) with its context current.
template <class CubindPair>
void alloc_free_paired(benchmark::State& state, std::size_t bytes, CubindPair cubind_pair) {
  Gpu& gpu = Gpu::get(0);
  ContextGuard guard(gpu.device);
  const CUmemoryPool pool = gpu.pool->handle();
  const CUstream stream = gpu.stream.handle();
  std::string failure;
  auto raw_pair = [&failure, pool, stream, bytes]() -> bool {
    CUdeviceptr ptr = 0;
    CUresult status = raw::cuMemAllocFromPoolAsync(&ptr, bytes, pool, stream);
    if (status != CUDA_SUCCESS) {
      failure = driver_failure("cuMemAllocFromPoolAsync", status);
      return false;
    }
    status = raw::cuMemFreeAsync(ptr, stream);
    if (status != CUDA_SUCCESS) {
      failure = driver_failure("cuMemFreeAsync", status);
      return false;
    }
    benchmark::DoNotOptimize(ptr);
    return true;
  };
  const cubind_bench::PairedSettings settings{kPairedWarmupRounds, kPairedRounds, kPairsPerBlock,
                                              "cubind allocate/deallocate"};
  cubind_bench::paired_benchmark(state, settings, "pairs_per_block", stream, raw_pair, cubind_pair, failure);
}

// Same cubind side as alloc_free_resource (context current).
void alloc_free_paired_resource(benchmark::State& state, std::size_t bytes) {
  Gpu& gpu = Gpu::get(0);
  DeviceMemoryResource& pool = *gpu.pool;
  const cubind::StreamRef stream = gpu.stream;
  alloc_free_paired(state, bytes, [&pool, stream, bytes]() -> bool {
    void* ptr = pool.allocate(bytes, stream);
    pool.deallocate(ptr, bytes, stream);
    benchmark::DoNotOptimize(ptr);
    return true;
  });
}

// Same cubind side as alloc_free_buffer.
void alloc_free_paired_buffer(benchmark::State& state, std::size_t bytes) {
  Gpu& gpu = Gpu::get(0);
  const std::shared_ptr<DeviceMemoryResource>& pool = gpu.pool;
  const cubind::StreamRef stream = gpu.stream;
  alloc_free_paired(state, bytes, [&pool, stream, bytes]() -> bool {
    Buffer buffer = Buffer::allocate(pool, bytes, stream);
    benchmark::DoNotOptimize(buffer.data());
    return true;
  });
}

// Each copy is synchronized, so the time is the transfer's.
void copy(benchmark::State& state, std::size_t bytes, int dst_ordinal, bool through_buffer) {
  Gpu& source = Gpu::get(0);
  Gpu& target = Gpu::get(dst_ordinal);
  const Stream& stream = source.stream;
  Buffer src = Buffer::allocate(source.pool, bytes, stream);
  // Each pool allocates on a stream of its own device.
  Buffer dst = Buffer::allocate(target.pool, bytes, target.stream);
  src.fill(std::uint8_t{1}, stream);
  stream.sync();
  target.stream.sync();
  const CUcontext src_context = source.device.primary_context().handle();
  const CUcontext dst_context = target.device.primary_context().handle();
  ContextGuard guard(source.device);
  for (auto _ : state) {
    if (through_buffer) {
      dst.copy_from(src, stream);
    } else if (src_context != dst_context) {
      cubind::detail::check(raw::cuMemcpyPeerAsync(dst.handle(), dst_context, src.handle(), src_context, bytes,
                                                   stream.handle()),
                            "cuMemcpyPeerAsync");
    } else {
      cubind::detail::check(raw::cuMemcpyAsync(dst.handle(), src.handle(), bytes, stream.handle()), "cuMemcpyAsync");
    }
    stream.sync();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

// A row compares either two separate benchmarks by their medians (raw_name,
// cubind_name), or reads a paired benchmark's counters (paired_name).
struct Row {
  std::string operation;
  std::string raw_name;
  std::string cubind_name;
  std::size_t bytes;     // of a copy; 0 for an allocation, compared by time
  std::string goal;
  std::string paired_name = {};
  double max_ratio = 0;  // > 0: the goal is met when the ratio is at most this
};

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void print_table(const cubind_bench::SummaryReporter& reporter, const std::vector<Row>& rows) {
  std::printf("\n| operation | measured | raw driver | cubind | ratio | spread | goal |\n"
              "|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    if (!row.paired_name.empty()) {
      if (const auto paired = cubind_bench::paired_summary(reporter, row.paired_name)) {
        std::printf("| %s | %s |\n", row.operation.c_str(), paired->cells(" ns", row.max_ratio).c_str());
      } else {
        std::printf("| %s | paired | not run | not run | | | %s |\n", row.operation.c_str(), row.goal.c_str());
      }
      continue;
    }
    const std::optional<double> raw_median = reporter.seconds(row.raw_name, "median");
    const std::optional<double> cubind_median = reporter.seconds(row.cubind_name, "median");
    const std::optional<double> raw_best = reporter.seconds(row.raw_name, "best");
    const std::optional<double> cubind_best = reporter.seconds(row.cubind_name, "best");
    if (!raw_median || !cubind_median || !raw_best || !cubind_best) {
      std::printf("| %s | separate | not run | not run | | | %s |\n", row.operation.c_str(), row.goal.c_str());
      continue;
    }
    if (row.bytes == 0) {
      std::printf("| %s | separate, medians | %.1f ns | %.1f ns | %.3fx time | best runs %.3fx | %s |\n",
                  row.operation.c_str(), *raw_median * 1e9, *cubind_median * 1e9, *cubind_median / *raw_median,
                  *cubind_best / *raw_best, row.goal.c_str());
    } else {
      const auto gbs = [&](double seconds) { return static_cast<double>(row.bytes) / seconds / 1e9; };
      std::printf("| %s | separate, medians | %.1f GB/s | %.1f GB/s | %.1f%% bandwidth | best runs %.1f%% | %s |\n",
                  row.operation.c_str(), gbs(*raw_median), gbs(*cubind_median), 100.0 * *raw_median / *cubind_median,
                  100.0 * *raw_best / *cubind_best, row.goal.c_str());
    }
  }
  std::printf("paired: per round, %d raw and %d cubind allocate+free pairs timed in two blocks (order alternating),\n"
              "  ratio = median of the per-round ratios with its 95%% confidence interval, IQR = their interquartile\n"
              "  range; separate: informational.\n",
              kPairsPerBlock, kPairsPerBlock);
}

void add(const std::string& name, std::function<void(benchmark::State&)> body, benchmark::TimeUnit unit) {
  benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& state) { body(state); })
      ->Repetitions(kRepetitions)
      ->ComputeStatistics("best", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
      ->ReportAggregatesOnly(true)
      ->UseRealTime()
      ->Unit(unit);
}

// Runs once: the rounds are in the body, their statistics in the counters.
void add_paired(const std::string& name, std::function<void(benchmark::State&)> body) {
  benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& state) { body(state); })
      ->Iterations(1)
      ->Repetitions(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  int count = 0;
  try {
    count = Device::count();
  } catch (const std::exception& e) {
    std::printf("cubind_core_benchmarks: no CUDA driver (%s); nothing to measure\n", e.what());
    return 0;
  }
  if (count == 0) {
    std::printf("cubind_core_benchmarks: no GPU; nothing to measure\n");
    return 0;
  }

  std::vector<Row> rows;
  for (const std::size_t bytes : {std::size_t{256}, std::size_t{1} << 16, std::size_t{1} << 24}) {
    const std::string size = "/" + std::to_string(bytes);
    add("alloc_free/raw" + size, [bytes](benchmark::State& s) { alloc_free_raw(s, bytes); }, benchmark::kNanosecond);
    add("alloc_free/DeviceMemoryResource" + size, [bytes](benchmark::State& s) { alloc_free_resource(s, bytes, true); },
        benchmark::kNanosecond);
    add("alloc_free/Buffer" + size, [bytes](benchmark::State& s) { alloc_free_buffer(s, bytes); },
        benchmark::kNanosecond);
    add("alloc_free/DeviceMemoryResource_no_current_context" + size,
        [bytes](benchmark::State& s) { alloc_free_resource(s, bytes, false); }, benchmark::kNanosecond);
    add_paired("alloc_free/paired/DeviceMemoryResource" + size,
               [bytes](benchmark::State& s) { alloc_free_paired_resource(s, bytes); });
    add_paired("alloc_free/paired/Buffer" + size, [bytes](benchmark::State& s) { alloc_free_paired_buffer(s, bytes); });
    // The goal is judged on the paired rows; the separate ones are for information.
    char goal_text[32];
    std::snprintf(goal_text, sizeof goal_text, "<= %.2fx", kAllocGoal);
    const std::string goal = goal_text;
    rows.push_back({"allocate+free " + size_text(bytes) + ", DeviceMemoryResource", "", "", 0, goal,
                    "alloc_free/paired/DeviceMemoryResource" + size, kAllocGoal});
    rows.push_back({"allocate+free " + size_text(bytes) + ", DeviceMemoryResource", "alloc_free/raw" + size,
                    "alloc_free/DeviceMemoryResource" + size, 0, "info"});
    // A Buffer also takes and drops a shared reference to its resource (two
    // atomic operations): shown, not held to the allocator's goal.
    rows.push_back({"allocate+free " + size_text(bytes) + ", Buffer", "", "", 0, "info",
                    "alloc_free/paired/Buffer" + size});
    rows.push_back({"allocate+free " + size_text(bytes) + ", Buffer", "alloc_free/raw" + size, "alloc_free/Buffer" + size,
                    0, "info"});
    rows.push_back({"allocate+free " + size_text(bytes) + ", DeviceMemoryResource, no current context",
                    "alloc_free/raw" + size, "alloc_free/DeviceMemoryResource_no_current_context" + size, 0, "info"});
  }

  constexpr std::size_t kCopyBytes = std::size_t{256} << 20;
  const std::string copy_size = "/" + std::to_string(kCopyBytes);
  add("device_copy/raw" + copy_size, [=](benchmark::State& s) { copy(s, kCopyBytes, 0, false); },
      benchmark::kMicrosecond);
  add("device_copy/Buffer" + copy_size, [=](benchmark::State& s) { copy(s, kCopyBytes, 0, true); },
      benchmark::kMicrosecond);
  rows.push_back({"device-to-device copy " + size_text(kCopyBytes) + ", Buffer", "device_copy/raw" + copy_size,
                  "device_copy/Buffer" + copy_size, kCopyBytes, ">= 95%"});

  if (count >= 2) {
    const Device first = Device::get(0);
    const Device second = Device::get(1);
    // Pool allocations follow the pools' access lists, not the contexts'
    // peer access; both are opened where the hardware allows.
    if (first.can_access_peer(second) && second.can_access_peer(first)) {
      first.enable_peer_access(second);
      second.enable_peer_access(first);
      Gpu::get(0).pool->grant_peer_access(second);
      Gpu::get(1).pool->grant_peer_access(first);
    } else {
      std::printf("note: devices 0 and 1 cannot access each other; peer copies are staged by the driver\n");
    }
    for (const std::size_t bytes : {std::size_t{4} << 20, kCopyBytes}) {
      const std::string size = "/" + std::to_string(bytes);
      add("peer_copy/raw" + size, [=](benchmark::State& s) { copy(s, bytes, 1, false); }, benchmark::kMicrosecond);
      add("peer_copy/Buffer" + size, [=](benchmark::State& s) { copy(s, bytes, 1, true); }, benchmark::kMicrosecond);
      rows.push_back({"peer copy 0->1 " + size_text(bytes) + ", Buffer", "peer_copy/raw" + size,
                      "peer_copy/Buffer" + size, bytes, ">= 95%"});
    }
  } else {
    std::printf("note: one GPU; the peer copy benchmarks need two and are left out\n");
  }

  cubind_bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_table(reporter, rows);
  // Before exit releases the primary contexts these streams and pools live in.
  Gpu::all().clear();
  benchmark::Shutdown();
  return 0;
}

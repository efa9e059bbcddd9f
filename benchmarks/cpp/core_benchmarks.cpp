// cubind's runtime layer against the raw driver calls beneath it, in one run,
// each pair measured back to back and summarized over repetitions by the
// median and by the best one (the least disturbed by the machine). The last
// lines are a table of ratios:
//   allocate + free  DeviceMemoryResource, Buffer   vs cuMemAllocFromPoolAsync + cuMemFreeAsync  (goal: at most 1.05x the time)
//   peer copy        Buffer::copy_from              vs cuMemcpyPeerAsync                          (goal: at least 95% of the bandwidth)
//   device copy      Buffer::copy_from              vs cuMemcpyAsync, within one GPU
// Peer copies need two GPUs and are left out, with a note, on fewer.
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

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::ContextGuard;
using cubind::Device;
using cubind::DeviceMemoryResource;
using cubind::Stream;

constexpr int kRepetitions = 9;

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

// Keeps each benchmark's median for the table.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  // Plain text: the output is read from logs more than from terminals.
  TableReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && (run.aggregate_name == "median" || run.aggregate_name == "best")) {
        seconds_[run.run_name.function_name + "@" + run.aggregate_name] =
            run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      }
    }
  }

  std::optional<double> seconds(const std::string& name, const char* statistic) const {
    auto it = seconds_.find(name + "@" + statistic);
    if (it == seconds_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, double> seconds_;
};

struct Row {
  std::string operation;
  std::string raw_name;
  std::string cubind_name;
  std::size_t bytes;     // of a copy; 0 for an allocation, compared by time
  std::string goal;
};

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void print_table(const TableReporter& reporter, const std::vector<Row>& rows) {
  std::printf("\n| operation | raw driver (median) | cubind (median) | ratio (median) | ratio (best run) | goal |\n"
              "|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    const std::optional<double> raw_median = reporter.seconds(row.raw_name, "median");
    const std::optional<double> cubind_median = reporter.seconds(row.cubind_name, "median");
    const std::optional<double> raw_best = reporter.seconds(row.raw_name, "best");
    const std::optional<double> cubind_best = reporter.seconds(row.cubind_name, "best");
    if (!raw_median || !cubind_median || !raw_best || !cubind_best) {
      std::printf("| %s | not run | not run | | | %s |\n", row.operation.c_str(), row.goal.c_str());
      continue;
    }
    if (row.bytes == 0) {
      std::printf("| %s | %.1f ns | %.1f ns | %.3fx time | %.3fx time | %s |\n", row.operation.c_str(),
                  *raw_median * 1e9, *cubind_median * 1e9, *cubind_median / *raw_median, *cubind_best / *raw_best,
                  row.goal.c_str());
    } else {
      const auto gbs = [&](double seconds) { return static_cast<double>(row.bytes) / seconds / 1e9; };
      std::printf("| %s | %.1f GB/s | %.1f GB/s | %.1f%% bandwidth | %.1f%% bandwidth | %s |\n", row.operation.c_str(),
                  gbs(*raw_median), gbs(*cubind_median), 100.0 * *raw_median / *cubind_median,
                  100.0 * *raw_best / *cubind_best, row.goal.c_str());
    }
  }
}

void add(const std::string& name, std::function<void(benchmark::State&)> body, benchmark::TimeUnit unit) {
  benchmark::RegisterBenchmark(name.c_str(), [body](benchmark::State& state) { body(state); })
      ->Repetitions(kRepetitions)
      ->ComputeStatistics("best", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
      ->ReportAggregatesOnly(true)
      ->UseRealTime()
      ->Unit(unit);
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
    rows.push_back({"allocate+free " + size_text(bytes) + ", DeviceMemoryResource", "alloc_free/raw" + size,
                    "alloc_free/DeviceMemoryResource" + size, 0, "<= 1.05x"});
    rows.push_back({"allocate+free " + size_text(bytes) + ", Buffer", "alloc_free/raw" + size, "alloc_free/Buffer" + size,
                    0, "<= 1.05x"});
    rows.push_back({"allocate+free " + size_text(bytes) + ", DeviceMemoryResource, no current context",
                    "alloc_free/raw" + size, "alloc_free/DeviceMemoryResource_no_current_context" + size, 0, "-"});
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

  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_table(reporter, rows);
  // Before exit releases the primary contexts these streams and pools live in.
  Gpu::all().clear();
  benchmark::Shutdown();
  return 0;
}

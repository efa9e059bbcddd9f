// Launch overhead of cubind::launch against the floor: cuLaunchKernelEx called
// through cubind::raw with the same CUlaunchConfig and a hand-built argument
// array. Empty kernels of 0, 4 and 16 arguments, so that the host-side cost is
// what is measured.
//
// The goal (cubind <= 1.03x raw) is judged by the paired benchmarks
// (launch/paired/<n>_args): one run of rounds, each a timed block of raw
// launches and a timed block of cubind launches of the same kernel, config and
// arguments on the same stream, the order alternating between rounds, the
// stream synchronized before each block (outside the timing) so both start
// from an empty queue. The median of the per-round ratios is the goal's
// number; slow drift of the machine cancels out of it. The separate benchmarks
// (raw_cuLaunchKernelEx/..., cubind_launch/...; the stream synchronized every
// 256 launches in both alike) stay as informational rows: the ratio of their
// medians moves by several percent from run to run.
// Prints Google Benchmark's table, then a short summary table.
//
//   cubind_launch_benchmarks [Google Benchmark flags, e.g. --benchmark_min_time=0.2]

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/launch.hpp"
#include "cubind/program.hpp"
#include "cubind/raw/driver.hpp"
#include "paired.hpp"

namespace {

namespace raw = cubind::raw;
using cubind_bench::driver_failure;

constexpr const char* kSource = R"(
extern "C" __global__ void empty0() {}
extern "C" __global__ void empty4(float* a, int b, float c, const float* d) {}
extern "C" __global__ void empty16(float* a0, int a1, float a2, float* a3, long long a4, float a5, float* a6,
                                   short a7, float* a8, double a9, int a10, float* a11, char a12, float a13,
                                   float* a14, unsigned int a15) {}
)";

constexpr int kSyncEvery = 256;
constexpr int kRepetitions = 10;
constexpr unsigned int kBlock = 32;

// Paired benchmarks: warm-up rounds (not recorded), then recorded rounds of
// one block of raw launches and one block of cubind launches each, the order
// alternating (even rounds raw first, odd rounds cubind first).
constexpr int kPairedRounds = 2000;
constexpr int kPairedWarmupRounds = 20;
constexpr int kLaunchesPerBlock = 128;
constexpr double kLaunchGoal = 1.03;  // cubind / raw time

struct Fixture {
  std::string skip_reason;
  CUstream stream = nullptr;
  cubind::ObjectCode code;
  cubind::Kernel kernels[3];  // 0, 4 and 16 arguments
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void set_up() {
  Fixture& f = fixture();
  try {
    if (cubind::Device::count() == 0) {
      f.skip_reason = "the driver reports no device";
      return;
    }
  } catch (const cubind::LoaderError& error) {
    const std::string message = error.what();
    f.skip_reason = message.substr(0, message.find(". Tried:"));
    return;
  } catch (const cubind::CudaError& error) {
    f.skip_reason = error.what();
    return;
  }
  const cubind::Device device = cubind::Device::get(0);
  device.set_current();
  cubind::Program program(kSource, "empty.cu");
  cubind::ProgramOptions options;
  options.arch = device.arch();
  cubind::CompileResult result = program.compile(cubind::CodeKind::cubin, options);
  if (!result.ok) throw std::runtime_error("compiling the benchmark kernels failed:\n" + result.log);
  f.code = std::move(result.code);
  f.kernels[0] = f.code.get_kernel("empty0");
  f.kernels[1] = f.code.get_kernel("empty4");
  f.kernels[2] = f.code.get_kernel("empty16");
  cubind::detail::check(raw::cuStreamCreate(&f.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  // The parameter layout is read at the first launch; take it out of the measurement.
  for (const cubind::Kernel& kernel : f.kernels) kernel.param_info();
}

// The argument values; the kernels ignore them.
struct Values {
  float* pointer = nullptr;
  int i = 1;
  float f = 2.0f;
  long long ll = 3;
  short s = 4;
  double d = 5.0;
  char c = 6;
  unsigned int u = 7;
};

constexpr int kernel_index(int arguments) { return arguments == 0 ? 0 : arguments == 4 ? 1 : 2; }

// One raw launch: the config and the argument array are built per launch, as
// cubind::launch builds them.
template <int Arguments>
inline CUresult raw_launch_once(CUfunction function, CUstream stream, Values& v) {
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = kBlock;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  if constexpr (Arguments == 0) {
    return raw::cuLaunchKernelEx(&config, function, nullptr, nullptr);
  } else if constexpr (Arguments == 4) {
    void* params[] = {&v.pointer, &v.i, &v.f, &v.pointer};
    return raw::cuLaunchKernelEx(&config, function, params, nullptr);
  } else {
    void* params[] = {&v.pointer, &v.i, &v.f, &v.pointer, &v.ll, &v.f, &v.pointer, &v.s,
                      &v.pointer, &v.d, &v.i, &v.pointer, &v.c,  &v.f, &v.pointer, &v.u};
    return raw::cuLaunchKernelEx(&config, function, params, nullptr);
  }
}

// One cubind launch of the same kernel, config and arguments; throws on failure.
template <int Arguments>
inline void cubind_launch_once(const cubind::StreamRef& stream, const cubind::LaunchConfig& config,
                               const cubind::Kernel& kernel, const Values& v) {
  if constexpr (Arguments == 0) {
    cubind::launch(stream, config, kernel);
  } else if constexpr (Arguments == 4) {
    cubind::launch(stream, config, kernel, v.pointer, v.i, v.f, v.pointer);
  } else {
    cubind::launch(stream, config, kernel, v.pointer, v.i, v.f, v.pointer, v.ll, v.f, v.pointer, v.s, v.pointer, v.d,
                   v.i, v.pointer, v.c, v.f, v.pointer, v.u);
  }
}

bool sync_now_and_then(benchmark::State& state, std::int64_t& launches) {
  if (++launches % kSyncEvery != 0) return true;
  const CUresult status = raw::cuStreamSynchronize(fixture().stream);
  if (status == CUDA_SUCCESS) return true;
  state.SkipWithError(driver_failure("cuStreamSynchronize", status).c_str());
  return false;
}

template <int Arguments>
void raw_launch(benchmark::State& state) {
  Fixture& f = fixture();
  const CUfunction function = reinterpret_cast<CUfunction>(f.kernels[kernel_index(Arguments)].handle());
  Values v;
  std::int64_t launches = 0;
  for (auto _ : state) {
    const CUresult status = raw_launch_once<Arguments>(function, f.stream, v);
    if (status != CUDA_SUCCESS) {
      state.SkipWithError(driver_failure("cuLaunchKernelEx", status).c_str());
      break;
    }
    if (!sync_now_and_then(state, launches)) break;
  }
  raw::cuStreamSynchronize(f.stream);
}

template <int Arguments>
void core_launch(benchmark::State& state) {
  Fixture& f = fixture();
  const cubind::Kernel& kernel = f.kernels[kernel_index(Arguments)];
  const cubind::StreamRef stream(f.stream);
  const cubind::LaunchConfig config{1, kBlock};
  Values v;
  std::int64_t launches = 0;
  try {
    for (auto _ : state) {
      cubind_launch_once<Arguments>(stream, config, kernel, v);
      if (!sync_now_and_then(state, launches)) break;
    }
  } catch (const std::exception& error) {
    state.SkipWithError((std::string("cubind::launch failed: ") + error.what()).c_str());
  }
  raw::cuStreamSynchronize(f.stream);
}

// Raw cuLaunchKernelEx against cubind::launch of the same kernel, config and
// arguments on the fixture's stream.
template <int Arguments>
void launch_paired(benchmark::State& state) {
  Fixture& f = fixture();
  const cubind::Kernel& kernel = f.kernels[kernel_index(Arguments)];
  const CUfunction function = reinterpret_cast<CUfunction>(kernel.handle());
  const CUstream stream = f.stream;
  const cubind::StreamRef stream_ref(stream);
  const cubind::LaunchConfig config{1, kBlock};
  Values v;
  std::string failure;
  auto raw_once = [&]() -> bool {
    const CUresult status = raw_launch_once<Arguments>(function, stream, v);
    if (status == CUDA_SUCCESS) return true;
    failure = driver_failure("cuLaunchKernelEx", status);
    return false;
  };
  auto cubind_once = [&]() -> bool {
    cubind_launch_once<Arguments>(stream_ref, config, kernel, v);
    return true;
  };
  const cubind_bench::PairedSettings settings{kPairedWarmupRounds, kPairedRounds, kLaunchesPerBlock, "cubind::launch"};
  cubind_bench::paired_benchmark(state, settings, "launches_per_block", stream, raw_once, cubind_once, failure);
}

template <int Arguments>
void register_pair() {
  const std::string suffix = "/" + std::to_string(Arguments) + "_args";
  for (auto* b : {benchmark::RegisterBenchmark(("raw_cuLaunchKernelEx" + suffix).c_str(), raw_launch<Arguments>),
                  benchmark::RegisterBenchmark(("cubind_launch" + suffix).c_str(), core_launch<Arguments>)}) {
    b->Repetitions(kRepetitions)->ReportAggregatesOnly(true)->Unit(benchmark::kNanosecond)->UseRealTime();
  }
  // Runs once: the rounds are in the body, their statistics in the counters.
  benchmark::RegisterBenchmark(("launch/paired" + suffix).c_str(), launch_paired<Arguments>)
      ->Iterations(1)
      ->Repetitions(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

void print_table(const cubind_bench::SummaryReporter& reporter) {
  std::printf("\nns per launch; goal: cubind <= %.2fx raw, judged on the paired rows\n", kLaunchGoal);
  std::printf("| args | measured | raw cuLaunchKernelEx | cubind::launch | cubind / raw | spread | goal |\n"
              "|---:|---|---:|---:|---:|---|---|\n");
  for (int arguments : {0, 4, 16}) {
    const std::string suffix = "/" + std::to_string(arguments) + "_args";
    if (const auto paired = cubind_bench::paired_summary(reporter, "launch/paired" + suffix)) {
      std::printf("| %d | %s |\n", arguments, paired->cells("", kLaunchGoal).c_str());
    } else {
      std::printf("| %d | paired | not run | not run | | | <= %.2fx (not judged) |\n", arguments, kLaunchGoal);
    }
    const std::optional<double> separate_raw = reporter.seconds("raw_cuLaunchKernelEx" + suffix, "median");
    const std::optional<double> separate_cubind = reporter.seconds("cubind_launch" + suffix, "median");
    if (separate_raw && separate_cubind) {
      std::printf("| %d | separate, medians of %d | %.1f | %.1f | %.3fx | | info |\n", arguments, kRepetitions,
                  *separate_raw * 1e9, *separate_cubind * 1e9, *separate_cubind / *separate_raw);
    } else {
      std::printf("| %d | separate | not run | not run | | | info |\n", arguments);
    }
  }
  std::printf("paired: per round, %d raw and %d cubind launches timed in two blocks (order alternating),\n"
              "  ratio = median of the per-round ratios with its 95%% confidence interval, IQR = their interquartile\n"
              "  range; separate: informational.\n",
              kLaunchesPerBlock, kLaunchesPerBlock);
}

}  // namespace

int main(int argc, char** argv) {
  // Raw and core runs alternate in random order, so that drift in clocks or in
  // the driver's state falls on both alike; flags given on the command line win.
  std::vector<char*> args(argv, argv + argc);
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  args.insert(args.begin() + 1, interleave);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  try {
    set_up();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  if (!fixture().skip_reason.empty()) {
    std::printf("cubind_launch_benchmarks: no GPU (%s); nothing to measure\n", fixture().skip_reason.c_str());
    return 0;
  }
  register_pair<0>();
  register_pair<4>();
  register_pair<16>();
  cubind_bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  print_table(reporter);
  raw::cuStreamDestroy(fixture().stream);
  return 0;
}

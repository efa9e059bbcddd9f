// Launch overhead of cubind::launch against the floor: cuLaunchKernelEx called
// through cubind::raw with the same CUlaunchConfig and a hand-built argument
// array. Empty kernels of 0, 4 and 16 arguments, so that the host-side cost is
// what is measured. Every 256 launches the stream is synchronised (in both
// variants alike) so the driver's queue never fills and blocks a launch.
// Prints Google Benchmark's table, then medians side by side with the ratio.
//
//   cubind_launch_benchmarks [Google Benchmark flags, e.g. --benchmark_min_time=0.2]

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/launch.hpp"
#include "cubind/program.hpp"
#include "cubind/raw/driver.hpp"

namespace {

namespace raw = cubind::raw;

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

void sync_now_and_then(benchmark::State& state, std::int64_t& launches) {
  if (++launches % kSyncEvery == 0 && raw::cuStreamSynchronize(fixture().stream) != CUDA_SUCCESS) {
    state.SkipWithError("cuStreamSynchronize failed");
  }
}

template <int Arguments>
void raw_launch(benchmark::State& state) {
  Fixture& f = fixture();
  const CUfunction function = reinterpret_cast<CUfunction>(f.kernels[Arguments == 0   ? 0
                                                                     : Arguments == 4 ? 1
                                                                                      : 2]
                                                               .handle());
  Values v;
  std::int64_t launches = 0;
  for (auto _ : state) {
    CUlaunchConfig config{};
    config.gridDimX = config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = kBlock;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = f.stream;
    CUresult status;
    if constexpr (Arguments == 0) {
      status = raw::cuLaunchKernelEx(&config, function, nullptr, nullptr);
    } else if constexpr (Arguments == 4) {
      void* params[] = {&v.pointer, &v.i, &v.f, &v.pointer};
      status = raw::cuLaunchKernelEx(&config, function, params, nullptr);
    } else {
      void* params[] = {&v.pointer, &v.i, &v.f, &v.pointer, &v.ll, &v.f, &v.pointer, &v.s,
                        &v.pointer, &v.d, &v.i, &v.pointer, &v.c,  &v.f, &v.pointer, &v.u};
      status = raw::cuLaunchKernelEx(&config, function, params, nullptr);
    }
    if (status != CUDA_SUCCESS) state.SkipWithError("cuLaunchKernelEx failed");
    sync_now_and_then(state, launches);
  }
  raw::cuStreamSynchronize(f.stream);
}

template <int Arguments>
void core_launch(benchmark::State& state) {
  Fixture& f = fixture();
  const cubind::Kernel& kernel = f.kernels[Arguments == 0 ? 0 : Arguments == 4 ? 1 : 2];
  const cubind::StreamRef stream(f.stream);
  const cubind::LaunchConfig config{1, kBlock};
  Values v;
  std::int64_t launches = 0;
  for (auto _ : state) {
    if constexpr (Arguments == 0) {
      cubind::launch(stream, config, kernel);
    } else if constexpr (Arguments == 4) {
      cubind::launch(stream, config, kernel, v.pointer, v.i, v.f, v.pointer);
    } else {
      cubind::launch(stream, config, kernel, v.pointer, v.i, v.f, v.pointer, v.ll, v.f, v.pointer, v.s, v.pointer, v.d,
                     v.i, v.pointer, v.c, v.f, v.pointer, v.u);
    }
    sync_now_and_then(state, launches);
  }
  raw::cuStreamSynchronize(f.stream);
}

// Keeps the console output and collects the median of each benchmark.
class MedianCollector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_[run.run_name.function_name] = run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double median(const std::string& name) const {
    const auto found = medians_.find(name);
    return found == medians_.end() ? 0.0 : found->second;
  }

 private:
  std::map<std::string, double> medians_;
};

template <int Arguments>
void register_pair() {
  const std::string suffix = "/" + std::to_string(Arguments) + "_args";
  for (auto* b : {benchmark::RegisterBenchmark(("raw_cuLaunchKernelEx" + suffix).c_str(), raw_launch<Arguments>),
                  benchmark::RegisterBenchmark(("cubind_launch" + suffix).c_str(), core_launch<Arguments>)}) {
    b->Repetitions(kRepetitions)->ReportAggregatesOnly(true)->Unit(benchmark::kNanosecond)->UseRealTime();
  }
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
    std::printf("no GPU: %s; launch benchmarks skipped\n", fixture().skip_reason.c_str());
    return 0;
  }
  register_pair<0>();
  register_pair<4>();
  register_pair<16>();
  MedianCollector reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\nmedian of %d repetitions, ns per launch (goal: cubind <= 1.03 x raw)\n", kRepetitions);
  std::printf("| arguments | raw cuLaunchKernelEx | cubind::launch | cubind / raw |\n");
  std::printf("|---:|---:|---:|---:|\n");
  for (int arguments : {0, 4, 16}) {
    const std::string suffix = "/" + std::to_string(arguments) + "_args";
    const double raw_ns = reporter.median("raw_cuLaunchKernelEx" + suffix);
    const double core_ns = reporter.median("cubind_launch" + suffix);
    std::printf("| %d | %.1f | %.1f | %.3f |\n", arguments, raw_ns, core_ns, raw_ns > 0 ? core_ns / raw_ns : 0.0);
  }
  raw::cuStreamDestroy(fixture().stream);
  return 0;
}

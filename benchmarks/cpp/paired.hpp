// Paired measurement for the benchmarks that carry a goal: per round, a block
// of raw driver calls and a block of the same work through cubind, back to back
// and in alternating order, each block started from an idle stream; the
// ratio is the median of the per-round ratios, so drift of the machine, which
// moves both blocks of a round alike, cancels.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <vector>

#include "cubind/raw/driver.hpp"

namespace cubind_bench {

// "cuMemFreeAsync failed: CUDA_ERROR_INVALID_VALUE (1)".
inline std::string driver_failure(const char* call, CUresult result) {
  const char* name = nullptr;
  if (cubind::raw::cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown CUresult";
  return std::string(call) + " failed: " + name + " (" + std::to_string(static_cast<int>(result)) + ")";
}

// The q-quantile of `values`, interpolated linearly between order statistics.
inline double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const std::size_t below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

struct PairedSettings {
  int warmup_rounds;  // run, not recorded
  int rounds;         // recorded
  int per_block;      // operations per timed block
  const char* cubind_what;  // names the cubind side in a failure: "cubind::launch"
};

struct PairedResult {
  std::vector<double> raw_ns;     // per round, ns per operation
  std::vector<double> cubind_ns;
  std::vector<double> ratio;      // per round, cubind / raw
  std::vector<double> ratio_raw_first;
  std::vector<double> ratio_cubind_first;
};

// Runs settings.per_block calls of `op` and sets `ns_per_op` to their mean
// duration, by the steady clock. `op` returns false on a failure, which stops
// the block.
template <class Op>
bool timed_block(Op& op, int per_block, double& ns_per_op) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < per_block; ++i) {
    if (!op()) return false;
  }
  const auto stop = std::chrono::steady_clock::now();
  ns_per_op = std::chrono::duration<double, std::nano>(stop - start).count() / per_block;
  return true;
}

// The rounds. `raw_op` and `cubind_op` do one operation and return false on
// a failure (after setting `failure`); cubind_op may also throw. The stream
// is synchronized before each block, outside the timing. Returns an empty
// string, or what failed.
template <class RawOp, class CubindOp>
std::string run_paired(const PairedSettings& settings, CUstream stream, RawOp& raw_op, CubindOp& cubind_op,
                       std::string& failure, PairedResult& result) {
  auto synchronize = [&]() -> bool {
    const CUresult status = cubind::raw::cuStreamSynchronize(stream);
    if (status != CUDA_SUCCESS) failure = driver_failure("cuStreamSynchronize", status);
    return status == CUDA_SUCCESS;
  };
  try {
    for (int round = -settings.warmup_rounds; round < settings.rounds; ++round) {
      const bool raw_first = (round + settings.warmup_rounds) % 2 == 0;
      double raw_ns = 0;
      double cubind_ns = 0;
      for (int block = 0; block < 2; ++block) {
        if (!synchronize()) return failure;
        const bool ok = (block == 0) == raw_first ? timed_block(raw_op, settings.per_block, raw_ns)
                                                  : timed_block(cubind_op, settings.per_block, cubind_ns);
        if (!ok) return failure;
      }
      if (round < 0) continue;
      result.raw_ns.push_back(raw_ns);
      result.cubind_ns.push_back(cubind_ns);
      result.ratio.push_back(cubind_ns / raw_ns);
      (raw_first ? result.ratio_raw_first : result.ratio_cubind_first).push_back(cubind_ns / raw_ns);
    }
    if (!synchronize()) return failure;
  } catch (const std::exception& error) {
    // The cubind side threw; leave the stream idle if it still can be.
    cubind::raw::cuStreamSynchronize(stream);
    return std::string(settings.cubind_what) + " failed: " + error.what();
  }
  return {};
}

// One benchmark iteration holds the whole paired measurement; its time is the
// whole run's (syncs included), and the results are the counters:
//   raw_ns, cubind_ns   median over rounds of the ns per operation
//   ratio_median        median over rounds of cubind_ns / raw_ns, the goal's number
//   ratio_q1, ratio_q3  interquartile range of the per-round ratios
//   ratio_raw_first, ratio_cubind_first  median ratio of the rounds of each order
//   rounds, <per_block_counter>
template <class RawOp, class CubindOp>
void paired_benchmark(benchmark::State& state, const PairedSettings& settings, const char* per_block_counter,
                      CUstream stream, RawOp raw_op, CubindOp cubind_op, std::string& failure) {
  PairedResult result;
  for (auto _ : state) {
    const std::string failed = run_paired(settings, stream, raw_op, cubind_op, failure, result);
    if (!failed.empty()) {
      state.SkipWithError(failed.c_str());
      break;
    }
  }
  if (state.error_occurred() || result.ratio.empty()) return;
  state.counters["raw_ns"] = quantile(result.raw_ns, 0.5);
  state.counters["cubind_ns"] = quantile(result.cubind_ns, 0.5);
  state.counters["ratio_median"] = quantile(result.ratio, 0.5);
  state.counters["ratio_q1"] = quantile(result.ratio, 0.25);
  state.counters["ratio_q3"] = quantile(result.ratio, 0.75);
  state.counters["ratio_raw_first"] = quantile(result.ratio_raw_first, 0.5);
  state.counters["ratio_cubind_first"] = quantile(result.ratio_cubind_first, 0.5);
  state.counters["rounds"] = static_cast<double>(result.ratio.size());
  state.counters[per_block_counter] = settings.per_block;
  state.SetLabel("time: whole run; per-operation results in the counters");
}

}  // namespace cubind_bench

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
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
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

// The distribution-free 95% confidence interval of the median of `values`:
// the order statistics n/2 -+ 0.98 sqrt(n) (normal approximation to the
// binomial), so the true median of the rounds' ratios lies between them with
// 95% confidence whatever their distribution.
inline std::pair<double, double> median_confidence_interval(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const double half_width = 0.98 * std::sqrt(n);
  const auto at = [&](double rank) {  // rank counted from 1, clamped to the sample
    const double clamped = std::min(std::max(rank, 1.0), n);
    return values[static_cast<std::size_t>(clamped) - 1];
  };
  return {at(std::floor(n / 2 - half_width)), at(std::ceil(n / 2 + half_width + 1))};
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
//   ratio_ci_low, ratio_ci_high  95% confidence interval of ratio_median
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
  const auto [ci_low, ci_high] = median_confidence_interval(result.ratio);
  state.counters["ratio_ci_low"] = ci_low;
  state.counters["ratio_ci_high"] = ci_high;
  state.counters["ratio_q1"] = quantile(result.ratio, 0.25);
  state.counters["ratio_q3"] = quantile(result.ratio, 0.75);
  state.counters["ratio_raw_first"] = quantile(result.ratio_raw_first, 0.5);
  state.counters["ratio_cubind_first"] = quantile(result.ratio_cubind_first, 0.5);
  state.counters["rounds"] = static_cast<double>(result.ratio.size());
  state.counters[per_block_counter] = settings.per_block;
  state.SetLabel("time: whole run; per-operation results in the counters");
}

// Google Benchmark's console output, keeping what the summary tables need:
// each separate benchmark's median and best repetition (in seconds), and each
// paired benchmark's counters.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  // Plain text: the output is read from logs more than from terminals.
  SummaryReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && (run.aggregate_name == "median" || run.aggregate_name == "best")) {
        seconds_[run.run_name.function_name + "@" + run.aggregate_name] =
            run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      }
      // The paired benchmarks run once and set their counters only on success.
      if (run.run_type == Run::RT_Iteration && run.counters.count("ratio_median") != 0) {
        counters_[run.run_name.function_name] = run.counters;
      }
    }
  }

  std::optional<double> counter(const std::string& name, const char* counter_name) const {
    const auto found = counters_.find(name);
    if (found == counters_.end()) return std::nullopt;
    const auto counter = found->second.find(counter_name);
    if (counter == found->second.end()) return std::nullopt;
    return counter->second.value;
  }

  // "median" or "best" of a benchmark's repetitions.
  std::optional<double> seconds(const std::string& name, const char* statistic) const {
    const auto found = seconds_.find(name + "@" + statistic);
    if (found == seconds_.end()) return std::nullopt;
    return found->second;
  }

 private:
  std::map<std::string, double> seconds_;
  std::map<std::string, benchmark::UserCounters> counters_;
};

// A paired benchmark's results, as read back from its counters.
struct PairedSummary {
  double raw_ns, cubind_ns, ratio, ci_low, ci_high, q1, q3, rounds;

  // The table cells "paired, N rounds | raw | cubind | ratio | spread | goal";
  // `unit` follows the two times ("" or " ns"). With a `goal` (> 0) the last
  // cell says whether the median ratio is at most it, and the confidence
  // interval how sure that is; without one it says "info".
  std::string cells(const char* unit, double goal) const {
    char verdict[48] = "info";
    if (goal > 0) std::snprintf(verdict, sizeof verdict, "<= %.2fx (%s)", goal, ratio <= goal ? "met" : "NOT met");
    char text[256];
    std::snprintf(text, sizeof text, "paired, %.0f rounds | %.1f%s | %.1f%s | %.3fx | 95%% CI %.3f-%.3fx, IQR %.3f-%.3fx | %s",
                  rounds, raw_ns, unit, cubind_ns, unit, ratio, ci_low, ci_high, q1, q3, verdict);
    return text;
  }
};

inline std::optional<PairedSummary> paired_summary(const SummaryReporter& reporter, const std::string& name) {
  const char* keys[] = {"raw_ns", "cubind_ns", "ratio_median", "ratio_ci_low", "ratio_ci_high",
                        "ratio_q1", "ratio_q3", "rounds"};
  double values[8];
  for (int i = 0; i < 8; ++i) {
    const std::optional<double> value = reporter.counter(name, keys[i]);
    if (!value) return std::nullopt;
    values[i] = *value;
  }
  return PairedSummary{values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7]};
}

}  // namespace cubind_bench

// Launching a Kernel: a plain LaunchConfig, turned into the driver's
// CUlaunchConfig by one function, and launch(), which checks every argument's
// size against the kernel's parameter layout before cuLaunchKernelEx.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cubind/kernel.hpp"
#include "cubind/stream.hpp"

namespace cubind {

struct Dim3 {
  unsigned int x = 1;
  unsigned int y = 1;
  unsigned int z = 1;

  constexpr Dim3() noexcept = default;
  constexpr Dim3(unsigned int x_, unsigned int y_ = 1, unsigned int z_ = 1) noexcept  // NOLINT: 256 is a Dim3
      : x(x_), y(y_), z(z_) {}
};

struct LaunchConfig {
  Dim3 grid;                            // blocks
  Dim3 block;                           // threads per block
  std::size_t shared_memory_bytes = 0;  // dynamic shared memory per block
  std::optional<Dim3> cluster;          // blocks per cluster (sm_90 and later); the grid must be a multiple
  bool cooperative = false;             // blocks may synchronise grid-wide (cooperative groups)

  // LaunchConfig{grid, block} for the common case; the rarer fields are set by name.
  constexpr LaunchConfig() noexcept = default;
  constexpr LaunchConfig(Dim3 grid_, Dim3 block_, std::size_t shared_memory_bytes_ = 0) noexcept
      : grid(grid_), block(block_), shared_memory_bytes(shared_memory_bytes_) {}
};

// For bindings (Python, other languages) that launch many times with
// arguments known only at run time. The steps launch_type_erased takes on
// every call are split so that a binding does the costly ones once:
//   1. render_launch_config: a LaunchConfig checked and turned into the
//      driver's form, once per config (kept beside the binding's config object);
//   2. parameters_for_launch: the kernel's parameter layout, read once per
//      kernel (the Kernel keeps it), to convert each argument to its
//      parameter's size (check_kernel_arguments when sizes come from elsewhere);
//   3. launch_rendered: the launch itself, per call: no allocation, no check
//      beyond a null stream, one cuLaunchKernelEx.

// The driver's form of a LaunchConfig. config.attrs points into attributes,
// so it is filled in place and never copied (copying is deleted: a copy's
// attrs would point into the original). Only the first config.numAttrs
// attributes are written, so the array is left uninitialised.
struct NativeLaunchConfig {
  CUlaunchConfig config{};
  CUlaunchAttribute attributes[2];

  NativeLaunchConfig() = default;
  NativeLaunchConfig(const NativeLaunchConfig&) = delete;
  NativeLaunchConfig& operator=(const NativeLaunchConfig&) = delete;
};

// The one place a LaunchConfig becomes a CUlaunchConfig, for `stream` (any
// value: launch_rendered puts its own stream in).
// @throws std::invalid_argument for a zero dimension, shared memory beyond
// 4 GiB - 1, or a grid that is not a multiple of the cluster
void render_launch_config(const LaunchConfig& config, CUstream stream, NativeLaunchConfig& out);

// Checks argument sizes against a kernel's parameters (kernel.param_info()).
// @throws std::invalid_argument naming the first argument whose size differs
// from its parameter's, or the two counts when they differ
void check_kernel_arguments(const std::string& kernel_name, const KernelParam* params, std::size_t param_count,
                            const std::size_t* sizes, std::size_t count);

// The kernel's parameters (kernel.param_info()), read at its first launch on
// `stream`. The driver reads them in a current context; where the thread has
// none (a launch on a green context's stream, say), they are read in the
// stream's context. The reference stays valid as long as the Kernel.
// @throws std::logic_error for the StreamRef of a null Stream (when a context
// is needed), CudaError from cuKernelGetParamInfo
const std::vector<KernelParam>& parameters_for_launch(const Kernel& kernel, StreamRef stream);

// Launches with a config rendered beforehand by render_launch_config (its
// stream is replaced by `stream`; `rendered` is only read, so threads may
// share it) and args already laid out as the kernel's parameters: args[i]
// points at the bytes of parameter i. For bindings that convert each argument
// to the size that kernel.param_info() gives its parameter: checking the
// sizes again would compare that layout with itself, on every launch.
// @throws std::logic_error for a null Kernel or the StreamRef of a null Stream
// @throws CudaError from cuLaunchKernelEx
void launch_rendered(StreamRef stream, const NativeLaunchConfig& rendered, const Kernel& kernel, void* const* args);

// The driver's own cuLaunchKernelEx, the one launch_rendered reaches through
// cubind::raw (the driver loaded first, the per-thread default stream chosen
// as it chooses), for a binding that makes launch_rendered's call itself on
// its busiest path: the same call, with the raw layer's trampoline and its
// table left out. The caller keeps launch_rendered's rules: the copy of the
// rendered config with its own stream, the status checked (detail::check).
// @throws LoaderError where the driver cannot be loaded
using LaunchKernelExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
LaunchKernelExFn launch_kernel_ex_entry();

// Launches with arguments given as pointers to their bytes, as a caller that
// knows argument types only at run time has them: args[i] points at sizes[i]
// bytes. The sizes are checked against the kernel's parameters before launching.
// @throws std::invalid_argument for a wrong count or size, or a bad config (nothing is launched)
// @throws std::logic_error for a null Kernel or the StreamRef of a null Stream
// @throws CudaError from cuLaunchKernelEx
void launch_type_erased(StreamRef stream, const LaunchConfig& config, const Kernel& kernel, void* const* args,
                        const std::size_t* sizes, std::size_t count);

// launch(stream, config, kernel, a, b, c): each argument is passed by value to
// the kernel's parameter of the same position, and must have that parameter's
// size: pass 1.0f, not 1.0, for a float. Needs no allocation.
template <typename... Args>
void launch(StreamRef stream, const LaunchConfig& config, const Kernel& kernel, const Args&... args) {
  static_assert((std::is_trivially_copyable_v<Args> && ...),
                "kernel arguments are copied byte for byte, so each must be trivially copyable; "
                "pass device memory as its pointer or CUdeviceptr");
  constexpr std::size_t count = sizeof...(Args);
  // One slot more than needed so that a launch with no arguments has arrays too.
  void* pointers[count + 1] = {const_cast<void*>(static_cast<const void*>(std::addressof(args)))..., nullptr};
  static constexpr std::size_t sizes[count + 1] = {sizeof(Args)..., 0};
  launch_type_erased(stream, config, kernel, pointers, sizes, count);
}

}  // namespace cubind

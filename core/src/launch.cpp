#include "cubind/launch.hpp"

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"

namespace cubind {

namespace {

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

void require_positive(const Dim3& d, const char* field) {
  if (d.x == 0 || d.y == 0 || d.z == 0) {
    throw std::invalid_argument(std::string("LaunchConfig::") + field + " is " + dims(d) +
                                ": every dimension must be at least 1");
  }
}

[[noreturn]] void throw_argument_count(const std::string& kernel_name, std::size_t param_count, std::size_t count) {
  throw std::invalid_argument("cubind::launch: kernel '" + kernel_name + "' takes " + std::to_string(param_count) +
                              (param_count == 1 ? " argument, " : " arguments, ") + std::to_string(count) + " given");
}

[[noreturn]] void throw_argument_size(const std::string& kernel_name, std::size_t index, std::size_t expected,
                                      std::size_t given) {
  throw std::invalid_argument("cubind::launch: argument " + std::to_string(index) + " of kernel '" + kernel_name +
                              "' must be " + std::to_string(expected) + " bytes, " + std::to_string(given) +
                              " bytes given");
}

}  // namespace

const std::vector<KernelParam>& parameters_for_launch(const Kernel& kernel, StreamRef stream) {
  try {
    return kernel.param_info();
  } catch (const CudaError& error) {
    if (error.status() != CUDA_ERROR_INVALID_CONTEXT) throw;
  }
  ContextGuard guard(Context::from_native_handle(detail::stream_context(stream, "cubind::launch")));
  return kernel.param_info();
}

void render_launch_config(const LaunchConfig& config, CUstream stream, NativeLaunchConfig& out) {
  require_positive(config.grid, "grid");
  require_positive(config.block, "block");
  if (config.shared_memory_bytes > UINT_MAX) {
    throw std::invalid_argument("LaunchConfig::shared_memory_bytes is " + std::to_string(config.shared_memory_bytes) +
                                ": the driver takes at most " + std::to_string(UINT_MAX));
  }
  CUlaunchConfig& c = out.config;
  c.gridDimX = config.grid.x;
  c.gridDimY = config.grid.y;
  c.gridDimZ = config.grid.z;
  c.blockDimX = config.block.x;
  c.blockDimY = config.block.y;
  c.blockDimZ = config.block.z;
  c.sharedMemBytes = static_cast<unsigned int>(config.shared_memory_bytes);
  c.hStream = stream;
  c.attrs = out.attributes;
  c.numAttrs = 0;
  if (config.cluster) {
    const Dim3& cluster = *config.cluster;
    require_positive(cluster, "cluster");
    if (config.grid.x % cluster.x != 0 || config.grid.y % cluster.y != 0 || config.grid.z % cluster.z != 0) {
      throw std::invalid_argument("LaunchConfig::grid " + dims(config.grid) + " is not a multiple of cluster " +
                                  dims(cluster) + " in every dimension");
    }
    CUlaunchAttribute& attribute = out.attributes[c.numAttrs++];
    attribute = CUlaunchAttribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = cluster.x;
    attribute.value.clusterDim.y = cluster.y;
    attribute.value.clusterDim.z = cluster.z;
  }
  if (config.cooperative) {
    CUlaunchAttribute& attribute = out.attributes[c.numAttrs++];
    attribute = CUlaunchAttribute{};
    attribute.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attribute.value.cooperative = 1;
  }
}

void check_kernel_arguments(const std::string& kernel_name, const KernelParam* params, std::size_t param_count,
                            const std::size_t* sizes, std::size_t count) {
  if (count != param_count) throw_argument_count(kernel_name, param_count, count);
  for (std::size_t i = 0; i < count; ++i) {
    if (sizes[i] != params[i].size) throw_argument_size(kernel_name, i, params[i].size, sizes[i]);
  }
}

void launch_rendered(StreamRef stream, const NativeLaunchConfig& rendered, const Kernel& kernel, void* const* args) {
  if (stream.handle() == detail::invalid_stream()) detail::require_stream(stream, "cubind::launch");
  // A copy on the stack with this call's stream: `rendered` may be shared by
  // threads launching at once. Its attributes are pointed at, not copied:
  // the driver only reads them.
  CUlaunchConfig config = rendered.config;
  config.hStream = stream.handle();
  config.attrs = const_cast<CUlaunchAttribute*>(rendered.attributes);
  detail::check(raw::cuLaunchKernelEx(&config, reinterpret_cast<CUfunction>(kernel.handle()),
                                      const_cast<void**>(args), nullptr),
                "cuLaunchKernelEx");
}

LaunchKernelExFn launch_kernel_ex_entry() {
  return reinterpret_cast<LaunchKernelExFn>(raw::driver_entry_point("cuLaunchKernelEx"));
}

void launch_type_erased(StreamRef stream, const LaunchConfig& config, const Kernel& kernel, void* const* args,
                        const std::size_t* sizes, std::size_t count) {
  detail::require_stream(stream, "cubind::launch");
  if (count > 0 && (args == nullptr || sizes == nullptr)) {
    throw std::invalid_argument(std::string("cubind::launch: ") + std::to_string(count) + " arguments given, but " +
                                (args == nullptr ? "args" : "sizes") + " is null");
  }
  const std::vector<KernelParam>& params = parameters_for_launch(kernel, stream);
  check_kernel_arguments(kernel.name(), params.data(), params.size(), sizes, count);
  for (std::size_t i = 0; i < count; ++i) {
    // The driver would read the argument's bytes through this pointer.
    if (args[i] == nullptr) {
      throw std::invalid_argument("cubind::launch: args[" + std::to_string(i) + "] of kernel '" + kernel.name() +
                                  "' is null; it must point at the argument's " + std::to_string(sizes[i]) + " bytes");
    }
  }
  NativeLaunchConfig native;
  render_launch_config(config, stream.handle(), native);
  // The driver takes a CUkernel where a CUfunction is expected and loads it into
  // the stream's context (the current one for a default stream) on first use,
  // so no per-context lookup is needed here.
  detail::check(raw::cuLaunchKernelEx(&native.config, reinterpret_cast<CUfunction>(kernel.handle()),
                                      const_cast<void**>(args), nullptr),
                "cuLaunchKernelEx");
}

}  // namespace cubind

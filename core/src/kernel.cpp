#include "cubind/kernel.hpp"

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/launch.hpp"
#include "cubind/raw/driver.hpp"
#include "null_owner.hpp"

namespace cubind {

struct Kernel::State {
  CUkernel handle = nullptr;
  std::string name;
  std::shared_ptr<const void> library;  // keeps the CUlibrary loaded; null for a foreign kernel

  // The parameter layout, read at the first launch; launches from several
  // threads may race to it, and after that only the flag is read.
  std::atomic<bool> params_ready{false};
  std::mutex params_mutex;
  std::vector<KernelParam> params;
};

Kernel::Kernel(CUkernel handle, std::string name, std::shared_ptr<const void> library)
    : state_(std::make_shared<State>()) {
  state_->handle = handle;
  state_->name = std::move(name);
  state_->library = std::move(library);
}

Kernel Kernel::from_native_handle(CUkernel handle) {
  if (handle == nullptr) throw std::invalid_argument("cubind::Kernel::from_native_handle: the handle is null");
  const char* name = nullptr;
  detail::check(raw::cuKernelGetName(&name, handle), "cuKernelGetName");
  return Kernel(handle, name != nullptr ? name : "", nullptr);
}

Kernel::State& Kernel::state(const char* method) const {
  if (!state_) detail::throw_null_owner("Kernel", method, "moved from, or default-constructed");
  return *state_;
}

CUkernel Kernel::handle() const { return state("handle").handle; }
const std::string& Kernel::name() const { return state("name").name; }

const std::vector<KernelParam>& Kernel::param_info() const {
  State& s = state("param_info");
  if (s.params_ready.load(std::memory_order_acquire)) return s.params;
  std::lock_guard<std::mutex> lock(s.params_mutex);
  if (!s.params_ready.load(std::memory_order_relaxed)) {
    // The driver reports no count: indices are asked in turn until one is out of range.
    std::vector<KernelParam> params;
    for (std::size_t index = 0;; ++index) {
      KernelParam param;
      const CUresult status = raw::cuKernelGetParamInfo(s.handle, index, &param.offset, &param.size);
      if (status == CUDA_ERROR_INVALID_VALUE) break;
      detail::check(status, "cuKernelGetParamInfo");
      params.push_back(param);
    }
    s.params = std::move(params);
    s.params_ready.store(true, std::memory_order_release);
  }
  return s.params;
}

int Kernel::attribute(CUfunction_attribute attribute, const Device& device) const {
  int value = 0;
  detail::check(raw::cuKernelGetAttribute(&value, attribute, state("attribute").handle, device.handle()),
                "cuKernelGetAttribute");
  return value;
}

void Kernel::set_attribute(CUfunction_attribute attribute, int value, const Device& device) const {
  detail::check(raw::cuKernelSetAttribute(attribute, value, state("set_attribute").handle, device.handle()),
                "cuKernelSetAttribute");
}

CUfunction Kernel::function() const {
  CUfunction function = nullptr;
  detail::check(raw::cuKernelGetFunction(&function, state("function").handle), "cuKernelGetFunction");
  return function;
}

int Kernel::max_active_blocks_per_multiprocessor(int block_size, std::size_t dynamic_shared_memory_bytes,
                                                 unsigned int flags) const {
  state("max_active_blocks_per_multiprocessor");
  int blocks = 0;
  detail::check(raw::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, function(), block_size,
                                                                          dynamic_shared_memory_bytes, flags),
                "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
  return blocks;
}

BlockSizeSuggestion Kernel::max_potential_block_size(std::size_t dynamic_shared_memory_bytes, int block_size_limit,
                                                     unsigned int flags) const {
  state("max_potential_block_size");
  BlockSizeSuggestion suggestion;
  detail::check(
      raw::cuOccupancyMaxPotentialBlockSizeWithFlags(&suggestion.min_grid_size, &suggestion.block_size, function(),
                                                     nullptr, dynamic_shared_memory_bytes, block_size_limit, flags),
      "cuOccupancyMaxPotentialBlockSizeWithFlags");
  return suggestion;
}

std::size_t Kernel::available_dynamic_shared_memory_per_block(int blocks_per_multiprocessor, int block_size) const {
  state("available_dynamic_shared_memory_per_block");
  std::size_t bytes = 0;
  detail::check(raw::cuOccupancyAvailableDynamicSMemPerBlock(&bytes, function(), blocks_per_multiprocessor, block_size),
                "cuOccupancyAvailableDynamicSMemPerBlock");
  return bytes;
}

int Kernel::max_potential_cluster_size(const LaunchConfig& config) const {
  state("max_potential_cluster_size");
  NativeLaunchConfig native;
  render_launch_config(config, nullptr, native);
  int size = 0;
  detail::check(raw::cuOccupancyMaxPotentialClusterSize(&size, function(), &native.config),
                "cuOccupancyMaxPotentialClusterSize");
  return size;
}

int Kernel::max_active_clusters(const LaunchConfig& config) const {
  state("max_active_clusters");
  NativeLaunchConfig native;
  render_launch_config(config, nullptr, native);
  int clusters = 0;
  detail::check(raw::cuOccupancyMaxActiveClusters(&clusters, function(), &native.config),
                "cuOccupancyMaxActiveClusters");
  return clusters;
}

}  // namespace cubind

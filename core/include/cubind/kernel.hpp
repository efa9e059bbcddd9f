// Kernel: one kernel of a loaded library (a CUkernel), with its attributes, its
// parameter layout and occupancy queries. Copies share one state, including the
// parameter layout, which is read from the driver once, at first use.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cubind {

class Device;
struct LaunchConfig;
class ObjectCode;

// Where one parameter lies in the device-side parameter buffer (cuKernelGetParamInfo).
struct KernelParam {
  std::size_t offset = 0;
  std::size_t size = 0;
};

// What cuOccupancyMaxPotentialBlockSize suggests.
struct BlockSizeSuggestion {
  int min_grid_size = 0;  // the fewest blocks that reach the maximum occupancy
  int block_size = 0;
};

class Kernel {
 public:
  // Null, as a moved-from Kernel is: every method but the destructor and
  // assignment throws std::logic_error.
  Kernel() noexcept = default;

  // A view of a kernel whose library is owned elsewhere and must outlive it.
  // The name comes from cuKernelGetName.
  // @throws CudaError
  static Kernel from_native_handle(CUkernel handle);

  CUkernel handle() const;
  const std::string& name() const;

  // Every parameter's offset and size, in order; read once, then cached.
  // @throws CudaError (for example from a driver older than CUDA 12.4)
  const std::vector<KernelParam>& param_info() const;
  std::size_t param_count() const { return param_info().size(); }

  // cuKernelGetAttribute / cuKernelSetAttribute for one device.
  // @throws CudaError
  int attribute(CUfunction_attribute attribute, const Device& device) const;
  void set_attribute(CUfunction_attribute attribute, int value, const Device& device) const;

  // The CUfunction of this kernel in the current context (cuKernelGetFunction),
  // loading it there if needed.
  // @throws CudaError (CUDA_ERROR_INVALID_CONTEXT when no context is current)
  CUfunction function() const;

  // Occupancy, for the device of the current context (cuOccupancy* on function()).
  // @throws CudaError
  int max_active_blocks_per_multiprocessor(int block_size, std::size_t dynamic_shared_memory_bytes = 0,
                                           unsigned int flags = CU_OCCUPANCY_DEFAULT) const;
  BlockSizeSuggestion max_potential_block_size(std::size_t dynamic_shared_memory_bytes = 0, int block_size_limit = 0,
                                               unsigned int flags = CU_OCCUPANCY_DEFAULT) const;
  std::size_t available_dynamic_shared_memory_per_block(int blocks_per_multiprocessor, int block_size) const;
  // Cluster queries read config's grid, block, shared memory and cluster dimensions.
  int max_potential_cluster_size(const LaunchConfig& config) const;
  int max_active_clusters(const LaunchConfig& config) const;

 private:
  friend class ObjectCode;
  struct State;
  Kernel(CUkernel handle, std::string name, std::shared_ptr<const void> library);
  State& state(const char* method) const;

  std::shared_ptr<State> state_;
};

}  // namespace cubind

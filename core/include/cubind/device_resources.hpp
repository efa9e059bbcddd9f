// Device resources: what a green context is made of. An SmResource is a set of
// streaming multiprocessors (a CUdevResource of type SM): all of a device's,
// a context's, or one group of a split. It is a plain value, copied freely:
// the driver hands these structs out and takes them back, and owns nothing
// through them.
//
// The CUDA 13.0 headers define the SM resource only; the workqueue resources
// (CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG / _WORKQUEUE) and the structured
// split (cuDevSmResourceSplit) came with CUDA 13.1.
#pragma once

#include <cuda.h>

#include <optional>
#include <vector>

namespace cubind {

class Context;
class Device;
struct SmSplit;
struct SmSplitOptions;

class SmResource {
 public:
  // All SMs of the device (cuDeviceGetDevResource).
  static SmResource of(const Device& device);
  // The SMs a context was provisioned with: a green context's partition, or
  // the whole device for a primary context (cuGreenCtxGetDevResource for a
  // green context cubind made, cuCtxGetDevResource otherwise).
  static SmResource of(const Context& context);
  // A resource the driver filled in elsewhere. device_ordinal is the device it
  // came from, or -1 where unknown (then GreenContext cannot check it).
  // @throws std::invalid_argument unless resource.type is CU_DEV_RESOURCE_TYPE_SM.
  static SmResource from_native(const CUdevResource& resource, int device_ordinal = -1);

  unsigned int sm_count() const noexcept { return resource_.sm.smCount; }
  // The fewest SMs a group of a split may have. The groups of a split the
  // driver leaves without one carry their parent's.
  unsigned int min_partition_size() const noexcept { return min_partition_size_; }
  // A group's SM count is a multiple of this: SMs guaranteed to be co-scheduled.
  unsigned int coscheduled_alignment() const noexcept { return coscheduled_alignment_; }
  // The device ordinal, -1 where unknown.
  int device_ordinal() const noexcept { return device_; }

  const CUdevResource& native() const noexcept { return resource_; }

  // Splits these SMs into disjoint groups plus a remainder
  // (cuDevSmResourceSplitByCount). The options are checked before the driver
  // is asked, against this resource's counts.
  // @throws std::invalid_argument for 0 groups, an SM count of 0, below the
  // minimum partition size or not a multiple of the alignment;
  // std::out_of_range when the groups need more SMs than this resource has;
  // CudaError.
  SmSplit split(const SmSplitOptions& options) const;

 private:
  SmResource(const CUdevResource& resource, int device, const SmResource* parent = nullptr) noexcept;

  CUdevResource resource_;
  int device_;
  unsigned int min_partition_size_;
  unsigned int coscheduled_alignment_;
};

struct SmSplitOptions {
  // How many groups to make.
  unsigned int groups = 1;
  // SMs in each group; unset is the smallest partition the resource allows
  // (min_partition_size()).
  std::optional<unsigned int> sm_count;
  // CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING: finer groups that treat
  // each SM on its own, at the cost of large clusters. The driver then sets
  // its own minimum and alignment, so only the total is checked beforehand.
  bool ignore_coscheduling = false;
};

struct SmSplit {
  // The groups the driver made: as many as asked, or fewer where the SMs'
  // layout does not allow more. Each holds at least the SMs asked for.
  std::vector<SmResource> groups;
  // The SMs no group took; sm_count() is 0 when there are none.
  SmResource remainder;
};

}  // namespace cubind

#include "cubind/device_resources.hpp"

#include <stdexcept>
#include <string>

#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"

namespace cubind {

namespace {

constexpr const char* k_split = "cubind::SmResource::split";

std::string sms(unsigned long long count) { return std::to_string(count) + (count == 1 ? " SM" : " SMs"); }

// Everything that can be said of a split before the driver is asked: the
// driver itself rounds a count it cannot honour up, or makes fewer groups,
// without saying so.
void check_split(const SmSplitOptions& options, const SmResource& input) {
  if (options.groups == 0) {
    throw std::invalid_argument(std::string(k_split) + ": groups is 0; ask for at least one group");
  }
  const unsigned int available = input.sm_count();
  unsigned int per_group = input.min_partition_size();
  if (options.sm_count) {
    per_group = *options.sm_count;
    if (per_group == 0) {
      throw std::invalid_argument(std::string(k_split) +
                                  ": sm_count is 0; leave it unset for the smallest partition this resource allows (" +
                                  sms(input.min_partition_size()) + ")");
    }
    if (per_group > available) {
      throw std::out_of_range(std::string(k_split) + ": sm_count " + std::to_string(per_group) +
                              " is more than this resource's " + sms(available));
    }
    if (!options.ignore_coscheduling) {
      if (per_group < input.min_partition_size()) {
        throw std::invalid_argument(std::string(k_split) + ": sm_count " + std::to_string(per_group) +
                                    " is below this resource's minimum partition size of " +
                                    sms(input.min_partition_size()));
      }
      const unsigned int alignment = input.coscheduled_alignment();
      if (alignment > 1 && per_group % alignment != 0) {
        const unsigned int below = per_group / alignment * alignment;
        std::string hint = std::to_string(below + alignment);
        if (below >= input.min_partition_size()) hint = std::to_string(below) + " or " + hint;
        throw std::invalid_argument(std::string(k_split) + ": sm_count " + std::to_string(per_group) +
                                    " is not a multiple of this resource's co-scheduling alignment of " +
                                    std::to_string(alignment) + "; use " + hint);
      }
    }
  }
  if (options.ignore_coscheduling && !options.sm_count) return;  // the driver picks the size
  const unsigned long long needed = static_cast<unsigned long long>(options.groups) * per_group;
  if (needed > available) {
    throw std::out_of_range(std::string(k_split) + ": " + std::to_string(options.groups) +
                            (options.groups == 1 ? " group" : " groups") + " of " + sms(per_group) + " need " +
                            sms(needed) + ", more than this resource's " + sms(available));
  }
}

unsigned int or_else(unsigned int value, unsigned int fallback) { return value != 0 ? value : fallback; }

}  // namespace

SmResource::SmResource(const CUdevResource& resource, int device, const SmResource* parent) noexcept
    : resource_(resource),
      device_(device),
      min_partition_size_(or_else(resource.sm.minSmPartitionSize, parent ? parent->min_partition_size_ : 0)),
      coscheduled_alignment_(
          or_else(resource.sm.smCoscheduledAlignment, parent ? parent->coscheduled_alignment_ : 0)) {}

SmResource SmResource::of(const Device& device) {
  detail::init_driver();
  CUdevResource resource{};
  detail::check(raw::cuDeviceGetDevResource(device.handle(), &resource, CU_DEV_RESOURCE_TYPE_SM),
                "cuDeviceGetDevResource");
  return SmResource(resource, device.ordinal());
}

SmResource SmResource::of(const Context& context) {
  CUdevResource resource{};
  if (const CUgreenCtx green = detail::green_context_of(context.handle())) {
    detail::check(raw::cuGreenCtxGetDevResource(green, &resource, CU_DEV_RESOURCE_TYPE_SM),
                  "cuGreenCtxGetDevResource");
  } else {
    detail::check(raw::cuCtxGetDevResource(context.handle(), &resource, CU_DEV_RESOURCE_TYPE_SM),
                  "cuCtxGetDevResource");
  }
  return SmResource(resource, detail::context_device(context.handle()));
}

SmResource SmResource::from_native(const CUdevResource& resource, int device_ordinal) {
  if (resource.type != CU_DEV_RESOURCE_TYPE_SM) {
    throw std::invalid_argument("cubind::SmResource::from_native: the resource's type is " +
                                std::to_string(static_cast<int>(resource.type)) +
                                ", not CU_DEV_RESOURCE_TYPE_SM (" + std::to_string(CU_DEV_RESOURCE_TYPE_SM) + ")");
  }
  return SmResource(resource, device_ordinal < 0 ? -1 : device_ordinal);
}

SmSplit SmResource::split(const SmSplitOptions& options) const {
  check_split(options, *this);
  std::vector<CUdevResource> groups(options.groups);
  CUdevResource remaining{};
  unsigned int made = options.groups;
  const unsigned int flags = options.ignore_coscheduling ? CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
  detail::check(raw::cuDevSmResourceSplitByCount(groups.data(), &made, &resource_, &remaining, flags,
                                                 options.sm_count.value_or(0)),
                "cuDevSmResourceSplitByCount");
  SmSplit split{{}, SmResource(remaining, device_, this)};
  split.groups.reserve(made);
  for (unsigned int i = 0; i < made && i < options.groups; ++i) {
    split.groups.push_back(SmResource(groups[i], device_, this));
  }
  return split;
}

}  // namespace cubind

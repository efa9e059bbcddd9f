// SmResource::split checks its options against the resource's counts before
// the driver is asked, so every bad split is refused here without a GPU: the
// resources are filled in by hand as the driver would fill them (an H100-like
// 132 SMs, partitions of at least 8, in steps of 8).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cubind/device.hpp"
#include "cubind/device_resources.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"

namespace {

using cubind::SmResource;
using cubind::SmSplitOptions;

SmResource sms(unsigned int count, unsigned int min_partition = 8, unsigned int alignment = 8, int device = 0) {
  CUdevResource resource{};
  resource.type = CU_DEV_RESOURCE_TYPE_SM;
  resource.sm.smCount = count;
  resource.sm.minSmPartitionSize = min_partition;
  resource.sm.smCoscheduledAlignment = alignment;
  return SmResource::from_native(resource, device);
}

template <typename E>
std::string split_message(const SmResource& resource, SmSplitOptions options) {
  try {
    resource.split(options);
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception was thrown";
  return {};
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "\"" << part << "\" is not in: " << message;
}

TEST(SmResourceFromNative, KeepsTheDriversCountsAndTheDevice) {
  const SmResource resource = sms(132, 8, 8, 3);
  EXPECT_EQ(resource.sm_count(), 132u);
  EXPECT_EQ(resource.min_partition_size(), 8u);
  EXPECT_EQ(resource.coscheduled_alignment(), 8u);
  EXPECT_EQ(resource.device_ordinal(), 3);
  EXPECT_EQ(resource.native().type, CU_DEV_RESOURCE_TYPE_SM);
  EXPECT_EQ(sms(16, 8, 8, -7).device_ordinal(), -1);
}

TEST(SmResourceFromNative, RefusesAResourceOfAnotherType) {
  CUdevResource resource{};
  resource.type = CU_DEV_RESOURCE_TYPE_INVALID;
  try {
    SmResource::from_native(resource);
    ADD_FAILURE() << "no exception was thrown";
  } catch (const std::invalid_argument& e) {
    expect_contains(e.what(), "the resource's type is 0, not CU_DEV_RESOURCE_TYPE_SM (1)");
  }
}

TEST(SmSplitOptionsCheck, RefusesZeroGroups) {
  expect_contains(split_message<std::invalid_argument>(sms(132), {0, 16, false}),
                  "cubind::SmResource::split: groups is 0");
}

TEST(SmSplitOptionsCheck, RefusesAnSmCountOfZeroAndPointsAtTheDefault) {
  const std::string message = split_message<std::invalid_argument>(sms(132), {2, 0u, false});
  expect_contains(message, "sm_count is 0");
  expect_contains(message, "leave it unset for the smallest partition this resource allows (8 SMs)");
}

TEST(SmSplitOptionsCheck, RefusesMoreSmsThanTheResourceHas) {
  expect_contains(split_message<std::out_of_range>(sms(132), {1, 136u, false}),
                  "sm_count 136 is more than this resource's 132 SMs");
}

TEST(SmSplitOptionsCheck, RefusesGroupsThatTogetherNeedTooManySms) {
  expect_contains(split_message<std::out_of_range>(sms(132), {2, 72u, false}),
                  "2 groups of 72 SMs need 144 SMs, more than this resource's 132 SMs");
  // Unset, the count is the minimum partition size.
  expect_contains(split_message<std::out_of_range>(sms(132), {17, std::nullopt, false}),
                  "17 groups of 8 SMs need 136 SMs");
  // Ignoring co-scheduling, an explicit count still has to fit.
  expect_contains(split_message<std::out_of_range>(sms(132), {3, 50u, true}), "3 groups of 50 SMs need 150 SMs");
}

TEST(SmSplitOptionsCheck, RefusesACountBelowTheMinimumPartition) {
  expect_contains(split_message<std::invalid_argument>(sms(132, 8, 2), {1, 6u, false}),
                  "sm_count 6 is below this resource's minimum partition size of 8 SMs");
}

TEST(SmSplitOptionsCheck, RefusesAMisalignedCountAndNamesTheNearestValidOnes) {
  expect_contains(split_message<std::invalid_argument>(sms(132), {2, 66u, false}),
                  "sm_count 66 is not a multiple of this resource's co-scheduling alignment of 8; use 64 or 72");
  // Where the multiple below is under the minimum, only the one above is offered.
  expect_contains(split_message<std::invalid_argument>(sms(132, 12, 8), {1, 13u, false}), "alignment of 8; use 16");
}

bool driver_loads() {
  try {
    cubind::Device::count();
    return true;
  } catch (const cubind::LoaderError&) {
    return false;
  } catch (const std::exception&) {
    return true;
  }
}

TEST(SmSplitOptionsCheck, IgnoringCoschedulingLeavesSizeAndAlignmentToTheDriver) {
  // A real driver is not to be handed a resource made up by hand.
  if (driver_loads()) GTEST_SKIP() << "a CUDA driver is present; this checks the options without one";
  // These would be refused as misaligned or too small; with the flag they
  // pass the check, and the missing driver is what answers.
  for (const SmSplitOptions options : {SmSplitOptions{2, 66u, true}, SmSplitOptions{1, 2u, true},
                                       SmSplitOptions{40, std::nullopt, true}}) {
    try {
      sms(132).split(options);
    } catch (const std::invalid_argument& e) {
      ADD_FAILURE() << "refused before the driver: " << e.what();
    } catch (const std::out_of_range& e) {
      ADD_FAILURE() << "refused before the driver: " << e.what();
    } catch (const cubind::LoaderError&) {
    }
  }
}

}  // namespace

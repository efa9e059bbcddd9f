// Green contexts on a real GPU: device 0's SMs split in two, a green context
// on each group, a stream in each, a kernel run on both and checked by value,
// and each context reporting the SMs its group had.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/device_resources.hpp"
#include "cubind/event.hpp"
#include "cubind/green_context.hpp"
#include "cubind/launch.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Buffer;
using cubind::DeviceMemoryResource;
using cubind::GreenContext;
using cubind::SmResource;
using cubind::SmSplitOptions;
using cubind::Stream;
using cubind::StreamOptions;
using cubind_test::message_of;

constexpr const char* kFill = R"(
extern "C" __global__ void fill(int* out, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + i;
}
)";

class GreenContextGpuTest : public cubind_test::DeviceTest {
 protected:
  // The largest count of SMs two groups can each have, in whole steps of the
  // minimum partition rounded up to the co-scheduling alignment.
  static unsigned int half_of(const SmResource& all) {
    const unsigned int alignment = std::max(all.coscheduled_alignment(), 1u);
    const unsigned int step = (std::max(all.min_partition_size(), alignment) + alignment - 1) / alignment * alignment;
    return all.sm_count() / 2 / step * step;
  }

  cubind::ObjectCode compile_fill() const {
    cubind::Program program(kFill, "fill.cu");
    cubind::ProgramOptions options;
    options.arch = dev().arch();
    cubind::CompileResult result = program.compile(cubind::CodeKind::cubin, options);
    EXPECT_TRUE(result.ok) << result.log;
    return std::move(result.code);
  }
};

TEST_F(GreenContextGpuTest, TheDevicesSmResourceCountsEverySm) {
  const SmResource all = SmResource::of(dev());
  EXPECT_EQ(all.sm_count(), static_cast<unsigned int>(dev().attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
  EXPECT_GT(all.min_partition_size(), 0u);
  EXPECT_GT(all.coscheduled_alignment(), 0u);
  EXPECT_EQ(all.device_ordinal(), 0);
  // The primary context has the whole device.
  EXPECT_EQ(SmResource::of(dev().primary_context()).sm_count(), all.sm_count());
}

TEST_F(GreenContextGpuTest, TwoGroupsEachRunAKernelOnTheirOwnStream) {
  const SmResource all = SmResource::of(dev());
  const unsigned int count = half_of(all);
  if (count == 0 || count < all.min_partition_size()) GTEST_SKIP() << all.sm_count() << " SMs are too few for two partitions";
  const cubind::SmSplit split = all.split(SmSplitOptions{2, count, false});
  ASSERT_EQ(split.groups.size(), 2u);
  unsigned int taken = 0;
  for (const SmResource& group : split.groups) {
    EXPECT_GE(group.sm_count(), count);
    EXPECT_EQ(group.device_ordinal(), 0);
    taken += group.sm_count();
  }
  EXPECT_EQ(taken + split.remainder.sm_count(), all.sm_count());

  const cubind::ObjectCode code = compile_fill();
  const cubind::Kernel kernel = code.get_kernel("fill");
  auto pool = std::make_shared<DeviceMemoryResource>(dev());
  constexpr int n = 4096;
  for (std::size_t g = 0; g < split.groups.size(); ++g) {
    GreenContext green(dev(), {split.groups[g]});
    EXPECT_NE(green.handle(), nullptr);
    EXPECT_EQ(green.device(), dev());
    EXPECT_NE(green.context(), dev().primary_context());
    EXPECT_EQ(green.context().device(), dev());
    EXPECT_EQ(green.sm_resource().sm_count(), split.groups[g].sm_count());
    EXPECT_EQ(SmResource::of(green.context()).sm_count(), split.groups[g].sm_count());
    {
      Stream stream = green.create_stream();
      EXPECT_EQ(stream.context(), green.context());
      EXPECT_EQ(stream.device(), dev());
      EXPECT_TRUE(stream.is_non_blocking());
      std::optional<Buffer> out;
      // The device's pool serves a stream of its green context.
      out.emplace(Buffer::allocate(pool, n * sizeof(int), stream));
      const int base = 1000 * static_cast<int>(g + 1);
      cubind::launch(stream, cubind::LaunchConfig{{(n + 127) / 128}, {128}}, kernel, out->handle(), base, n);
      std::vector<int> host(n);
      out->copy_to(host.data(), n * sizeof(int), stream);
      stream.sync();
      for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], base + i) << "group " << g << ", element " << i;
      out->close(stream);
      stream.sync();
    }
    green.sync();
  }
}

TEST_F(GreenContextGpuTest, BothGroupsMayMakeOneContext) {
  const SmResource all = SmResource::of(dev());
  const unsigned int count = half_of(all);
  if (count == 0 || count < all.min_partition_size()) GTEST_SKIP() << all.sm_count() << " SMs are too few for two partitions";
  const cubind::SmSplit split = all.split(SmSplitOptions{2, count, false});
  ASSERT_EQ(split.groups.size(), 2u);
  GreenContext green(dev(), split.groups);
  EXPECT_EQ(green.sm_resource().sm_count(), split.groups[0].sm_count() + split.groups[1].sm_count());
}

TEST_F(GreenContextGpuTest, TheSmallestPartitionIsTheDefault) {
  const SmResource all = SmResource::of(dev());
  const cubind::SmSplit split = all.split(SmSplitOptions{});
  ASSERT_EQ(split.groups.size(), 1u);
  EXPECT_GE(split.groups[0].sm_count(), all.min_partition_size());
  EXPECT_EQ(split.groups[0].sm_count() + split.remainder.sm_count(), all.sm_count());
}

TEST_F(GreenContextGpuTest, BadSplitsAndResourcesAreRefusedWithTheirValues) {
  const SmResource all = SmResource::of(dev());
  const std::string too_many = std::to_string(all.sm_count() + 1);
  std::string message = message_of<std::out_of_range>([&] { all.split(SmSplitOptions{1, all.sm_count() + 1, false}); });
  EXPECT_NE(message.find("sm_count " + too_many + " is more than this resource's " + std::to_string(all.sm_count())),
            std::string::npos)
      << message;
  message = message_of<std::invalid_argument>([&] { all.split(SmSplitOptions{1, 0u, false}); });
  EXPECT_NE(message.find("sm_count is 0"), std::string::npos) << message;
  if (all.coscheduled_alignment() > 1) {
    const unsigned int misaligned = all.min_partition_size() + 1;
    message = message_of<std::invalid_argument>([&] { all.split(SmSplitOptions{1, misaligned, false}); });
    EXPECT_NE(message.find("sm_count " + std::to_string(misaligned) + " is not a multiple"), std::string::npos)
        << message;
  }

  message = message_of<std::invalid_argument>([&] { GreenContext(dev(), {}); });
  EXPECT_NE(message.find("no resources"), std::string::npos) << message;

  // An empty remainder (a split that took every SM) is refused before the driver sees it.
  CUdevResource empty{};
  empty.type = CU_DEV_RESOURCE_TYPE_SM;
  message = message_of<std::invalid_argument>([&] { GreenContext(dev(), {SmResource::from_native(empty, 0)}); });
  EXPECT_NE(message.find("resources[0] holds 0 SMs"), std::string::npos) << message;

  // A resource that says it is of another device.
  const SmResource elsewhere = SmResource::from_native(all.split({}).groups.at(0).native(), 1);
  message = message_of<std::invalid_argument>([&] { GreenContext(dev(), {elsewhere}); });
  EXPECT_NE(message.find("resources[0] is of device 1, not of device 0"), std::string::npos) << message;
}

TEST_F(GreenContextGpuTest, EventsOfTheGreenContextRecordItsStreams) {
  const SmResource all = SmResource::of(dev());
  GreenContext green(dev(), all.split({}).groups);
  Stream stream = green.create_stream();
  cubind::TimedEvent start(green.context());
  cubind::TimedEvent end(green.context());
  start.record(stream);
  end.record(stream);
  // Stream::record makes its event in the stream's context too.
  const cubind::Event recorded = stream.record();
  Stream other(dev());
  other.wait(end);
  other.wait(stream);
  other.sync();
  EXPECT_TRUE(end.query());
  EXPECT_TRUE(recorded.query());
  EXPECT_GE((end - start).count(), 0.0f);
}

TEST_F(GreenContextGpuTest, StreamsAreNonBlockingWithCheckedPriorities) {
  const SmResource all = SmResource::of(dev());
  GreenContext green(dev(), all.split({}).groups);
  std::string message = message_of<std::invalid_argument>([&] { green.create_stream(StreamOptions{false, {}}); });
  EXPECT_NE(message.find("non_blocking is false"), std::string::npos) << message;

  int least = 0;
  int greatest = 0;
  {
    cubind::ContextGuard guard(green.context());
    cubind::detail::check(cubind::raw::cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
  }
  Stream urgent = green.create_stream(StreamOptions{true, greatest});
  EXPECT_EQ(urgent.priority(), greatest);
  message = message_of<std::out_of_range>([&] { green.create_stream(StreamOptions{true, least + 1}); });
  EXPECT_NE(message.find("priority " + std::to_string(least + 1)), std::string::npos) << message;
}

TEST_F(GreenContextGpuTest, MovesLeaveANullOwner) {
  const SmResource all = SmResource::of(dev());
  GreenContext first(dev(), all.split({}).groups);
  const CUgreenCtx handle = first.handle();
  GreenContext second(std::move(first));
  EXPECT_EQ(first.handle(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(second.handle(), handle);
  const std::string message = message_of<std::logic_error>([&] { first.context(); });
  EXPECT_NE(message.find("cubind::GreenContext::context: this GreenContext is null"), std::string::npos) << message;
  GreenContext third(dev(), all.split({}).groups);
  third = std::move(second);
  EXPECT_EQ(third.handle(), handle);
}

}  // namespace

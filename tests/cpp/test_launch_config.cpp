// LaunchConfig marshalling and the argument checks of launch(), against
// synthetic parameter layouts: nothing here needs a driver.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "cubind/launch.hpp"

namespace {

using cubind::Dim3;
using cubind::KernelParam;
using cubind::LaunchConfig;
using cubind::check_kernel_arguments;
using cubind::NativeLaunchConfig;
using cubind::render_launch_config;

CUstream fake_stream() { return reinterpret_cast<CUstream>(std::uintptr_t{0x1234}); }

std::string message_of(const LaunchConfig& config) {
  NativeLaunchConfig native;
  try {
    render_launch_config(config, nullptr, native);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no exception";
}

TEST(LaunchConfigRender, PlainConfigFillsEveryFieldAndNoAttributes) {
  LaunchConfig config;
  config.grid = Dim3(40, 2, 3);
  config.block = Dim3(128, 2);
  config.shared_memory_bytes = 4096;
  NativeLaunchConfig native;
  render_launch_config(config, fake_stream(), native);
  const CUlaunchConfig& c = native.config;
  EXPECT_EQ(c.gridDimX, 40u);
  EXPECT_EQ(c.gridDimY, 2u);
  EXPECT_EQ(c.gridDimZ, 3u);
  EXPECT_EQ(c.blockDimX, 128u);
  EXPECT_EQ(c.blockDimY, 2u);
  EXPECT_EQ(c.blockDimZ, 1u);
  EXPECT_EQ(c.sharedMemBytes, 4096u);
  EXPECT_EQ(c.hStream, fake_stream());
  EXPECT_EQ(c.numAttrs, 0u);
  EXPECT_EQ(c.attrs, native.attributes);
}

TEST(LaunchConfigRender, DefaultDimensionsAreOne) {
  LaunchConfig config;
  NativeLaunchConfig native;
  render_launch_config(config, nullptr, native);
  EXPECT_EQ(native.config.gridDimX * native.config.gridDimY * native.config.gridDimZ, 1u);
  EXPECT_EQ(native.config.blockDimX * native.config.blockDimY * native.config.blockDimZ, 1u);
  EXPECT_EQ(native.config.hStream, nullptr);
}

TEST(LaunchConfigRender, BracedIntegersConvertToDim3) {
  const LaunchConfig config{{1024}, {256}};
  EXPECT_EQ(config.grid.x, 1024u);
  EXPECT_EQ(config.grid.y, 1u);
  EXPECT_EQ(config.block.x, 256u);
  EXPECT_EQ(config.block.z, 1u);
}

TEST(LaunchConfigRender, ClusterBecomesAClusterDimensionAttribute) {
  LaunchConfig config;
  config.grid = Dim3(8, 4);
  config.block = 128;
  config.cluster = Dim3(2, 2);
  NativeLaunchConfig native;
  render_launch_config(config, nullptr, native);
  ASSERT_EQ(native.config.numAttrs, 1u);
  const CUlaunchAttribute& attribute = native.config.attrs[0];
  EXPECT_EQ(attribute.id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(attribute.value.clusterDim.x, 2u);
  EXPECT_EQ(attribute.value.clusterDim.y, 2u);
  EXPECT_EQ(attribute.value.clusterDim.z, 1u);
}

TEST(LaunchConfigRender, CooperativeBecomesACooperativeAttribute) {
  LaunchConfig config;
  config.cooperative = true;
  NativeLaunchConfig native;
  render_launch_config(config, nullptr, native);
  ASSERT_EQ(native.config.numAttrs, 1u);
  EXPECT_EQ(native.config.attrs[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
  EXPECT_EQ(native.config.attrs[0].value.cooperative, 1);
}

TEST(LaunchConfigRender, ClusterAndCooperativeTogetherGiveTwoAttributes) {
  LaunchConfig config;
  config.grid = 4;
  config.cluster = Dim3(2);
  config.cooperative = true;
  NativeLaunchConfig native;
  render_launch_config(config, nullptr, native);
  ASSERT_EQ(native.config.numAttrs, 2u);
  EXPECT_EQ(native.config.attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(native.config.attrs[1].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
}

TEST(LaunchConfigRender, RenderingTwiceIntoOneNativeConfigLeavesNoStaleAttributes) {
  NativeLaunchConfig native;
  LaunchConfig with_cluster;
  with_cluster.grid = 2;
  with_cluster.cluster = Dim3(2);
  render_launch_config(with_cluster, nullptr, native);
  render_launch_config(LaunchConfig{}, nullptr, native);
  EXPECT_EQ(native.config.numAttrs, 0u);
}

TEST(LaunchConfigRender, ZeroDimensionsAreRejectedNamingTheField) {
  LaunchConfig config;
  config.grid = Dim3(4, 0);
  EXPECT_EQ(message_of(config), "LaunchConfig::grid is (4, 0, 1): every dimension must be at least 1");
  config.grid = 1;
  config.block = Dim3(32, 1, 0);
  EXPECT_EQ(message_of(config), "LaunchConfig::block is (32, 1, 0): every dimension must be at least 1");
  config.block = 32;
  config.cluster = Dim3(0);
  EXPECT_EQ(message_of(config), "LaunchConfig::cluster is (0, 1, 1): every dimension must be at least 1");
}

TEST(LaunchConfigRender, GridNotAMultipleOfTheClusterIsRejected) {
  LaunchConfig config;
  config.grid = Dim3(6, 3);
  config.cluster = Dim3(4);
  EXPECT_EQ(message_of(config),
            "LaunchConfig::grid (6, 3, 1) is not a multiple of cluster (4, 1, 1) in every dimension");
}

TEST(LaunchConfigRender, SharedMemoryBeyondWhatTheDriverTakesIsRejected) {
  LaunchConfig config;
  config.shared_memory_bytes = UINT_MAX;
  EXPECT_EQ(message_of(config), "no exception");
  if (sizeof(std::size_t) > sizeof(unsigned int)) {
    config.shared_memory_bytes = std::size_t{UINT_MAX} + 1;
    EXPECT_NE(message_of(config).find("LaunchConfig::shared_memory_bytes is 4294967296"), std::string::npos);
  }
}

// A kernel (float a, const float* x, float* y, unsigned n) as the driver lays it out.
const std::vector<KernelParam> kSaxpyParams = {{0, 4}, {8, 8}, {16, 8}, {24, 4}};

std::string argument_error(const std::vector<std::size_t>& sizes) {
  try {
    check_kernel_arguments("saxpy", kSaxpyParams.data(), kSaxpyParams.size(), sizes.data(), sizes.size());
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no exception";
}

TEST(KernelArgumentCheck, MatchingSizesPass) { EXPECT_EQ(argument_error({4, 8, 8, 4}), "no exception"); }

TEST(KernelArgumentCheck, TooFewArgumentsNameBothCounts) {
  EXPECT_EQ(argument_error({4, 8, 8}), "cubind::launch: kernel 'saxpy' takes 4 arguments, 3 given");
}

TEST(KernelArgumentCheck, TooManyArgumentsNameBothCounts) {
  EXPECT_EQ(argument_error({4, 8, 8, 4, 4}), "cubind::launch: kernel 'saxpy' takes 4 arguments, 5 given");
}

TEST(KernelArgumentCheck, WrongSizeNamesTheIndexAndBothSizes) {
  // A double where the kernel takes a float: the commonest slip.
  EXPECT_EQ(argument_error({8, 8, 8, 4}),
            "cubind::launch: argument 0 of kernel 'saxpy' must be 4 bytes, 8 bytes given");
  EXPECT_EQ(argument_error({4, 8, 8, 2}),
            "cubind::launch: argument 3 of kernel 'saxpy' must be 4 bytes, 2 bytes given");
}

TEST(KernelArgumentCheck, KernelWithoutParametersTakesNoArguments) {
  EXPECT_NO_THROW(check_kernel_arguments("empty", nullptr, 0, nullptr, 0));
  const std::size_t one = 4;
  try {
    check_kernel_arguments("empty", nullptr, 0, &one, 1);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "cubind::launch: kernel 'empty' takes 0 arguments, 1 given");
  }
}

TEST(KernelArgumentCheck, SingularParameterCountReadsNaturally) {
  const KernelParam one{0, 8};
  try {
    check_kernel_arguments("single", &one, 1, nullptr, 0);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "cubind::launch: kernel 'single' takes 1 argument, 0 given");
  }
}

TEST(KernelMove, NullKernelThrowsLogicErrorNamingTheMethod) {
  const cubind::Kernel kernel;
  try {
    kernel.param_info();
    FAIL() << "no exception";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(), "cubind::Kernel::param_info: this Kernel is null (moved from, or default-constructed)");
  }
  EXPECT_THROW(kernel.handle(), std::logic_error);
  EXPECT_THROW(kernel.name(), std::logic_error);
  EXPECT_THROW(kernel.max_potential_block_size(), std::logic_error);
}

TEST(KernelMove, LaunchingANullKernelIsALogicErrorBeforeAnyDriverCall) {
  const cubind::Kernel kernel;
  const float a = 1.0f;
  EXPECT_THROW(cubind::launch(cubind::StreamRef(CUstream{}), LaunchConfig{}, kernel, a), std::logic_error);
}

TEST(LaunchStream, StreamOfANullStreamIsRejectedBeforeAnyDriverCall) {
  const cubind::Kernel kernel;
  try {
    cubind::launch(cubind::StreamRef(cubind::detail::invalid_stream()), LaunchConfig{}, kernel);
    FAIL() << "no exception";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("cubind::launch"), std::string::npos) << error.what();
  }
}

TEST(LaunchRendered, NullStreamOrKernelIsALogicErrorBeforeAnyDriverCall) {
  cubind::NativeLaunchConfig rendered;
  cubind::render_launch_config(LaunchConfig{}, nullptr, rendered);
  const cubind::Kernel kernel;
  EXPECT_THROW(cubind::launch_rendered(cubind::StreamRef(cubind::detail::invalid_stream()), rendered, kernel,
                                               nullptr),
               std::logic_error);
  EXPECT_THROW(cubind::launch_rendered(cubind::StreamRef(CUstream{}), rendered, kernel, nullptr),
               std::logic_error);
}

}  // namespace

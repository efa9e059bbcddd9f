// How a failed call reads: the API function, the error's name, its number and
// its description, whether or not a driver is there to name it.
#include <gtest/gtest.h>

#include <string>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/raw/nvjitlink.hpp"
#include "cubind/raw/nvrtc.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::CudaError;

TEST(ErrorFormattingTest, CarriesEveryPartAndJoinsThemInTheMessage) {
  const CudaError error(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocFromPoolAsync", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory");
  EXPECT_EQ(error.status(), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(error.api_function(), "cuMemAllocFromPoolAsync");
  EXPECT_EQ(error.error_name(), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(error.error_string(), "out of memory");
  EXPECT_STREQ(error.what(), "cuMemAllocFromPoolAsync failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
}

TEST(ErrorFormattingTest, CheckThrowsOnlyOnFailure) {
  EXPECT_NO_THROW(cubind::detail::check(CUDA_SUCCESS, "cuStreamQuery"));
  const std::string message =
      cubind_test::message_of<CudaError>([] { cubind::detail::check(CUDA_ERROR_INVALID_VALUE, "cuStreamQuery"); });
  EXPECT_EQ(message.rfind("cuStreamQuery failed: ", 0), 0u) << message;
  EXPECT_NE(message.find("(1)"), std::string::npos) << message;
}

TEST(ErrorFormattingTest, NamesAKnownCodeWithOrWithoutADriver) {
  try {
    cubind::detail::check(CUDA_ERROR_NOT_READY, "cuEventQuery");
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.status(), CUDA_ERROR_NOT_READY);
    EXPECT_EQ(e.api_function(), "cuEventQuery");
    // The driver names it; without one the number still identifies it.
    EXPECT_TRUE(e.error_name() == "CUDA_ERROR_NOT_READY" || e.error_name() == "CUresult 600") << e.error_name();
  }
}

TEST(ErrorFormattingTest, AnUnknownCodeIsNamedByItsNumber) {
  const auto unknown = static_cast<CUresult>(987654);
  try {
    cubind::detail::check(unknown, "cuFutureCall");
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.error_name(), "CUresult 987654");
    EXPECT_NE(std::string(e.what()).find("cuFutureCall failed: CUresult 987654 (987654)"), std::string::npos)
        << e.what();
  }
}

TEST(ErrorFormatting, NvJitLinkResultNamesComeFromTheHeader) {
  EXPECT_EQ(cubind::detail::nvjitlink_result_name(NVJITLINK_SUCCESS), "NVJITLINK_SUCCESS");
  EXPECT_EQ(cubind::detail::nvjitlink_result_name(NVJITLINK_ERROR_PTX_COMPILE), "NVJITLINK_ERROR_PTX_COMPILE");
  EXPECT_EQ(cubind::detail::nvjitlink_result_name(static_cast<nvJitLinkResult>(4242)), "nvJitLinkResult 4242");
  EXPECT_STREQ(cubind::raw::nvrtc_status_name(NVRTC_ERROR_COMPILATION), "NVRTC_ERROR_COMPILATION");
  EXPECT_EQ(cubind::raw::driver_status_name(static_cast<CUresult>(987654)), nullptr);
}

}  // namespace

#include "cubind/error.hpp"

#include "cubind/raw/driver.hpp"
#include "cubind/raw/nvjitlink.hpp"
#include "cubind/raw/nvrtc.hpp"

namespace cubind {

namespace {
std::string format(const std::string& api_function, const std::string& name, int status, const std::string& text) {
  return api_function + " failed: " + name + " (" + std::to_string(status) + "): " + text;
}
}  // namespace

CudaError::CudaError(int status, std::string api_function, std::string error_name, std::string error_string)
    : std::runtime_error(format(api_function, error_name, status, error_string)),
      status_(status),
      api_function_(std::move(api_function)),
      error_name_(std::move(error_name)),
      error_string_(std::move(error_string)) {}

CudaError::CudaError(int status, std::string api_function, std::string error_name, std::string error_string,
                     const std::string& subject)
    : std::runtime_error(subject + ": " + format(api_function, error_name, status, error_string)),
      status_(status),
      api_function_(std::move(api_function)),
      error_name_(std::move(error_name)),
      error_string_(std::move(error_string)) {}

namespace detail {

std::string driver_error_name(CUresult status) {
  const char* name = nullptr;
  try {
    if (raw::cuGetErrorName(status, &name) == CUDA_SUCCESS && name != nullptr) return name;
  } catch (const LoaderError&) {
    // No driver to ask: the number alone still identifies the error.
  }
  return "CUresult " + std::to_string(static_cast<int>(status));
}

std::string driver_error_string(CUresult status) {
  const char* text = nullptr;
  try {
    if (raw::cuGetErrorString(status, &text) == CUDA_SUCCESS && text != nullptr) return text;
  } catch (const LoaderError&) {
  }
  return "unknown error";
}

std::string nvjitlink_result_name(nvJitLinkResult status) {
  if (const char* name = raw::nvjitlink_status_name(status)) return name;
  return "nvJitLinkResult " + std::to_string(static_cast<int>(status));
}

void throw_driver_error(CUresult status, const char* api_function) {
  throw CudaError(status, api_function, driver_error_name(status), driver_error_string(status));
}

void throw_driver_error(CUresult status, const char* api_function, const std::string& subject) {
  throw CudaError(status, api_function, driver_error_name(status), driver_error_string(status), subject);
}

std::string nvrtc_result_name(nvrtcResult status) {
  const char* text = nullptr;
  try {
    text = raw::nvrtcGetErrorString(status);
  } catch (const LoaderError&) {
  }
  return text != nullptr ? text : "nvrtcResult " + std::to_string(static_cast<int>(status));
}

void throw_nvrtc_error(nvrtcResult status, const char* api_function) {
  const std::string name = nvrtc_result_name(status);
  throw NvrtcError(status, api_function, name, name);
}

void throw_nvjitlink_error(nvJitLinkResult status, const char* api_function) {
  const std::string name = nvjitlink_result_name(status);
  throw NvJitLinkError(status, api_function, name, "nvJitLink returned " + name);
}

}  // namespace detail
}  // namespace cubind

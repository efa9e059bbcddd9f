// The one exception family of the core. Every failed CUDA call becomes a
// CudaError (driver), NvrtcError or NvJitLinkError carrying the status, the
// API function's name, the error's name and its description. Bad arguments
// raise the standard std::invalid_argument / std::out_of_range /
// std::logic_error with a message naming what was wrong and the value.
#pragma once

#include <cuda.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <stdexcept>
#include <string>

namespace cubind {

class CudaError : public std::runtime_error {
 public:
  CudaError(int status, std::string api_function, std::string error_name, std::string error_string);
  // The same, the message starting with what the call was about
  // ("Process(pid=42).lock: cuCheckpointProcessLock failed: ...").
  CudaError(int status, std::string api_function, std::string error_name, std::string error_string,
            const std::string& subject);

  int status() const noexcept { return status_; }
  const std::string& api_function() const noexcept { return api_function_; }
  const std::string& error_name() const noexcept { return error_name_; }
  const std::string& error_string() const noexcept { return error_string_; }

 private:
  int status_;
  std::string api_function_;
  std::string error_name_;
  std::string error_string_;
};

// A failed NVRTC call (not a failed compile: that is a result with its log).
class NvrtcError : public CudaError {
 public:
  using CudaError::CudaError;
};

// A failed nvJitLink call (not a failed link: that is a result with its log).
class NvJitLinkError : public CudaError {
 public:
  using CudaError::CudaError;
};

namespace detail {

// Throw on failure; the message is built only then.
inline void check(CUresult status, const char* api_function);
inline void check(nvrtcResult status, const char* api_function);
inline void check(nvJitLinkResult status, const char* api_function);

[[noreturn]] void throw_driver_error(CUresult status, const char* api_function);
// The same, the message starting with `subject` (the object and operation).
[[noreturn]] void throw_driver_error(CUresult status, const char* api_function, const std::string& subject);
[[noreturn]] void throw_nvrtc_error(nvrtcResult status, const char* api_function);
[[noreturn]] void throw_nvjitlink_error(nvJitLinkResult status, const char* api_function);

// "CUDA_ERROR_OUT_OF_MEMORY", or "CUresult 12345" for a code the driver does
// not know (a newer driver's, or no driver at all).
std::string driver_error_name(CUresult status);
std::string driver_error_string(CUresult status);
// nvJitLink has no function that names its results: the names of nvJitLink.h.
std::string nvjitlink_result_name(nvJitLinkResult status);
// NVRTC's text for `status` ("NVRTC_ERROR_COMPILATION"), or "nvrtcResult <n>"
// where NVRTC cannot be loaded or has none.
std::string nvrtc_result_name(nvrtcResult status);

inline void check(CUresult status, const char* api_function) {
  if (status != CUDA_SUCCESS) throw_driver_error(status, api_function);
}
inline void check(nvrtcResult status, const char* api_function) {
  if (status != NVRTC_SUCCESS) throw_nvrtc_error(status, api_function);
}
inline void check(nvJitLinkResult status, const char* api_function) {
  if (status != NVJITLINK_SUCCESS) throw_nvjitlink_error(status, api_function);
}

}  // namespace detail
}  // namespace cubind

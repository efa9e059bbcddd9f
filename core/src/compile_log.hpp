// Private: the logs of NVRTC and nvJitLink as text. Not installed.
#pragma once

#include <string>

namespace cubind::detail {

// NVRTC and nvJitLink size their logs with the terminating NUL included.
inline std::string log_text(std::string buffer) {
  while (!buffer.empty() && buffer.back() == '\0') buffer.pop_back();
  return buffer;
}

}  // namespace cubind::detail

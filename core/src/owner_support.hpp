// Private helpers shared by the compile-and-launch owners (Program, Linker,
// ObjectCode, Kernel). Not installed: nothing public may include it.
#pragma once

#include <stdexcept>
#include <string>

namespace cubind::detail {

// A moved-from owner holds nothing; using it is a programming error, and the
// message names the class and method so the call can be found. The wording
// matches the runtime objects' ("this Stream is null (...)").
[[noreturn]] inline void throw_null_owner(const char* class_name, const char* method, const char* how) {
  throw std::logic_error(std::string("cubind::") + class_name + "::" + method + ": this " + class_name + " is null (" +
                         how + ")");
}

// NVRTC and nvJitLink size their logs with the terminating NUL included.
inline std::string log_text(std::string buffer) {
  while (!buffer.empty() && buffer.back() == '\0') buffer.pop_back();
  return buffer;
}

}  // namespace cubind::detail

// Private helpers shared by the compile-and-launch owners (Program, Linker,
// ObjectCode, Kernel). Not installed: nothing public may include it.
#pragma once

#include <stdexcept>
#include <string>

namespace cubind::detail {

// A null owner (moved from, released, closed) holds nothing; using it is a
// programming error. The message reads "<where>: <subject> is null (<how>)",
// naming the call so it can be found. Out of line and cold: every check that
// calls it sits on a hot path.
[[noreturn, gnu::cold]] void throw_null(const std::string& where, const char* subject, const char* how);

// The same for an owner's own method: "cubind::Program::compile: this Program is null (moved from)".
[[noreturn]] inline void throw_null_owner(const char* class_name, const char* method, const char* how) {
  throw_null(std::string("cubind::") + class_name + "::" + method, (std::string("this ") + class_name).c_str(), how);
}

// NVRTC and nvJitLink size their logs with the terminating NUL included.
inline std::string log_text(std::string buffer) {
  while (!buffer.empty() && buffer.back() == '\0') buffer.pop_back();
  return buffer;
}

}  // namespace cubind::detail

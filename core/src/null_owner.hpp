// Private: the std::logic_error every owner (Program, Linker, ObjectCode,
// Kernel, Stream, Event, Graph, the memory resources, Buffer) raises when
// used while null. Not installed: nothing public may include it.
#pragma once

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

// A runtime owner used while null: "<where>: this <class_name> is null (moved from, released or closed)".
[[noreturn]] inline void throw_null(const char* where, const char* class_name) {
  throw_null(where, (std::string("this ") + class_name).c_str(), "moved from, released or closed");
}

}  // namespace cubind::detail

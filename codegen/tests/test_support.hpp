// Shared by the generator's test suites: parsing snippets and small IR builders.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/frontend.hpp"
#include "codegen/ir.hpp"

namespace codegen_test {

inline codegen::FrontendOptions frontend_options(std::vector<std::string> include_dirs = {}) {
  codegen::FrontendOptions options;
  options.include_dirs = std::move(include_dirs);
  options.resource_dir = CUBIND_CLANG_RESOURCE_DIR;
  return options;
}

// A library made of one snippet header. Driver-like sources know cuda.h's
// per-thread wrapper macros.
inline codegen::LibraryDescriptor snippet_source(const std::string& file, bool driver_like = true) {
  codegen::LibraryDescriptor source;
  source.name = driver_like ? "driver" : "nvjitlink";
  source.headers = {file};
  source.owned_files = {file};
  source.soname = driver_like ? "libcuda.so.1" : "libnvJitLink.so.13";
  if (driver_like) source.per_thread_macros = {"__CUDA_API_PTDS", "__CUDA_API_PTSZ"};
  return source;
}

inline codegen::Library parse_c(const std::string& code, const std::string& file = "snippet.h",
                                bool driver_like = true) {
  return codegen::parse_snippet(code, file, snippet_source(file, driver_like), frontend_options());
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline codegen::Type builtin(const std::string& spelling) {
  codegen::Type t;
  t.kind = codegen::Type::Kind::Builtin;
  t.spelling = spelling;
  t.canonical = spelling;
  return t;
}

inline codegen::Type named(codegen::Type::Kind kind, const std::string& spelling, const std::string& record = "") {
  codegen::Type t;
  t.kind = kind;
  t.spelling = spelling;
  t.canonical = spelling;
  t.record = record;
  return t;
}

// One level of '*' on `pointee` (spelled), e.g. pointer("CUcontext", Handle).
inline codegen::Type pointer(const std::string& pointee, codegen::Type::Kind pointee_kind, bool pointee_const = false,
                             int depth = 1) {
  codegen::Type t;
  t.kind = codegen::Type::Kind::Pointer;
  t.pointee = pointee;
  t.pointee_kind = pointee_kind;
  t.pointee_const = pointee_const;
  t.pointer_depth = depth;
  t.spelling = (pointee_const ? "const " : "") + pointee + " " + std::string(depth, '*');
  t.canonical = t.spelling;
  return t;
}

inline codegen::Param param(const std::string& name, codegen::Type type) {
  codegen::Param p;
  p.name = name;
  p.type = std::move(type);
  return p;
}

}  // namespace codegen_test

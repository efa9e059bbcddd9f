// The front end: clang LibTooling over the CUDA headers, into the plain IR.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir.hpp"

namespace codegen {

// What to parse for one library.
struct LibrarySource {
  std::string name;                        // driver
  std::vector<std::string> headers;        // included, in order, by the parsed translation unit
  std::vector<std::string> owned_files;    // base names whose declarations belong to the library
  std::vector<std::string> extra_headers;  // included after `headers`, declarations not owned (cudaTypedefs.h)
  std::string soname;                      // libcuda.so.1
  // Identifiers that select per-thread default stream variants when defined,
  // e.g. __CUDA_API_PTDS; a macro `#define X PTDS(Y)` marks X as having one.
  std::vector<std::string> per_thread_macros;
  // Typedefs of other libraries' headers that the owned declarations use and
  // the bindings name (EGLImageKHR, GLenum, VdpDevice): recorded as if owned.
  std::vector<std::string> foreign_types;
};

struct FrontendOptions {
  std::vector<std::string> include_dirs;   // where the headers are
  std::string resource_dir;                // clang's builtin headers (stddef.h)
  std::vector<std::string> extra_args;     // more compiler arguments, for tests
};

// The four libraries cubind binds, as found in the CUDA 13 headers.
std::vector<LibrarySource> cuda_libraries();

// Parses one library. Throws std::runtime_error with the reason (missing
// header, compile errors) and never returns a partial IR.
Library parse_library(const LibrarySource& source, const FrontendOptions& options);

// Parses a snippet held in memory as if it were the header `file_name`
// (tests of the front end).
Library parse_snippet(const std::string& code, const std::string& file_name,
                      const LibrarySource& source, const FrontendOptions& options);

}  // namespace codegen

// The front end: clang LibTooling over the CUDA headers, into the plain IR.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir.hpp"

namespace codegen {

struct FrontendOptions {
  std::vector<std::string> include_dirs;   // where the headers are
  std::string resource_dir;                // clang's builtin headers (stddef.h)
  std::vector<std::string> extra_args;     // more compiler arguments, for tests
};

// Parses one library, as its descriptor (the annotation file's `library:`
// block) says: the headers to include, the files it owns, the per-thread
// macros and foreign types. The result carries the descriptor. Throws
// std::runtime_error with the reason (missing header, compile errors) and
// never returns a partial IR.
Library parse_library(const LibraryDescriptor& source, const FrontendOptions& options);

// Parses a snippet held in memory as if it were the header `file_name`
// (tests of the front end).
Library parse_snippet(const std::string& code, const std::string& file_name,
                      const LibraryDescriptor& source, const FrontendOptions& options);

}  // namespace codegen

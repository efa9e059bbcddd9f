// Emitters: one per kind of output, each a pure function of the IR.
#pragma once

#include <string>
#include <vector>

#include "codegen/ir.hpp"

namespace codegen {

struct GeneratedFile {
  std::string path;     // relative to the output root (bindings/)
  std::string content;
};

struct EmitOptions {
  std::string generator_version;  // stamped into every file
};

// "13.0" from 13000.
std::string cuda_version_string(int version);

// The first lines of every generated file, in the comment syntax given.
std::string stamp(const Library& library, const EmitOptions& options, const std::string& comment);

// python/cubind/bindings/cy<library>.pxd: the raw layer for cimport.
GeneratedFile emit_pxd(const Library& library, const EmitOptions& options);

// include/cubind/raw/<library>.hpp and src/<library>.cpp: the wrappers and
// their table of entry points, compiled into libcubind_raw.so.
GeneratedFile emit_loader_header(const Library& library, const EmitOptions& options);
GeneratedFile emit_loader_source(const Library& library, const EmitOptions& options);

// python/cubind/bindings/_version.py: the CUDA version the bindings were generated from.
GeneratedFile emit_python_version(const std::vector<Library>& libraries, const EmitOptions& options);

// python/cubind/_libraries.pxi: for cubind/_libraries.pyx, the status and
// load functions of every library, and NAMES, so a new library needs no edit
// of the hand-written module.
GeneratedFile emit_python_libraries(const std::vector<Library>& libraries, const EmitOptions& options);

// The coverage table: per library, functions declared, bound and skipped.
std::string coverage_table(const std::vector<Library>& libraries);

}  // namespace codegen

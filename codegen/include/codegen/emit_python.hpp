// The Python layer: cubind/bindings/<library>.pyx and its .pyi stub.
#pragma once

#include <vector>

#include "codegen/emitters.hpp"
#include "codegen/ir.hpp"

namespace codegen {

// Throws std::runtime_error naming the function and parameter when a
// classified parameter has no Python form.
std::vector<GeneratedFile> emit_python_module(const Library& library, const EmitOptions& options);

}  // namespace codegen

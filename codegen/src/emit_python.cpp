// The Python layer: cubind/bindings/<library>.pyx and .pyi, following the
// calling conventions of NVIDIA's cuda.bindings module by module.
//
// Every parameter of every function was classified (annotations.cpp); the
// call plan (python/call_plan) turns each classification into a role (how the
// Python argument is converted, or how the output is returned). From the same
// plans the .pyx writer renders Cython functions (convert, call the raw layer
// without the GIL, release what was allocated, return (status, *outputs) for
// driver, runtime and NVRTC or the outputs alone, raising on failure, for
// nvJitLink, whose cuda.bindings module works that way) and the .pyi writer
// their stubs. python/type_model says how each C type looks in Python.
#include "codegen/emit_python.hpp"

#include <stdexcept>

#include "python/call_plan.hpp"
#include "python/conventions.hpp"
#include "python/pyi_writer.hpp"
#include "python/pyx_writer.hpp"

namespace codegen {

std::vector<GeneratedFile> emit_python_module(const Library& header_library, const EmitOptions& options) {
  // The enums the Python module builds from groups of constants join the header's.
  Library library = header_library;
  for (Enum& e : python::Conventions::define_enums(header_library)) library.enums.push_back(std::move(e));
  const python::ModulePlan plan(library);
  python::PyxWriter pyx(plan, options);
  const std::string module = pyx.run();
  if (!pyx.errors().empty()) {
    std::string msg = library.name + ": " + std::to_string(pyx.errors().size()) + " function(s) or field(s) have no Python form:";
    for (const auto& e : pyx.errors()) msg += "\n  " + e;
    throw std::runtime_error(msg);
  }
  return {{"python/cubind/bindings/" + library.name + ".pyx", module},
          {"python/cubind/bindings/" + library.name + ".pyi", python::PyiWriter(plan, options).run()}};
}

}  // namespace codegen

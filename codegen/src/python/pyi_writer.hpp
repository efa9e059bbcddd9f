// cubind/bindings/<library>.pyi: the stub of a .pyx module, rendered from the
// same module plan (signatures, outputs, field annotations) with the header
// documentation. Private to the Python emitter.
#pragma once

#include <sstream>
#include <string>

#include "codegen/emitters.hpp"
#include "python/call_plan.hpp"

namespace codegen::python {

class PyiWriter {
 public:
  PyiWriter(const ModulePlan& plan, const EmitOptions& options);

  std::string run();

 private:
  void header();
  void constants();
  void enums();
  void status();
  void handles();
  void values();
  void structs();
  void function(const FunctionPlan& fp, const std::string& public_name);
  std::string return_annotation(const FunctionPlan& fp) const;
  void module_functions();
  void aliases();

  const ModulePlan& plan_;
  const Library& lib_;
  const Model& m_;
  const EmitOptions& options_;
  std::ostringstream o_;
};

}  // namespace codegen::python

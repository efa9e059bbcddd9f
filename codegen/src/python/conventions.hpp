// What differs between the Python modules of the libraries: cuda.bindings'
// driver, runtime and nvrtc modules return (status, *outputs) and keep the C
// names; its nvjitlink module raises on failure and names functions and enums
// the Python way. Private to the Python emitter.
#pragma once

#include <string>

#include "codegen/ir.hpp"

namespace codegen::python {

class Conventions {
 public:
  explicit Conventions(const Library& lib);

  // The module's docstring names the library: "the CUDA Driver API (cuda.h)".
  const std::string& title() const { return lib_.python.title; }

  // Functions raise error_class() (nvJitLinkError) and return their outputs alone.
  bool raising() const { return raising_; }
  const std::string& error_class() const { return lib_.python.error_class; }

  // Python-visible name of a function: nvJitLinkAddData -> add_data when raising.
  std::string function_name(const std::string& c_name) const;

  // Python name of a function parameter, as cuda.bindings spells it: its
  // replacements for the builtins a parameter would shadow (type -> typename,
  // len -> length, ...), and snake_case where functions are (numOptions ->
  // num_options when raising). Every reference to a parameter goes through it.
  std::string parameter_name(const std::string& c_name) const;

  // Python-visible name of an enum: nvJitLinkInputType -> InputType when raising.
  std::string enum_name(const std::string& c_name) const;

  // The prefix an enum's members are also reachable without (NVJITLINK_INPUT_), or "".
  std::string member_prefix(const Enum& e) const;

  // Header documentation as the stub shows it: enum names as Python spells them.
  std::string stub_text(const std::string& doc) const;

 private:
  std::string drop_prefix(const std::string& c_name) const;
  static std::string snake_case(const std::string& name);

  const Library& lib_;
  bool raising_;
};

}  // namespace codegen::python

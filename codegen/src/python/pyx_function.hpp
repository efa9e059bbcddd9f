// One function of a .pyx module, rendered from its call plan: convert the
// arguments, call the raw layer without the GIL, release what was allocated,
// return (status, *outputs) or the outputs alone. Private to the Python emitter.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "python/call_plan.hpp"
#include "python/type_model.hpp"

namespace codegen::python {

// The docstring of a function below its signature line: the header's text
// (parameters included), what the call returns, its C function and any
// deprecation. The .pyx docstring and the .pyi stub both carry it, so an
// editor's hover shows what __doc__ and the documentation site show.
std::string function_doc(const Model& m, const FunctionPlan& plan, const std::string& public_name);

// The module-level _support.TypedTable of an attribute enum's value types.
inline std::string typed_table(const std::string& attribute_enum) { return "_TYPES_" + attribute_enum; }

class PyxFunction {
 public:
  // status_type: the C spelling of the module's status type (CUresult).
  PyxFunction(const Model& m, const FunctionPlan& plan, const std::string& public_name, const std::string& status_type);

  // The function's definition; throws std::runtime_error when a parameter's
  // annotation names what the function lacks.
  std::string render();

 private:
  void convert(const Plan& pl);
  void scalar(const Plan& pl);
  std::string c_value(const std::string& c_name, bool after_inputs) const;
  void by_value(const Plan& pl);
  void function_pointer(const Plan& pl);
  void struct_in(const Plan& pl);
  void typed_in(const Plan& pl);
  void string(const Plan& pl);
  void address(const Plan& pl);
  void address_size_checks(const Plan& pl);
  void kernel_params(const Plan& pl);
  void callback(const Plan& pl);
  void array_in(const Plan& pl);
  void in_pointer(const Plan& pl);
  void in_out(const Plan& pl);
  void out_value(const Plan& pl);
  void struct_fields(const Plan& pl);
  void struct_items(const Plan& pl);
  void out_buffer(const Plan& pl);
  void out_sized(const Plan& pl);
  void out_array(const Plan& pl);
  void out_array_queried(const Plan& pl);
  void out_array_ref(const Plan& pl);
  void out_typed(const Plan& pl);
  void out_typed_array(const Plan& pl);

  void callback_setup(std::ostringstream& prelude, std::ostringstream& inner) const;
  void call(std::ostringstream& inner) const;
  bool struct_status() const;
  std::string call_target() const;
  // When a size query calls again with a buffer: the library said the buffer
  // was too small, or it succeeded without one (no_buffer, a Cython test),
  // having only set the count (nvmlDeviceGetTopologyNearestGpus).
  std::string asks_again(const std::string& no_buffer) const;
  std::string after_call(const std::string& pad) const;
  std::string check_call() const;
  // Frees what a failed call output anyway (Function::release_on_error).
  void release_on_error(std::ostringstream& inner) const;
  void returns(std::ostringstream& inner) const;
  // one_little: outs is one value that holds little (a number, an enum
  // member, a typed value), returned in the module's spare pair.
  void return_values(std::ostringstream& inner, const std::vector<std::string>& outs, bool one_little,
                     const std::string& pad) const;
  void add_out(std::string expr, bool little = false);
  std::string signature() const;
  std::string doc() const;

  // The call that reports an OutSized buffer's size, into `out`.
  std::string size_query(const Plan& pl, const std::string& out) const;
  // The C type a size function reports through its output (size_t, int).
  std::string size_type(const Plan& pl) const;
  // An inout size left at 0 takes the typed value's own size.
  void fill_default_size(const Plan& pl, const std::string& cn);
  // The byte size the caller gives for a typed value (dataSize), or "0".
  std::string size_hint(const Plan& pl) const;
  std::string typed_spec_of(const Plan& pl, const std::string& index) const;
  void typed_slot(const Plan& pl, const std::string& value);
  std::string cast_param(const Plan& pl) const;
  // A handle of a type the raw layer records (nvrtcProgram) must be one it made
  // and has not destroyed, or NULL: anything else raises before the call.
  void check_live(const Plan& pl, const std::string& handle_type, const std::string& cn);
  const Plan* plan_named(const std::string& c_name) const;

  const Model& m_;
  const FunctionPlan& plan_;
  const Function& f_;
  const std::string public_name_;
  const bool returns_status_;
  // Cython wants every cdef at the top of a function: locals gather first.
  std::ostringstream locals_, scalars_, body_, after_inputs_, cleanup_, init_refs_, writebacks_;
  std::vector<std::string> call_args_, out_exprs_;
  std::vector<bool> out_little_;  // out_exprs_[i] holds little (add_out)
  bool needs_try_ = false;
  // The output a caller's buffer replaces: absent from the result when given.
  const Plan* caller_buffer_ = nullptr;
  std::size_t caller_buffer_index_ = 0;
  const Plan* callback_ = nullptr;
  const Plan* queried_ = nullptr;  // the array of a two-call query
  std::string struct_query_;       // the repeated call of a struct's queried array (@ARGS@: the arguments)
};

}  // namespace codegen::python

// cubind/bindings/<library>.pyx: constants, enums, handle, value and struct
// classes, callback trampolines, functions and the sizeof table of one
// library, rendered from its module plan. Private to the Python emitter.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "codegen/emitters.hpp"
#include "python/call_plan.hpp"

namespace codegen::python {

class PyxWriter {
 public:
  PyxWriter(const ModulePlan& plan, const EmitOptions& options);

  std::string run();

  // Functions that have no Python form, each with the reason.
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  void header();
  void constants();
  void enums();
  void enum_table();
  void status();
  void error_subclasses();
  void handles();
  void values();
  void structs();
  void struct_class(const Model::StructClass& sc);
  // structs: numpy -- the class's ptr, from_ptr, from_data, from_buffer (and
  // for an array of structs its size, len() and indexing).
  void numpy_methods(const Model::StructClass& sc, bool array);
  // The module's DtypeTable: one spec function per struct class.
  void numpy_dtypes();
  // A field's NumPy format as a Python expression ("\"<u4\"", ("\"i1\"", (16,))).
  std::string numpy_format(const Field& f) const;

  // The field's property; false when it has no Python form. `hex`: printed in hex (an address).
  bool field(const std::string& c, const Field& f, const std::vector<const Field*>& siblings, bool& hex);
  // C member paths of the dim3 members a C++ default constructor sets to 1.
  void dim3_paths(const Record& r, const std::string& prefix, std::vector<std::string>& out) const;
  void field_accessors(const FieldPlan& fp, const Field& f, const std::string& p, std::ostringstream& g,
                       std::ostringstream& s) const;
  void shared_list_accessors(const FieldPlan& fp, const Field& f, const std::string& self_c,
                             std::ostringstream& g, std::ostringstream& s) const;
  void shared_list_setter(const Record& r, const std::string& c);
  bool counted_accessors(const FieldPlan& fp, const Field& f, const std::string& self_c,
                         const std::string& count_field, std::ostringstream& g, std::ostringstream& s) const;
  void callbacks();
  void trampoline(const std::string& name);
  void functions();
  void helpers();
  void sizes();
  void attribute_types();
  std::string typed_spec(const std::string& type) const;

  const ModulePlan& plan_;
  std::vector<std::string> member_aliases(const std::string& member) const;
  const Library& lib_;
  const Model& m_;
  const EmitOptions& options_;
  std::ostringstream o_, alias_lines_;
  // The struct class being written (structs: numpy): its name, dtype, and
  // whether it is an array of structs.
  bool numpy_ = false, array_ = false;
  std::string class_, dtype_;
  const Record* record_ = nullptr;
  std::vector<std::string> errors_;
};

}  // namespace codegen::python

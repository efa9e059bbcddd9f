#include "python/pyi_writer.hpp"

#include <cctype>

#include "codegen/emit_common.hpp"
#include "python/docs.hpp"
#include "python/pyx_function.hpp"

namespace codegen::python {

namespace {

const char* const kHandleInit =
    "    def __init__(self, init_value: int | Handle | None = 0, _ptr: int = 0) -> None: ...\n";

}  // namespace

PyiWriter::PyiWriter(const ModulePlan& plan, const EmitOptions& options)
    : plan_(plan), lib_(plan.lib), m_(plan.model), options_(options) {}

std::string PyiWriter::run() {
  header();
  constants();
  enums();
  status();
  handles();
  values();
  structs();
  module_functions();
  o_ << "def sizeof(objType: Any) -> int: ...\n";
  aliases();
  return o_.str();
}

void PyiWriter::header() {
  o_ << stamp(lib_, options_, "#");
  o_ << "from typing import Any, Callable, Optional, Sequence\n";
  o_ << "from cubind.bindings._support import Enum, Handle, Struct\n";
  for (const auto& [name, target] : lib_.python.reexports) {
    const auto dot = target.find('.');
    o_ << "from cubind.bindings." << target.substr(0, dot) << " import " << target.substr(dot + 1) << " as " << name
       << "\n";
  }
  o_ << "\n";
  o_ << "Buffer = Any  # an object exporting a contiguous buffer\n\n";
}

void PyiWriter::constants() {
  const Conventions& names = plan_.conventions;
  for (const Macro& mc : lib_.macros) {
    if (!names.exports_constant(mc.name)) continue;
    const std::string name = names.constant_name(mc.name);
    switch (mc.kind) {
      case Macro::Kind::Integer:
      case Macro::Kind::Pointer: o_ << name << ": int\n"; break;
      case Macro::Kind::Float: o_ << name << ": float\n"; break;
      case Macro::Kind::String: o_ << name << ": bytes\n"; break;
    }
  }
  o_ << "\n";
}

void PyiWriter::enums() {
  const Conventions& names = plan_.conventions;
  for (const Enum& e : lib_.enums) {
    if (e.name.rfind("anon_enum", 0) == 0) continue;
    const std::string py = names.enum_name(e.name);
    o_ << "class " << py << "(Enum):\n";
    if (!e.doc.empty()) o_ << docstring(names.stub_text(clean_doc(e.doc)), "    ");
    for (const auto& v : e.enumerators) {
      o_ << "    " << names.member_name(e, v) << ": " << py << "\n";
      if (!v.doc.empty()) o_ << docstring(names.stub_text(clean_doc(v.doc)), "    ");
    }
    // The members under the short names cuda.bindings also gives them (Result.SUCCESS
    // for NVJITLINK_SUCCESS), which the module also has (_ENUM_PREFIXES of the .pyx),
    // and their other names.
    const std::string prefix = names.short_prefix(e);
    for (const auto& v : e.enumerators) {
      const std::string name = names.constant_name(v.name);
      if (!prefix.empty() && name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
          !std::isdigit(static_cast<unsigned char>(name[prefix.size()]))) {
        o_ << "    " << name.substr(prefix.size()) << ": " << py << "\n";
      }
    }
    for (const auto& extra : names.extra_members(e)) o_ << "    " << extra.first << ": " << py << "\n";
    if (e.enumerators.empty()) o_ << "    ...\n";
    o_ << "\n";
  }
  for (const auto& [name, aliases] : m_.enum_aliases) {
    for (const auto& a : aliases) o_ << names.enum_name(a) << " = " << names.enum_name(name) << "\n";
  }
  o_ << "\n";
}

void PyiWriter::status() {
  if (!plan_.conventions.raising()) return;
  const std::string& base = plan_.conventions.error_class();
  if (const std::string& detail = lib_.python.status_detail; !detail.empty()) {
    o_ << "class " << base << "(Exception):\n    status: " << plan_.status_py << "\n    cuda_error: Optional[int]\n"
       << "    def __init__(self, status: int, " << detail << ": Optional[int] = None) -> None: ...\n\n";
    return;
  }
  o_ << "class " << base << "(Exception):\n    status: " << plan_.status_py << "\n    log: Optional[str]\n"
     << "    def __init__(self, status: int, log: Optional[str] = None) -> None: ...\n\n";
  if (!plan_.conventions.error_subclasses()) return;
  for (const Enum& e : lib_.enums) {
    if (plan_.conventions.enum_name(e.name) != plan_.status_py) continue;
    for (const auto& v : e.enumerators) {
      if (v.value == 0) continue;
      std::string alias;
      const std::string cls = plan_.conventions.error_subclass(e, v, alias);
      o_ << "class " << cls << "(" << base << "): ...\n";
      if (!alias.empty()) o_ << alias << " = " << cls << "\n";
    }
  }
  o_ << "\ndef check_status(status: int) -> int: ...\ndef check_status_size(status: int) -> int: ...\n\n";
}

void PyiWriter::handles() {
  for (const auto& name : m_.handle_order) {
    const Typedef* td = m_.find_typedef(name);
    const std::string doc = td != nullptr ? clean_doc(td->doc) : "";
    o_ << "class " << name << "(Handle):\n" << docstring(doc.empty() ? "A CUDA handle." : doc, "    ") << kHandleInit;
    if (name == "CUstream" || name == "cudaStream_t") o_ << "    def __cuda_stream__(self) -> tuple[int, int]: ...\n";
    o_ << "\n";
  }
  for (const auto& name : m_.function_pointer_order) o_ << "class " << name << "(Handle):\n" << kHandleInit << "\n";
}

void PyiWriter::values() {
  for (const auto& name : m_.value_order) {
    o_ << "class " << name << ":\n    def __init__(self, init_value: int = 0, _ptr: int = 0) -> None: ...\n"
       << "    def __int__(self) -> int: ...\n    def __index__(self) -> int: ...\n"
       << "    def getPtr(self) -> int: ...\n\n";
  }
}

void PyiWriter::structs() {
  for (const auto& sc : m_.structs) {
    const std::string doc = clean_doc(sc.record->doc);
    const bool numpy = plan_.conventions.numpy_structs();
    const bool array = numpy && m_.struct_array(*sc.record);
    o_ << "class " << sc.py << "(Struct):\n"
       << docstring(plan_.conventions.stub_text(doc.empty() ? std::string(sc.record->is_union ? "A union." : "A struct.") : doc),
                    "    ")
       << (array ? "    def __init__(self, size: int = 1, *, _ptr: int = 0, **fields: Any) -> None: ...\n"
                 : "    def __init__(self, _ptr: int = 0, **fields: Any) -> None: ...\n");
    if (numpy) {
      // The NumPy layer (structs: numpy): the dtype is <snake>_dtype at module level.
      const std::string& c = sc.py;
      o_ << "    @property\n    def ptr(self) -> int: ...\n"
         << "    def __int__(self) -> int: ...\n"
         << "    @staticmethod\n    def from_ptr(ptr: int, " << (array ? "size: int = 1, " : "")
         << "readonly: bool = False, owner: Any = None) -> " << c << ": ...\n"
         << "    @staticmethod\n    def from_data(data: Any) -> " << c << ": ...\n"
         << "    @staticmethod\n    def from_buffer(buffer: Any) -> " << c << ": ...\n";
      if (array) {
        o_ << "    def __len__(self) -> int: ...\n"
           << "    def __getitem__(self, key: int | slice) -> " << c << ": ...\n";
      }
    }
    std::vector<const Field*> fields;
    m_.collect_fields(*sc.record, fields);
    for (const Field* f : fields) {
      if (m_.numpy_hidden(*sc.record, *f)) continue;
      const FieldPlan fp = plan_record_field(m_, *sc.record, *f, fields);
      if (fp.kind == FieldPlan::Kind::None) continue;
      std::string annotation =
          fp.kind == FieldPlan::Kind::Text && plan_.conventions.text_as_str() ? std::string("str") : fp.annotation;
      // A counted pointer to numbers (python.counted_fields) reads as a list.
      if (fp.kind == FieldPlan::Kind::Pointer && !m_.counted_by(*sc.record, *f).empty() &&
          (f->type.pointer_depth == 2 || m_.resolve(f->type.pointee).kind == TypeInfo::Kind::Scalar)) {
        annotation = "list[int]";
      }
      // A counted array in the struct (structs: numpy): a view of its used items, an array of
      // the item's class where it has arrays, else a NumPy array.
      if (plan_.conventions.numpy_structs() && !m_.counted_by(*sc.record, *f).empty()) {
        if (fp.kind == FieldPlan::Kind::StructArray && m_.items_struct_array(*f)) {
          annotation = fp.type.py;
        } else if (fp.kind == FieldPlan::Kind::Bytes ||
                   (fp.kind == FieldPlan::Kind::NumberArray && fp.type.kind == TypeInfo::Kind::Scalar)) {
          annotation = "Any";  // a numpy.ndarray
        }
      }
      o_ << "    " << plan_.conventions.field_name(f->name) << ": " << annotation << "\n";
      if (!f->doc.empty()) o_ << docstring(plan_.conventions.stub_text(clean_doc(f->doc)), "    ");
    }
    if (const auto* shared = m_.shared_count_lists(*sc.record)) {
      std::string setter = "set", params;
      for (const auto& l : shared->lists) {
        const std::string n = plan_.conventions.field_name(l);
        setter += "_" + n;
        for (const Field* f : fields) {
          if (f->name == l) params += ", " + n + ": Sequence[" + m_.resolve(f->type.pointee).py + " | int]";
        }
      }
      o_ << "    def " << setter << "(self" << params << ") -> None: ...\n";
    }
    o_ << "\n";
    for (const auto& a : sc.aliases) o_ << a << " = " << sc.py << "\n";
  }
  if (!plan_.conventions.numpy_structs()) return;
  o_ << "# Each struct class's numpy.dtype (the C layout), built on first use: NumPy is needed for these only.\n";
  for (const auto& sc : m_.structs) {
    const std::string name = plan_.conventions.dtype_name(sc.py);
    if (name[0] != '_') o_ << name << ": Any\n";
  }
  o_ << "\n";
}

void PyiWriter::module_functions() {
  for (const FunctionPlan& fp : plan_.functions) {
    if (!fp.error.empty()) continue;
    function(fp, fp.function->name);
    for (const auto& alias : fp.function->aliases) function(fp, alias);
  }
  // Helpers cuda.bindings offers beyond the headers, each the same call as a bound function.
  for (const auto& [helper, target] : lib_.python.aliases) {
    for (const FunctionPlan& fp : plan_.functions) {
      if (fp.function->name != target || !fp.error.empty()) continue;
      std::string args;
      for (const Argument& a : fp.arguments) {
        if (!args.empty()) args += ", ";
        args += a.name + ": " + a.annotation + (a.default_value.empty() ? "" : " = " + a.default_value);
      }
      o_ << "def " << helper << "(" << args << ") -> " << return_annotation(fp) << ":\n";
      o_ << docstring(plan_.conventions.stub_text("The same call as " + plan_.conventions.function_name(target) +
                                                  ".\n\n" + function_doc(m_, fp, target)),
                      "    ");
      o_ << "    ...\n\n";
    }
  }
}

void PyiWriter::function(const FunctionPlan& fp, const std::string& public_name) {
  std::string args;
  for (const Argument& a : fp.arguments) {
    if (!args.empty()) args += ", ";
    args += a.name + ": " + a.annotation + (a.default_value.empty() ? "" : " = " + a.default_value);
  }
  o_ << "def " << plan_.conventions.function_name(public_name) << "(" << args << ") -> " << return_annotation(fp)
     << ":\n";
  o_ << docstring(plan_.conventions.stub_text(function_doc(m_, fp, public_name)), "    ");
  o_ << "    ...\n\n";
}

std::string PyiWriter::return_annotation(const FunctionPlan& fp) const {
  const Function& f = *fp.function;
  const TypeInfo result = m_.resolve(f.result.spelling);
  std::vector<std::string> outs;
  for (const Output& o : fp.outputs) outs.push_back(o.annotation);
  if (f.header_inline) return py_result_annotation(result);
  if (plan_.conventions.raising() && (f.result.spelling != plan_.status_type || f.status_value)) {
    return f.result.spelling == "const char *" ? "str" : py_result_annotation(result);
  }
  if (plan_.conventions.raising()) {
    if (outs.empty()) return "None";
    return outs.size() == 1 ? outs[0] : "tuple[" + join(outs) + "]";
  }
  std::vector<std::string> parts = {plan_.status_py};
  if (f.result.spelling != plan_.status_type) {
    parts.push_back(py_result_annotation(result) == "Any" ? "bytes | None" : py_result_annotation(result));
  }
  parts.insert(parts.end(), outs.begin(), outs.end());
  return "tuple[" + join(parts) + "]";
}

// #define aliases of enum and struct types.
void PyiWriter::aliases() {
  const Conventions& names = plan_.conventions;
  if (names.raising()) return;  // as in the .pyx: no C-named aliases
  for (const auto& [alias, target] : lib_.type_aliases) {
    if (const Enum* e = m_.find_enum(target)) o_ << names.enum_name(alias) << " = " << names.enum_name(e->name) << "\n";
  }
  for (const auto& [alias, target] : lib_.type_aliases) {
    if (const auto* sc = m_.find_struct(target)) o_ << alias << " = " << sc->py << "\n";
  }
}

}  // namespace codegen::python

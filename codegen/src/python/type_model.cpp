#include <algorithm>
#include "python/type_model.hpp"

#include <cctype>
#include <regex>

namespace codegen::python {

std::string strip_qualifiers(std::string s) {
  static const std::regex qual_re(R"(\b(const|volatile|struct|union|enum)\s+)");
  s = std::regex_replace(s, qual_re, "");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

std::string strip_pointer(std::string s) {
  while (!s.empty() && (s.back() == '*' || s.back() == ' ')) s.pop_back();
  return s;
}

const std::map<std::string, std::pair<std::string, bool>>& scalars() {
  static const std::map<std::string, std::pair<std::string, bool>> table = {
      {"char", {"b", false}},           {"signed char", {"b", false}},      {"unsigned char", {"B", false}},
      {"short", {"h", false}},          {"unsigned short", {"H", false}},   {"int", {"i", false}},
      {"unsigned int", {"I", false}},   {"long", {"l", false}},             {"unsigned long", {"L", false}},
      {"long long", {"q", false}},      {"unsigned long long", {"Q", false}}, {"size_t", {"N", false}},
      {"float", {"f", true}},           {"double", {"d", true}},            {"int8_t", {"b", false}},
      {"uint8_t", {"B", false}},        {"int16_t", {"h", false}},          {"uint16_t", {"H", false}},
      {"int32_t", {"i", false}},        {"uint32_t", {"I", false}},         {"int64_t", {"q", false}},
      {"uint64_t", {"Q", false}},       {"intptr_t", {"n", false}},         {"uintptr_t", {"N", false}},
      {"_Bool", {"?", false}},          {"bool", {"?", false}},
      // POSIX's (cufile.h): file offsets and signed byte counts.
      {"off_t", {"q", false}},          {"loff_t", {"q", false}},           {"ssize_t", {"n", false}},
  };
  return table;
}

Model::Model(const Library& lib, const Conventions& conventions)
    : lib(lib), conventions(conventions), cy("cy" + lib.name) {
  for (const auto& t : lib.typedefs) typedefs_[t.name] = &t;
  add_enums();
  add_handles_and_values();
  add_structs();
}

void Model::add_enums() {
  for (const auto& e : lib.enums) {
    enums_[e.name] = &e;
    if (!e.tag.empty()) enums_[e.tag] = &e;
  }
  for (const auto& t : lib.typedefs) {
    if (t.kind == Typedef::Kind::EnumAlias) {
      const std::string target = strip_qualifiers(t.target.spelling);
      if (auto it = enums_.find(target); it != enums_.end()) {
        enums_[t.name] = it->second;
        if (t.name != it->second->name) enum_aliases[it->second->name].push_back(t.name);
      }
    }
  }
}

void Model::add_handles_and_values() {
  for (const auto& t : lib.typedefs) {
    if (t.kind == Typedef::Kind::Handle) handles_[t.name] = t.name;
  }
  // Typedefs of handles (typedef CUstream cudaStream_t) and of integers get classes too.
  for (const auto& t : lib.typedefs) {
    if (t.kind != Typedef::Kind::Alias) continue;
    if (t.target.kind == Type::Kind::Handle ||
        (t.target.kind == Type::Kind::Pointer && t.target.pointer_depth == 1 && t.target.pointee == "void")) {
      // Also an opaque pointer of another library (EGLImageKHR: void *).
      handles_[t.name] = t.name;
    } else if (!conventions.int_handles() && t.target.kind == Type::Kind::Builtin && scalars().count(t.target.canonical) &&
               !scalars().at(t.target.canonical).second && t.target.canonical != "_Bool") {
      values_[t.name] = t.target.canonical;
      value_order.push_back(t.name);
    }
  }
  for (const auto& t : lib.typedefs) {
    // Plain-int handles have no class of their own.
    if (handles_.count(t.name) && !conventions.int_handles()) handle_order.push_back(t.name);
    if (t.kind == Typedef::Kind::FunctionPointer || is_function_type(t)) function_pointer_order.push_back(t.name);
  }
}

// Records: one class per complete record, named as users write it.
void Model::add_structs() {
  static const std::regex versioned_re(R"(.*_v\d+$)");
  for (const auto& r : lib.records) {
    if (!r.is_complete) continue;
    if (r.synthesized_name && r.cpp_name.empty()) continue;  // C11 anonymous members: flattened
    std::vector<std::string> names;
    for (const auto& t : lib.typedefs) {
      if (t.kind == Typedef::Kind::RecordAlias && t.record == r.name && t.name != r.name) names.push_back(t.name);
    }
    std::string py = r.name;
    for (const auto& n : names) {
      if (!std::regex_match(n, versioned_re)) {
        py = n;
        break;
      }
    }
    if (conventions.raising()) {
      // The typedef users write (nvmlMemory_v2_t), as cuda.bindings names it:
      // Memory_v2; an unnamed member's type is private (_anon_...).
      // A struct its typedef names (typedef struct {...} nvmlPciInfoExt_v1_t) goes
      // by that typedef, whatever aliases it has (PciInfoExt_v1, not PciInfoExt);
      // a tagged one by an unversioned alias first (nvmlProcessInfo_t of
      // struct nvmlProcessInfo_v2_st: ProcessInfo).
      std::string c_name = r.name;
      const bool typedef_named = r.tag.empty() && r.name.size() > 2 && r.name.compare(r.name.size() - 2, 2, "_t") == 0;
      for (const bool versioned : {false, true}) {
        if (typedef_named) break;
        for (const auto& n : names) {
          if (n.size() > 2 && n.compare(n.size() - 2, 2, "_t") == 0 &&
              std::regex_match(n.substr(0, n.size() - 2), versioned_re) == versioned) {
            c_name = n;
            break;
          }
        }
        if (c_name != r.name) break;
      }
      py = r.synthesized_name ? "_" + r.name : conventions.type_name(c_name);
    }
    StructClass sc{py, &r, {}};
    for (const auto& n : names) {
      if (n != py) sc.aliases.push_back(n);
    }
    if (py != r.name && !r.synthesized_name) sc.aliases.push_back(r.name);
    if (conventions.raising()) sc.aliases.clear();  // cuda.bindings.nvml has no C-named aliases
    structs_by_c_[r.name] = structs.size();
    for (const auto& n : names) structs_by_c_[n] = structs.size();
    if (!r.tag.empty()) structs_by_c_[r.tag] = structs.size();
    structs.push_back(std::move(sc));
  }
}

std::string Model::cython_type(const std::string& name) const {
  // C++'s bool (cufile.h's) is libcpp's, cimported as cpp_bool: `bool` in a .pyx is Python's.
  if (scalars().count(name)) return name == "_Bool" ? "bint" : name == "bool" ? "cpp_bool" : name;
  if (name == "void") return "void";
  return cy + "." + name;
}

std::string Model::cython_spelling(const std::string& spelling) const {
  static const std::regex keyword_re(R"(\b(struct|union|enum)\s+)");
  const std::string s = std::regex_replace(spelling, keyword_re, "");
  // Prefix the library's names with the cimported module.
  static const std::regex ident_re(R"([A-Za-z_]\w*)");
  std::string out;
  std::sregex_iterator it(s.begin(), s.end(), ident_re), end;
  std::size_t last = 0;
  for (; it != end; ++it) {
    out += s.substr(last, it->position() - last);
    const std::string id = it->str();
    if (id == "const" || id == "volatile" || scalars().count(id) || id == "void" || id == "unsigned" ||
        id == "signed" || id == "long" || id == "int" || id == "char" || id == "short") {
      out += id == "bool" ? "cpp_bool" : id;
    } else {
      out += cy + "." + id;
    }
    last = it->position() + it->length();
  }
  out += s.substr(last);
  return out;
}

std::string Model::cython_c(const std::string& spelling) const {
  std::string s = cython_spelling(spelling);
  // The raw layer's function pointers are noexcept nogil (declared in a nogil block).
  if (s.find("(*)") != std::string::npos) s += " noexcept nogil";
  return s;
}

TypeInfo Model::resolve(const std::string& spelling) const {
  const std::string name = strip_qualifiers(spelling);
  TypeInfo t;
  if (name == "void") {
    t.kind = TypeInfo::Kind::Void;
    t.c = "void";
    return t;
  }
  if (name.find('*') != std::string::npos || name.find('(') != std::string::npos) return t;
  if (handles_.count(name)) {
    t.kind = TypeInfo::Kind::Handle;
    t.c = cy + "." + name;
    t.py = conventions.int_handles() ? "int" : name;
    t.plain_int = conventions.int_handles();
    return t;
  }
  if (auto it = values_.find(name); it != values_.end()) {
    t.kind = TypeInfo::Kind::Value;
    t.c = cy + "." + name;
    t.py = name;
    t.format = scalars().at(it->second).first;
    return t;
  }
  if (auto it = enums_.find(name); it != enums_.end()) {
    t.kind = TypeInfo::Kind::Enum;
    t.c = cy + "." + (lib.find_typedef(name) || lib.find_enum(name) ? name : it->second->name);
    t.py = conventions.enum_name(it->second->name);
    t.format = "i";
    return t;
  }
  if (auto it = structs_by_c_.find(name); it != structs_by_c_.end()) {
    t.kind = TypeInfo::Kind::Struct;
    t.c = cy + "." + structs[it->second].record->name;
    t.py = structs[it->second].py;
    return t;
  }
  if (auto it = scalars().find(name); it != scalars().end()) {
    t.kind = TypeInfo::Kind::Scalar;
    t.c = cython_type(name);
    t.format = it->second.first;
    t.is_float = it->second.second;
    t.is_char = name == "char";
    return t;
  }
  if (auto it = typedefs_.find(name); it != typedefs_.end()) {
    const Typedef* td = it->second;
    if (td->kind == Typedef::Kind::FunctionPointer || is_function_type(*td)) {
      t.kind = TypeInfo::Kind::FunctionPointer;
      t.c = cy + "." + name;
      t.py = name;
      return t;
    }
    if (td->kind == Typedef::Kind::Alias) {
      TypeInfo inner = resolve(td->target.spelling);
      if (inner.kind == TypeInfo::Kind::Scalar) inner.c = cy + "." + name;
      return inner;
    }
    if (td->kind == Typedef::Kind::RecordAlias) return resolve(td->record);
    if (td->kind == Typedef::Kind::EnumAlias && td->foreign) {
      // Another library's enum (cufile.h's CUresult): its value as an int.
      t.kind = TypeInfo::Kind::Scalar;
      t.c = cy + "." + name;
      t.format = "i";
      return t;
    }
  }
  return t;
}

std::string Model::handle_spelled(const std::string& spelling) const {
  for (const auto& t : lib.typedefs) {
    if (t.kind == Typedef::Kind::Handle && t.target.spelling == spelling && handles_.count(t.name)) return t.name;
  }
  return "";
}

bool Model::is_function_type(const Typedef& t) {
  return t.foreign && t.kind == Typedef::Kind::Alias && t.target.kind == Type::Kind::Void;
}

const Enum* Model::find_enum(const std::string& name) const {
  auto it = enums_.find(strip_qualifiers(name));
  return it == enums_.end() ? nullptr : it->second;
}

const Typedef* Model::find_typedef(const std::string& name) const {
  auto it = typedefs_.find(strip_qualifiers(name));
  return it == typedefs_.end() ? nullptr : it->second;
}

const Model::StructClass* Model::find_struct(const std::string& name) const {
  auto it = structs_by_c_.find(strip_qualifiers(name));
  return it == structs_by_c_.end() ? nullptr : &structs[it->second];
}

std::string Model::version_macro(const std::string& c_type) const {
  const StructClass* sc = find_struct(c_type);
  if (sc == nullptr || sc->record->fields.empty() || sc->record->fields.front().name != "version") return "";
  // The parameter's spelling (nvmlMemory_v2_t), the record's own name where a
  // typedef names an anonymous struct (nvmlPciInfoExt_v1_t, which nvmlPciInfoExt_t
  // aliases), and every other alias of the record.
  std::vector<std::string> candidates = {strip_qualifiers(c_type), sc->record->name};
  for (const auto& t : lib.typedefs) {
    if (t.kind == Typedef::Kind::RecordAlias && t.record == sc->record->name) candidates.push_back(t.name);
  }
  for (std::string name : candidates) {
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "_t") == 0) name.resize(name.size() - 2);
    for (const auto& mc : lib.macros) {
      if (mc.name == name && mc.kind == Macro::Kind::Integer) return name;
    }
  }
  return "";
}

// Reserved members (reserved, reserved0, padding, unused) of the driver's and
// the runtime's structs are left out, as cuda.bindings 13.5 leaves them out:
// their bytes stay zeroed, as the driver
// requires. Where such a member is the struct's only one (CUipcMemHandle's
// reserved[64], the handle's bytes), it stays: without it the handle could not
// be read or sent to another process.
bool is_reserved_member(const Field& f) {
  static const std::regex reserved_re(R"((reserved|padding|unused)\d*)");
  return !f.anonymous_member && std::regex_match(f.name, reserved_re);
}

namespace {

// The record's names a descriptor may use: its IR name, its tag, its typedefs.
bool names_record(const Library& lib, const Record& r, const std::string& name) {
  if (name == r.name || (!r.tag.empty() && name == r.tag)) return true;
  return std::any_of(lib.typedefs.begin(), lib.typedefs.end(), [&](const Typedef& t) {
    return t.kind == Typedef::Kind::RecordAlias && t.record == r.name && t.name == name;
  });
}

}  // namespace

bool Model::struct_array(const Record& r) const {
  const auto& list = lib.python.struct_arrays;
  return std::any_of(list.begin(), list.end(), [&](const std::string& n) { return names_record(lib, r, n); });
}

bool Model::items_struct_array(const Field& f) const {
  const StructClass* item = find_struct(f.type.element);
  return item != nullptr && struct_array(*item->record);
}

bool Model::numpy_hidden(const Record& r, const Field& f) const {
  if (!conventions.numpy_structs()) return false;
  // cuda.bindings.nvml keeps reserved arrays in the dtype only (AccountingStats.reserved).
  if (f.type.kind == Type::Kind::Array && f.name == "reserved") return true;
  for (const auto& [key, count] : lib.python.counted_fields) {
    if (count == f.name && names_record(lib, r, key.substr(0, key.find('.')))) return true;
  }
  return false;
}

std::string Model::counted_by(const Record& r, const Field& f) const {
  for (const auto& [key, count] : lib.python.counted_fields) {
    const auto dot = key.find('.');
    if (key.substr(dot + 1) == f.name && names_record(lib, r, key.substr(0, dot))) return count;
  }
  return "";
}

const LibraryDescriptor::Python::SharedCountLists* Model::shared_count_lists(const Record& r) const {
  for (const auto& [type, shared] : lib.python.shared_count_lists) {
    if (names_record(lib, r, type)) return &shared;
  }
  return nullptr;
}

void Model::collect_fields(const Record& r, std::vector<const Field*>& out) const {
  // cuda.bindings leaves reserved members out of the driver's and the runtime's
  // structs only; NVML's are values (nvmlMemory_v2_t.reserved: bytes of memory).
  const bool drop_reserved = lib.name == "driver" || lib.name == "runtime";
  const bool only_reserved = std::all_of(r.fields.begin(), r.fields.end(), is_reserved_member);
  for (const Field& f : r.fields) {
    if (f.anonymous_member) {
      if (const Record* inner = lib.find_record(f.type.record)) collect_fields(*inner, out);
      continue;
    }
    if (drop_reserved && is_reserved_member(f) && !only_reserved) continue;
    out.push_back(&f);
  }
}

std::string to_python(const TypeInfo& t, const std::string& expr) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum: return "_enum_member(\"" + t.py + "\", <long long>" + expr + ")";
    case TypeInfo::Kind::Handle:
      if (t.plain_int) return "<intptr_t>" + expr;
      return "_wrap_" + t.py + "(<void*>" + expr + ")";
    case TypeInfo::Kind::Value: return t.py + "._from(" + expr + ")";
    case TypeInfo::Kind::Struct: return t.py + "._copy(&" + expr + ")";
    case TypeInfo::Kind::FunctionPointer: return "_wrap_" + t.py + "(<void*>" + expr + ")";
    default: return expr;
  }
}

std::string to_c(const TypeInfo& t, const std::string& obj, const std::string& name) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum: return "<" + t.c + ">_support.enum_arg(" + obj + ", \"" + name + "\")";
    case TypeInfo::Kind::Handle:
      if (t.plain_int) return "<" + t.c + "><intptr_t>_support.signed_arg(" + obj + ", sizeof(intptr_t), \"" + name + "\")";
      return "<" + t.c + ">_support.handle_value(" + obj + ", " + t.py + ", \"" + name + "\")";
    case TypeInfo::Kind::Value:
      return "((<" + t.py + ">" + obj + ")._value if type(" + obj + ") is " + t.py + " else <" + t.c +
             ">_support.as_int(" + obj + ", \"" + name + "\"))";
    case TypeInfo::Kind::Struct:
      return "(<" + t.c + "*>_support.struct_pointer_required(" + obj + ", " + t.py + ", \"" + name + "\"))[0]";
    case TypeInfo::Kind::FunctionPointer:
      return "<" + t.c + ">_support.plain_address(" + obj + ", \"" + name + "\")";
    case TypeInfo::Kind::Scalar:
      if (t.is_float) return "<" + t.c + ">float(" + obj + ")";
      return "<" + t.c + ">_support.as_int(" + obj + ", \"" + name + "\")";
    default: return obj;
  }
}

bool holds_little(const TypeInfo& t) {
  return t.kind == TypeInfo::Kind::Scalar || t.kind == TypeInfo::Kind::Enum ||
         (t.kind == TypeInfo::Kind::Handle && t.plain_int);
}

bool is_integer(const TypeInfo& t) {
  return t.kind == TypeInfo::Kind::Scalar && !t.is_float && t.format.size() == 1 && t.format != "?";
}

std::string integer_to_c(const TypeInfo& t, const std::string& obj, const std::string& name) {
  // The struct-module format says the signedness: lower case is signed.
  const bool is_signed = std::islower(static_cast<unsigned char>(t.format[0])) != 0;
  const std::string converted = "<" + t.c + ">_support." + (is_signed ? "signed_arg(" : "unsigned_arg(") + obj +
                                ", sizeof(" + t.c + "), \"" + name + "\")";
  if (t.kind == TypeInfo::Kind::Value) {
    return "((<" + t.py + ">" + obj + ")._value if type(" + obj + ") is " + t.py + " else " + converted + ")";
  }
  return converted;
}

std::string py_annotation(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum: return t.py + " | int";
    case TypeInfo::Kind::Handle: return t.plain_int ? "int" : t.py + " | int | None";
    case TypeInfo::Kind::Value: return t.py + " | int";
    case TypeInfo::Kind::Struct: return t.py;
    case TypeInfo::Kind::FunctionPointer: return t.py + " | int | None";
    case TypeInfo::Kind::Scalar: return t.is_float ? "float" : "int";
    default: return "Any";
  }
}

std::string py_result_annotation(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum:
    case TypeInfo::Kind::Handle:
    case TypeInfo::Kind::Value:
    case TypeInfo::Kind::FunctionPointer:
    case TypeInfo::Kind::Struct: return t.py;
    case TypeInfo::Kind::Scalar: return t.is_float ? "float" : "int";
    default: return "Any";
  }
}

std::string wrap_function(const std::string& name) {
  // The last object made is kept as a spare and reused in place while nothing
  // else refers to it: a call whose result is dropped or unpacked and dropped
  // (the usual case) then makes no object at all.
  const std::string spare = "_spare_" + name;
  return "cdef " + name + " " + spare + " = None\n\n" +
         "cdef inline " + name + " _wrap_" + name + "(void* value):\n" +
         "    global " + spare + "\n" +
         "    if _support.only_spare(<PyObject*>" + spare + "):\n" +
         "        " + spare + "._value = value\n" +
         "        return " + spare + "\n" +
         "    cdef " + name + " h = " + name + ".__new__(" + name + ")\n" +
         "    h._value = value\n" +
         "    " + spare + " = h\n" +
         "    return h\n\n";
}

}  // namespace codegen::python

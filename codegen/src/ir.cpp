#include <algorithm>

#include "codegen/ir.hpp"
#include "codegen/ir_json.hpp"

namespace codegen {

namespace {
template <typename T>
const T* find_by_name(const std::vector<T>& items, const std::string& name) {
  auto it = std::find_if(items.begin(), items.end(), [&](const T& item) { return item.name == name; });
  return it == items.end() ? nullptr : &*it;
}
}  // namespace

const Function* Library::find_function(const std::string& name) const { return find_by_name(functions, name); }
const Record* Library::find_record(const std::string& name) const { return find_by_name(records, name); }
const Typedef* Library::find_typedef(const std::string& name) const { return find_by_name(typedefs, name); }
const Enum* Library::find_enum(const std::string& name) const { return find_by_name(enums, name); }

std::vector<LiveHandle> live_handles(const Library& lib) {
  const auto pointee = [](const Function& f, const std::string& param) {
    for (const Param& p : f.params) {
      if (p.name == param) return p.type.pointee;
    }
    return std::string();
  };
  std::vector<LiveHandle> out;
  for (const Function& f : lib.functions) {
    if (!f.makes_handle.empty()) out.push_back({pointee(f, f.makes_handle), &f, nullptr});
  }
  for (LiveHandle& h : out) {
    for (const Function& f : lib.functions) {
      if (!f.destroys_handle.empty() && pointee(f, f.destroys_handle) == h.type) h.destroyed_by = &f;
    }
  }
  // classify() reports a type without its destroy function; emitters see only complete pairs.
  out.erase(std::remove_if(out.begin(), out.end(), [](const LiveHandle& h) { return h.destroyed_by == nullptr; }),
            out.end());
  return out;
}

const char* to_string(Type::Kind kind) {
  switch (kind) {
    case Type::Kind::Void: return "void";
    case Type::Kind::Builtin: return "builtin";
    case Type::Kind::Enum: return "enum";
    case Type::Kind::Record: return "record";
    case Type::Kind::Handle: return "handle";
    case Type::Kind::Pointer: return "pointer";
    case Type::Kind::FunctionPointer: return "function_pointer";
    case Type::Kind::Array: return "array";
  }
  return "?";
}

const char* to_string(Typedef::Kind kind) {
  switch (kind) {
    case Typedef::Kind::Alias: return "alias";
    case Typedef::Kind::Handle: return "handle";
    case Typedef::Kind::FunctionPointer: return "function_pointer";
    case Typedef::Kind::RecordAlias: return "record_alias";
    case Typedef::Kind::EnumAlias: return "enum_alias";
  }
  return "?";
}

const char* to_string(Macro::Kind kind) {
  switch (kind) {
    case Macro::Kind::Integer: return "integer";
    case Macro::Kind::Pointer: return "pointer";
    case Macro::Kind::Float: return "float";
    case Macro::Kind::String: return "string";
  }
  return "?";
}

const char* to_string(PerThread per_thread) {
  switch (per_thread) {
    case PerThread::None: return "none";
    case PerThread::Ptds: return "ptds";
    case PerThread::Ptsz: return "ptsz";
  }
  return "?";
}

const char* to_string(LibraryDescriptor::Resolution resolution) {
  switch (resolution) {
    case LibraryDescriptor::Resolution::Symbol: return "symbol";
    case LibraryDescriptor::Resolution::ProcAddress: return "proc_address";
    case LibraryDescriptor::Resolution::SymbolPerThreadVariants: return "symbol_per_thread_variants";
  }
  return "?";
}

const char* to_string(LibraryDescriptor::Errors errors) {
  switch (errors) {
    case LibraryDescriptor::Errors::StatusTuple: return "status_tuple";
    case LibraryDescriptor::Errors::Raise: return "raise";
  }
  return "?";
}

namespace {

using json = nlohmann::ordered_json;

json type_json(const Type& t) {
  json j;
  j["kind"] = to_string(t.kind);
  j["spelling"] = t.spelling;
  if (t.canonical != t.spelling) j["canonical"] = t.canonical;
  if (t.kind == Type::Kind::Pointer) {
    j["pointee"] = t.pointee;
    j["pointee_kind"] = to_string(t.pointee_kind);
    j["pointee_const"] = t.pointee_const;
    j["pointer_depth"] = t.pointer_depth;
  }
  if (t.kind == Type::Kind::Array) {
    j["element"] = t.element;
    j["extents"] = t.extents;
  }
  if (!t.record.empty()) j["record"] = t.record;
  return j;
}

json params_json(const std::vector<Param>& params) {
  json arr = json::array();
  for (const auto& p : params) {
    json j;
    j["name"] = p.name;
    j["type"] = type_json(p.type);
    if (!p.doc_direction.empty()) j["doc_direction"] = p.doc_direction;
    if (!p.direction.empty()) j["direction"] = p.direction;
    if (!p.classified_by.empty()) j["classified_by"] = p.classified_by;
    if (!p.count_param.empty()) j["count"] = p.count_param;
    if (!p.size_param.empty()) j["size"] = p.size_param;
    if (!p.size_from.empty()) j["size_from"] = p.size_from;
    if (!p.python_name.empty()) j["python_name"] = p.python_name;
    if (!p.typed_by.empty()) j["typed_by"] = p.typed_by;
    if (!p.doc.empty()) j["doc"] = p.doc;
    arr.push_back(std::move(j));
  }
  return arr;
}

json location_json(const Location& l) { return l.file + ":" + std::to_string(l.line); }

}  // namespace

json to_json(const Library& lib) {
  json j;
  j["library"] = lib.name;
  j["headers"] = lib.headers;
  j["type_headers"] = lib.type_headers;
  j["soname"] = lib.soname;
  // The rest of the descriptor (the annotation file's `library:` block).
  j["owned_files"] = lib.owned_files;
  j["extra_headers"] = lib.extra_headers;
  j["display_name"] = lib.display_name;
  j["env_override"] = lib.env_override;
  j["wheel_dirs"] = lib.wheel_dirs;
  if (!lib.toolkit_dirs.empty()) j["toolkit_dirs"] = lib.toolkit_dirs;
  j["system_loader_only"] = lib.system_loader_only;
  j["resolution"] = to_string(lib.resolution);
  j["per_thread_macros"] = lib.per_thread_macros;
  j["foreign_types"] = lib.foreign_types;
  j["python"] = {{"title", lib.python.title}, {"errors", to_string(lib.python.errors)}};
  if (!lib.python.error_class.empty()) j["python"]["error_class"] = lib.python.error_class;
  if (!lib.python.prefix.empty()) j["python"]["prefix"] = lib.python.prefix;
  j["cuda_version"] = lib.cuda_version;
  json functions = json::array();
  for (const auto& f : lib.functions) {
    json fj;
    fj["name"] = f.name;
    if (f.abi_symbol != f.name) fj["abi_symbol"] = f.abi_symbol;
    if (!f.versioned_symbol.empty()) fj["versioned_symbol"] = f.versioned_symbol;
    if (f.header_inline) fj["header_inline"] = true;
    if (!f.aliases.empty()) fj["aliases"] = f.aliases;
    if (f.abi_version != 0) fj["abi_version"] = f.abi_version;
    if (!f.proc_name.empty() && f.proc_name != f.name) fj["proc_name"] = f.proc_name;
    if (!f.introduced.empty()) fj["introduced"] = f.introduced;
    if (f.per_thread != PerThread::None) fj["per_thread"] = to_string(f.per_thread);
    if (f.deprecated) fj["deprecated"] = *f.deprecated;
    fj["result"] = type_json(f.result);
    fj["params"] = params_json(f.params);
    fj["location"] = location_json(f.location);
    if (!f.doc.empty()) fj["doc"] = f.doc;
    functions.push_back(std::move(fj));
  }
  j["functions"] = std::move(functions);
  json enums = json::array();
  for (const auto& e : lib.enums) {
    json ej;
    ej["name"] = e.name;
    if (e.tag != e.name) ej["tag"] = e.tag;
    json values = json::array();
    for (const auto& v : e.enumerators) {
      json vj;
      vj["name"] = v.name;
      vj["value"] = v.value;
      if (!v.doc.empty()) vj["doc"] = v.doc;
      values.push_back(std::move(vj));
    }
    ej["enumerators"] = std::move(values);
    ej["location"] = location_json(e.location);
    if (!e.doc.empty()) ej["doc"] = e.doc;
    enums.push_back(std::move(ej));
  }
  j["enums"] = std::move(enums);
  json records = json::array();
  for (const auto& r : lib.records) {
    json rj;
    rj["name"] = r.name;
    if (!r.tag.empty() && r.tag != r.name) rj["tag"] = r.tag;
    rj["union"] = r.is_union;
    if (!r.is_complete) rj["opaque"] = true;
    if (r.synthesized_name) rj["synthesized_name"] = true;
    if (r.cpp_name != r.name) rj["cpp_name"] = r.cpp_name;
    json fields = json::array();
    for (const auto& f : r.fields) {
      json fj;
      fj["name"] = f.name;
      fj["type"] = type_json(f.type);
      if (f.bit_width) fj["bit_width"] = f.bit_width;
      if (f.anonymous_member) fj["anonymous_member"] = true;
      if (!f.doc.empty()) fj["doc"] = f.doc;
      fields.push_back(std::move(fj));
    }
    rj["fields"] = std::move(fields);
    rj["location"] = location_json(r.location);
    if (!r.doc.empty()) rj["doc"] = r.doc;
    records.push_back(std::move(rj));
  }
  j["records"] = std::move(records);
  json typedefs = json::array();
  for (const auto& t : lib.typedefs) {
    json tj;
    tj["name"] = t.name;
    tj["kind"] = to_string(t.kind);
    tj["target"] = type_json(t.target);
    if (!t.record.empty()) tj["record"] = t.record;
    if (t.foreign) tj["foreign"] = true;
    if (t.kind == Typedef::Kind::FunctionPointer) {
      tj["result"] = type_json(t.fn_result);
      tj["params"] = params_json(t.fn_params);
    }
    tj["location"] = location_json(t.location);
    if (!t.doc.empty()) tj["doc"] = t.doc;
    typedefs.push_back(std::move(tj));
  }
  j["typedefs"] = std::move(typedefs);
  json macros = json::array();
  for (const auto& m : lib.macros) {
    json mj;
    mj["name"] = m.name;
    mj["kind"] = to_string(m.kind);
    mj["spelling"] = m.spelling;
    mj["c_type"] = m.c_type;
    switch (m.kind) {
      case Macro::Kind::Integer: mj["value"] = m.int_value; break;
      case Macro::Kind::Pointer: mj["value"] = m.int_value; break;
      case Macro::Kind::Float: mj["value"] = m.float_value; break;
      case Macro::Kind::String: mj["value"] = m.string_value; break;
    }
    if (!m.doc.empty()) mj["doc"] = m.doc;
    macros.push_back(std::move(mj));
  }
  j["macros"] = std::move(macros);
  json renames = json::array();
  for (const auto& r : lib.renames) {
    json rj;
    rj["public"] = r.public_name;
    rj["target"] = r.target;
    if (r.per_thread != PerThread::None) rj["per_thread"] = to_string(r.per_thread);
    renames.push_back(std::move(rj));
  }
  j["renames"] = std::move(renames);
  if (!lib.type_aliases.empty()) j["type_aliases"] = lib.type_aliases;
  if (!lib.skipped.empty()) j["skipped"] = lib.skipped;
  if (!lib.attribute_types.empty()) j["attribute_types"] = lib.attribute_types;
  if (!lib.notes.empty()) j["notes"] = lib.notes;
  return j;
}

}  // namespace codegen

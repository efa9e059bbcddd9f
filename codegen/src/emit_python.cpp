// The Python layer: cubind/bindings/<library>.pyx and .pyi, following the
// calling conventions of NVIDIA's cuda.bindings module by module.
//
// Every parameter of every function was classified (annotations.cpp); this
// emitter turns each classification into a role (how the Python argument is
// converted, or how the output is returned) and renders a Cython function:
// convert, call the raw layer without the GIL, release what was allocated,
// return (status, *outputs) (driver, runtime, NVRTC) or the outputs alone,
// raising on failure (nvJitLink, whose cuda.bindings module works that way).
#include "codegen/emit_python.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "codegen/emit_common.hpp"

namespace codegen {
namespace {

// ---------------------------------------------------------------------------
// Types as the Python layer sees them

struct TypeInfo {
  enum class Kind { Void, Scalar, Enum, Handle, Value, Struct, FunctionPointer, Unknown };
  Kind kind = Kind::Unknown;
  std::string c;   // Cython spelling of the C type: "unsigned int", "cydriver.CUcontext"
  std::string py;  // the Python class (handles, values, structs, enums)
  bool is_float = false;
  bool is_char = false;
  std::string format;  // struct-module format of a scalar: "i", "Q", "f"
};

std::string strip_qualifiers(std::string s) {
  static const std::regex qual_re(R"(\b(const|volatile|struct|union|enum)\s+)");
  s = std::regex_replace(s, qual_re, "");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  return s;
}

const std::map<std::string, std::pair<std::string, bool>>& scalars() {
  // C name -> (struct format, is floating point)
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
  };
  return table;
}


class Model {
 public:
  Model(const Library& lib) : lib(lib), cy("cy" + lib.name) {
    for (const auto& t : lib.typedefs) typedefs_[t.name] = &t;
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
      } else if (t.target.kind == Type::Kind::Builtin && scalars().count(t.target.canonical) &&
                 !scalars().at(t.target.canonical).second && t.target.canonical != "_Bool") {
        values_[t.name] = t.target.canonical;
        value_order.push_back(t.name);
      }
    }
    for (const auto& t : lib.typedefs) {
      if (handles_.count(t.name)) handle_order.push_back(t.name);
      if (t.kind == Typedef::Kind::FunctionPointer || is_function_type(t)) function_pointer_order.push_back(t.name);
    }
    // Records: one class per complete record, named as users write it.
    for (const auto& r : lib.records) {
      if (!r.is_complete) continue;
      if (r.synthesized_name && r.cpp_name.empty()) continue;  // C11 anonymous members: flattened
      std::vector<std::string> names;
      for (const auto& t : lib.typedefs) {
        if (t.kind == Typedef::Kind::RecordAlias && t.record == r.name && t.name != r.name) names.push_back(t.name);
      }
      std::string py = r.name;
      static const std::regex versioned_re(R"(.*_v\d+$)");
      for (const auto& n : names) {
        if (!std::regex_match(n, versioned_re)) {
          py = n;
          break;
        }
      }
      StructClass sc{py, &r, {}};
      for (const auto& n : names) {
        if (n != py) sc.aliases.push_back(n);
      }
      if (py != r.name && !r.synthesized_name) sc.aliases.push_back(r.name);
      structs_by_c_[r.name] = structs.size();
      for (const auto& n : names) structs_by_c_[n] = structs.size();
      if (!r.tag.empty()) structs_by_c_[r.tag] = structs.size();
      structs.push_back(std::move(sc));
    }
  }

  struct StructClass {
    std::string py;
    const Record* record;
    std::vector<std::string> aliases;
  };

  // The C type's Cython spelling: names the library declares get the cy prefix.
  std::string cython_type(const std::string& name) const {
    if (scalars().count(name)) return name == "_Bool" ? "bint" : name;
    if (name == "void") return "void";
    return cy + "." + name;
  }

  TypeInfo resolve(const std::string& spelling) const {
    const std::string name = strip_qualifiers(spelling);
    TypeInfo t;
    if (name == "void") {
      t.kind = TypeInfo::Kind::Void;
      t.c = "void";
      return t;
    }
    if (name.find('*') != std::string::npos || name.find('(') != std::string::npos) {
      t.kind = TypeInfo::Kind::Unknown;
      return t;
    }
    if (auto it = handles_.find(name); it != handles_.end()) {
      t.kind = TypeInfo::Kind::Handle;
      t.c = cy + "." + name;
      t.py = name;
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
      t.py = it->second->name;
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
    }
    return t;
  }

  // The handle typedef of the pointer type spelled `spelling` ("struct cudaGraphicsResource *"), or "".
  std::string handle_spelled(const std::string& spelling) const {
    for (const auto& t : lib.typedefs) {
      if (t.kind == Typedef::Kind::Handle && t.target.spelling == spelling && handles_.count(t.name)) return t.name;
    }
    return "";
  }

  // Another library's function type (VdpGetProcAddress), taken by pointer.
  static bool is_function_type(const Typedef& t) {
    return t.foreign && t.kind == Typedef::Kind::Alias && t.target.kind == Type::Kind::Void;
  }

  const Enum* find_enum(const std::string& name) const {
    auto it = enums_.find(strip_qualifiers(name));
    return it == enums_.end() ? nullptr : it->second;
  }
  const Typedef* find_typedef(const std::string& name) const {
    auto it = typedefs_.find(strip_qualifiers(name));
    return it == typedefs_.end() ? nullptr : it->second;
  }
  const StructClass* find_struct(const std::string& name) const {
    auto it = structs_by_c_.find(strip_qualifiers(name));
    return it == structs_by_c_.end() ? nullptr : &structs[it->second];
  }
  std::string value_c_type(const std::string& name) const { return values_.at(name); }

  const Library& lib;
  std::string cy;
  std::vector<StructClass> structs;
  std::vector<std::string> handle_order;
  std::vector<std::string> function_pointer_order;  // callback typedefs: CUhostFn, ...
  std::vector<std::string> value_order;
  std::map<std::string, std::vector<std::string>> enum_aliases;

 private:
  std::map<std::string, const Typedef*> typedefs_;
  std::map<std::string, const Enum*> enums_;
  std::map<std::string, std::string> handles_;
  std::map<std::string, std::string> values_;  // name -> canonical C integer type
  std::map<std::string, std::size_t> structs_by_c_;
};

// ---------------------------------------------------------------------------
// Conversions shared by parameters, fields and callback arguments

// "CUctx_st *" -> "CUctx_st": the spelling without its trailing pointers.
std::string strip_pointer(std::string s) {
  while (!s.empty() && (s.back() == '*' || s.back() == ' ')) s.pop_back();
  return s;
}

// A new handle object straight from the type's tp_new: the hot path of every
// function that returns one.
std::string wrap_function(const std::string& name) {
  return "cdef inline " + name + " _wrap_" + name + "(void* value):\n" +
         "    cdef " + name + " h = " + name + ".__new__(" + name + ")\n" +
         "    h._value = value\n" +
         "    return h\n\n";
}

// Python value of a C expression of this type.
std::string to_python(const TypeInfo& t, const std::string& expr) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum: return "_enum_member(\"" + t.py + "\", <long long>" + expr + ")";
    case TypeInfo::Kind::Handle: return "_wrap_" + t.py + "(<void*>" + expr + ")";
    case TypeInfo::Kind::Value: return t.py + "._from(" + expr + ")";
    case TypeInfo::Kind::Struct: return t.py + "._copy(&" + expr + ")";
    case TypeInfo::Kind::FunctionPointer: return "_wrap_" + t.py + "(<void*>" + expr + ")";
    default: return expr;
  }
}

// C value of the Python object `obj` for this type (`name` for errors).
std::string to_c(const TypeInfo& t, const std::string& obj, const std::string& name) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum: return "<" + t.c + "><long long>_support.as_int(" + obj + ", \"" + name + "\")";
    case TypeInfo::Kind::Handle:
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

std::string py_annotation(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::Enum: return t.py + " | int";
    case TypeInfo::Kind::Handle: return t.py + " | int | None";
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

// ---------------------------------------------------------------------------
// Parameters

enum class Role {
  Scalar,          // by value: int, float
  Enum,            // by value
  Handle,          // by value: handle object, int or None
  Value,           // by value: CUdevice, CUdeviceptr objects or int
  StructValue,     // struct by value
  FunctionPointer, // a raw function address (int) or None
  Callback,        // a Python callable, called through a trampoline
  UserData,        // the callable's data: any Python object
  StructIn,        // pointer to a struct the caller provides (or None)
  String,          // const char *
  Address,         // void *: int, None or a buffer
  KernelParams,    // void **kernelParams: None, an address, or (values, types)
  ArrayIn,         // const T * with a count: a sequence
  OutScalar,       // T * returned (scalar, enum, handle, value)
  OutStruct,       // struct filled by the call, returned
  OutString,       // const char ** returned as bytes
  OutPointer,      // void ** returned as an int
  OutBuffer,       // char * of `size` bytes returned as bytes
  OutSized,        // a buffer whose size another function reports; an optional caller buffer
  OutArray,        // T * of `count` elements returned as a list
  OutArrayRef,     // const T ** pointing at `count` elements the library owns, returned as a list
  OutTyped,        // void * whose type an attribute parameter selects
  OutTypedArray,   // void ** of values, each typed by its attribute in an array
  InTyped,         // void * input whose type an attribute parameter selects
  InOut,           // T * in and out: an optional argument, returned
  InPointer,       // T * to one value the caller gives (const int *value, nvrtcProgram *prog)
};

struct Plan {
  const Param* param = nullptr;
  Role role = Role::Scalar;
  TypeInfo type;            // the value's type (the pointee for pointers)
  std::string py_name;      // the Python argument / local name
  std::string count;        // OutArray / ArrayIn / OutArrayRef count parameter; OutBuffer size
  bool count_is_fixed = false;
  const Function* size_from = nullptr;
  std::string typed_by;
};

bool takes_argument(Role r) {
  switch (r) {
    case Role::OutScalar:
    case Role::OutStruct:
    case Role::OutString:
    case Role::OutPointer:
    case Role::OutBuffer:
    case Role::OutArray:
    case Role::OutArrayRef:
    case Role::OutTyped:
    case Role::OutTypedArray: return false;
    default: return true;
  }
}

class FunctionPlanner {
 public:
  FunctionPlanner(const Model& m) : m_(m) {}

  // Throws std::runtime_error naming the function and parameter when a
  // classified parameter has no Python form: the emitter must not guess.
  std::vector<Plan> plan(const Function& f) const {
    std::vector<Plan> plans;
    const bool has_callback = std::any_of(f.params.begin(), f.params.end(), [](const Param& p) {
      return p.type.kind == Type::Kind::FunctionPointer;
    });
    const bool has_user_data = std::any_of(f.params.begin(), f.params.end(), [](const Param& p) {
      return p.classified_by == "callback_user_data";
    });
    for (const Param& p : f.params) {
      Plan pl;
      pl.param = &p;
      pl.py_name = python_identifier(p.name);
      pl.count = !p.count_param.empty() ? p.count_param : p.size_param;
      pl.count_is_fixed = !pl.count.empty() && std::all_of(pl.count.begin(), pl.count.end(), ::isdigit);
      pl.typed_by = p.typed_by;
      const Type& t = p.type;
      const auto fail = [&](const std::string& why) {
        throw std::runtime_error(f.name + ": parameter '" + p.name + "' (" + t.spelling + ", " + p.direction +
                                 "): " + why);
      };
      if (t.kind == Type::Kind::FunctionPointer ||
          (t.kind == Type::Kind::Builtin && m_.resolve(t.spelling).kind == TypeInfo::Kind::FunctionPointer)) {
        pl.type = m_.resolve(t.spelling);
        pl.role = has_callback && has_user_data && pl.type.kind == TypeInfo::Kind::FunctionPointer &&
                          callback_user_param(pl.type.py) >= 0
                      ? Role::Callback
                      : Role::FunctionPointer;
        if (pl.type.kind != TypeInfo::Kind::FunctionPointer) pl.type.c = "void*";
        plans.push_back(pl);
        continue;
      }
      // A typedef of another library's opaque pointer (EGLImageKHR) is a handle.
      const bool opaque_pointer = t.kind == Type::Kind::Pointer && t.pointer_depth == 0 &&
                                  m_.resolve(t.spelling).kind == TypeInfo::Kind::Handle;
      if (t.kind != Type::Kind::Pointer || opaque_pointer) {
        pl.type = m_.resolve(t.spelling);
        switch (pl.type.kind) {
          case TypeInfo::Kind::Scalar: pl.role = Role::Scalar; break;
          case TypeInfo::Kind::Enum: pl.role = Role::Enum; break;
          case TypeInfo::Kind::Handle: pl.role = Role::Handle; break;
          case TypeInfo::Kind::Value: pl.role = Role::Value; break;
          case TypeInfo::Kind::Struct: pl.role = Role::StructValue; break;
          default: fail("no Python form for this by-value type");
        }
        plans.push_back(pl);
        continue;
      }
      // Pointers.
      const std::string dir = p.direction;
      TypeInfo pointee = m_.resolve(t.pointee);
      if (pointee.kind == TypeInfo::Kind::Unknown && t.pointer_depth == 2) {
        // struct cudaGraphicsResource **: spelled without its handle typedef.
        const std::string handle = m_.handle_spelled(t.pointee);
        if (!handle.empty() && (dir == "out" || dir == "in")) {
          pl.type = m_.resolve(handle);
          pl.role = dir == "out" ? Role::OutScalar : Role::InPointer;
          plans.push_back(pl);
          continue;
        }
      }
      pl.type = pointee;
      if (p.classified_by == "callback_user_data" && has_callback) {
        pl.role = Role::UserData;
      } else if (!p.typed_by.empty()) {
        if (!p.count_param.empty()) {
          pl.role = Role::OutTypedArray;  // void **data, one value per attribute
        } else {
          pl.role = dir == "in" ? Role::InTyped : Role::OutTyped;
        }
      } else if (!p.size_from.empty()) {
        pl.role = Role::OutSized;
        pl.size_from = m_.lib.find_function(p.size_from);
        if (pl.size_from == nullptr) fail("size_from names no function");
      } else if (t.pointer_depth == 1 && t.pointee == "void") {
        // An output through void * is an address the call writes (cudaGraphMemFreeNodeGetParams).
        pl.role = dir == "out" ? Role::OutPointer : Role::Address;
      } else if (t.pointer_depth == 1 && t.pointee == "char" && t.pointee_const) {
        pl.role = pl.count.empty() ? Role::String : Role::ArrayIn;
        if (!pl.count.empty()) pl.type.is_char = true;
      } else if (t.pointer_depth == 1 && t.pointee == "char" && !t.pointee_const) {
        if (dir == "in" || dir == "inout") {
          // A buffer the call reads; inout: the caller's buffer, which the call fills.
          pl.role = Role::Address;
        } else {
          // With no count, a fixed-size identifier (cuDeviceGetLuid): the caller's size is 8.
          pl.role = Role::OutBuffer;
        }
      } else if (t.pointer_depth == 2 && t.pointee == "const char *" && dir == "out") {
        pl.role = Role::OutString;
      } else if (t.pointer_depth == 2 && (t.pointee == "const char *" || t.pointee == "char *") && dir == "in") {
        pl.role = Role::ArrayIn;
        pl.type = TypeInfo{};
        pl.type.kind = TypeInfo::Kind::Scalar;
        pl.type.c = "const char*";
        pl.type.is_char = true;
        if (pl.count.empty()) fail("an array of strings needs a count");
      } else if (t.pointer_depth == 2 && t.pointee == "const void *" && dir == "out") {
        pl.role = Role::OutPointer;
      } else if (t.pointer_depth == 2 && t.pointee == "const void *" && dir == "in" && !pl.count.empty()) {
        pl.role = Role::ArrayIn;  // const void *const *srcs: addresses
        pl.type = TypeInfo{};
        pl.type.kind = TypeInfo::Kind::Scalar;
        pl.type.c = "void*";
      } else if (t.pointer_depth == 2 && t.pointee == "void *") {
        if (dir == "out") {
          pl.role = Role::OutPointer;
        } else if (p.name == "kernelParams" || p.name == "args") {
          pl.role = Role::KernelParams;
        } else if (!pl.count.empty()) {
          pl.role = Role::ArrayIn;
          pl.type = TypeInfo{};
          pl.type.kind = TypeInfo::Kind::Scalar;
          pl.type.c = "void*";
        } else {
          pl.role = Role::Address;  // e.g. cuLaunchKernel's extra: an address or None
        }
      } else if (t.pointer_depth == 2 && dir == "out" && !pl.count.empty()) {
        // const CUgraphNode **dependencies_out: the library's own array.
        pl.type = m_.resolve(strip_pointer(t.pointee));
        if (pl.type.kind == TypeInfo::Kind::Unknown) fail("no Python form for the array's elements");
        pl.role = Role::OutArrayRef;
      } else if (t.pointer_depth == 1) {
        if (pointee.kind == TypeInfo::Kind::Unknown || pointee.kind == TypeInfo::Kind::Void) {
          fail("no Python form for the pointee");
        }
        if (pointee.kind == TypeInfo::Kind::FunctionPointer) {
          // VdpGetProcAddress *: the function's address, given in its class.
          const bool function_type = m_.find_typedef(t.pointee) && Model::is_function_type(*m_.find_typedef(t.pointee));
          pl.role = dir == "out" ? Role::OutScalar : function_type ? Role::FunctionPointer : Role::Address;
        } else if (!pl.count.empty()) {
          if (dir == "in") {
            pl.role = Role::ArrayIn;
          } else {
            pl.role = Role::OutArray;
          }
        } else if (pointee.kind == TypeInfo::Kind::Struct) {
          pl.role = dir == "out" ? Role::OutStruct : Role::StructIn;
        } else if (dir == "out") {
          pl.role = Role::OutScalar;
        } else if (dir == "inout") {
          pl.role = Role::InOut;
        } else {
          // const int *value, nvrtcProgram *prog (destroyed and zeroed): one value.
          pl.role = Role::InPointer;
        }
      } else {
        fail("no Python form for a pointer of depth " + std::to_string(t.pointer_depth));
      }
      plans.push_back(pl);
    }
    // A count parameter that belongs to an output array stays an argument: the
    // array's capacity. An inout count is an optional argument, returned.
    return plans;
  }

  // The index of the callback typedef's user-data parameter, or -1.
  int callback_user_param(const std::string& typedef_name) const {
    const Typedef* td = m_.find_typedef(typedef_name);
    if (td == nullptr || td->kind != Typedef::Kind::FunctionPointer) return -1;
    for (std::size_t i = 0; i < td->fn_params.size(); ++i) {
      const Type& t = td->fn_params[i].type;
      if (t.kind == Type::Kind::Pointer && t.pointer_depth == 1 && t.pointee == "void") return static_cast<int>(i);
    }
    return -1;
  }

 private:
  const Model& m_;
};

// ---------------------------------------------------------------------------
// Docstrings

std::string clean_doc(const std::string& doc) {
  std::string s = doc;
  static const std::vector<std::pair<std::regex, std::string>> rules = {
      {std::regex(R"(\\ingroup\s+\S+\s*)"), ""},
      {std::regex(R"(\\brief\s+)"), ""},
      {std::regex(R"(\\(p|c|e|a|b)\s+)"), ""},
      {std::regex(R"(\\ref\s+)"), ""},
      {std::regex(R"(\\link\s+#?(\S+)\s*([^\\]*)\\endlink)"), "$2"},
      {std::regex(R"(::)"), ""},
      {std::regex(R"(\\notefnerr|\\note_[a-z_]+|\\note\b)"), "Note:"},
      {std::regex(R"(\\sa\b)"), "See also:"},
      {std::regex(R"(\\return)"), "Returns:"},
      {std::regex(R"(\\param\s*(\[[a-z,]+\])?\s+)"), "- "},
      {std::regex(R"(""")"), "\"\"\\\""},
      {std::regex(R"(\\)"), "\\\\"},
  };
  for (const auto& [re, repl] : rules) s = std::regex_replace(s, re, repl);
  // Collapse runs of blank lines.
  static const std::regex blank_re(R"(\n\s*\n(\s*\n)+)");
  s = std::regex_replace(s, blank_re, "\n\n");
  return s;
}

std::string docstring(const std::string& text, const std::string& indent_prefix) {
  std::string body = text;
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.pop_back();
  while (!body.empty() && (body.front() == '\n' || body.front() == ' ')) body.erase(0, 1);
  if (body.empty()) return "";
  const std::string indented = indent(body, indent_prefix);
  return indent_prefix + "\"\"\"" + indented.substr(indent_prefix.size()) + indent_prefix + "\"\"\"\n";
}

// ---------------------------------------------------------------------------
// The module

class PyxWriter {
 public:
  PyxWriter(const Library& lib, const EmitOptions& options)
      : lib_(lib), m_(lib), planner_(m_), options_(options), raising_(lib.python.errors == LibraryDescriptor::Errors::Raise) {}

  std::string run() {
    header();
    constants();
    enums();
    status();
    handles();
    values();
    structs();
    callbacks();
    functions();
    sizes();
    return o_.str();
  }

  std::string stub() const {
    if (!raising_) return pyi_.str();
    // nvjitlink's classes drop the C prefix (InputType, Result).
    static const std::regex prefixed_re(R"(\bnvJitLink(InputType|Result)\b)");
    return std::regex_replace(pyi_.str(), prefixed_re, "$1");
  }

 private:
  // Python-visible name of a function.
  std::string py_function_name(const std::string& c_name) const {
    if (!raising_) return c_name;
    // nvJitLinkAddData -> add_data, as cuda.bindings.nvjitlink spells it.
    std::string base = c_name.rfind("nvJitLink", 0) == 0 ? c_name.substr(9) : c_name;
    std::string out;
    for (std::size_t i = 0; i < base.size(); ++i) {
      const char c = base[i];
      if (std::isupper(static_cast<unsigned char>(c))) {
        const bool prev_lower = i > 0 && !std::isupper(static_cast<unsigned char>(base[i - 1]));
        const bool next_lower = i + 1 < base.size() && std::islower(static_cast<unsigned char>(base[i + 1]));
        if (i > 0 && (prev_lower || next_lower)) out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else {
        out += c;
      }
    }
    return out;
  }

  // nvJitLinkInputType's members share NVJITLINK_INPUT_; cuda.bindings drops it.
  static std::string common_prefix(const Enum& e) {
    if (e.enumerators.size() < 2) return "";
    std::string prefix = e.enumerators.front().name;
    for (const auto& v : e.enumerators) {
      std::size_t i = 0;
      while (i < prefix.size() && i < v.name.size() && prefix[i] == v.name[i]) ++i;
      prefix.resize(i);
    }
    const auto underscore = prefix.rfind('_');
    return underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
  }

  std::string py_enum_name(const std::string& name) const {
    if (!raising_) return name;
    if (name.rfind("nvJitLink", 0) == 0) return name.substr(9);  // nvJitLinkInputType -> InputType
    return name;
  }

  void header() {
    o_ << stamp(lib_, options_, "#");
    // binding=False: module functions are plain builtins, which Python calls faster.
    o_ << "# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, binding=False\n";
    o_ << "# distutils: language = c++\n";
    const std::string& title = lib_.python.title;
    o_ << "\"\"\"Bindings of " << title << ".\n\n";
    if (raising_) {
      o_ << "As in cuda.bindings.nvjitlink: snake_case functions that return their outputs and\n"
            "raise nvJitLinkError on failure. Outputs such as the linked cubin come back as new\n"
            "bytes; a caller buffer is still accepted.\n\"\"\"\n\n";
    } else {
      o_ << "As in cuda.bindings: every function returns (status, *outputs); outputs are None\n"
            "when the status is not success. Handles accept their class, an int or None.\n"
            "The GIL is released around every call into the library.\n\"\"\"\n\n";
    }
    o_ << "from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, "
          "intptr_t, uintptr_t\n";
    o_ << "from libc.stdlib cimport calloc, free, malloc\n";
    o_ << "from libc.string cimport memcpy, memset, strlen\n";
    o_ << "from cpython.buffer cimport Py_buffer\n";
    o_ << "from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize\n";
    o_ << "from cubind.bindings cimport " << m_.cy << "\n";
    o_ << "from cubind.bindings cimport _support\n";
    o_ << "from cubind.bindings._support import make_enum as _make_enum\n\n";
    pyi_ << stamp(lib_, options_, "#");
    pyi_ << "from typing import Any, Callable, Optional, Sequence\n";
    pyi_ << "from cubind.bindings._support import Enum, Handle, Struct\n\n";
    pyi_ << "Buffer = Any  # an object exporting a contiguous buffer\n\n";
  }

  void constants() {
    o_ << "# Constants (#define)\n";
    for (const Macro& mc : lib_.macros) {
      switch (mc.kind) {
        case Macro::Kind::Integer:
        case Macro::Kind::Pointer:
          o_ << mc.name << " = " << mc.int_value << "\n";
          pyi_ << mc.name << ": int\n";
          break;
        case Macro::Kind::Float:
          o_ << mc.name << " = " << mc.float_value << "\n";
          pyi_ << mc.name << ": float\n";
          break;
        case Macro::Kind::String:
          o_ << mc.name << " = b\"" << mc.string_value << "\"\n";
          pyi_ << mc.name << ": bytes\n";
          break;
      }
    }
    o_ << "\n";
    pyi_ << "\n";
  }

  // Enum classes are built on first use (module __getattr__): a module holds
  // hundreds of them and most programs touch a few.
  void enums() {
    o_ << "# Enums, built on first use\n";
    // One string per enum ("doc\nNAME VALUE NAME VALUE ..."), split on first use:
    // thousands of separate constants would cost import time.
    o_ << "cdef dict _ENUMS = {\n";
    for (const Enum& e : lib_.enums) {
      if (e.name.rfind("anon_enum", 0) == 0) continue;
      std::string spec = first_sentence(e.doc);
      std::replace(spec.begin(), spec.end(), '\n', ' ');
      spec += "\n";
      for (const auto& v : e.enumerators) spec += v.name + " " + std::to_string(v.value) + " ";
      o_ << "    \"" << py_enum_name(e.name) << "\": " << py_string(spec) << ",\n";
    }
    o_ << "}\n";
    o_ << "cdef dict _ENUM_PREFIXES = {\n";
    if (raising_) {
      for (const Enum& e : lib_.enums) {
        const std::string prefix = common_prefix(e);
        if (!prefix.empty()) o_ << "    \"" << py_enum_name(e.name) << "\": \"" << prefix << "\",\n";
      }
    }
    o_ << "}\n";
    o_ << "cdef dict _ENUM_ALIASES = {\n";
    for (const auto& [name, aliases] : m_.enum_aliases) {
      for (const auto& a : aliases) o_ << "    \"" << py_enum_name(a) << "\": \"" << py_enum_name(name) << "\",\n";
    }
    for (const auto& [alias, target] : lib_.type_aliases) {
      if (const Enum* e = m_.find_enum(target)) {
        o_ << "    \"" << py_enum_name(alias) << "\": \"" << py_enum_name(e->name) << "\",\n";
        pyi_alias_lines_ << py_enum_name(alias) << " = " << py_enum_name(e->name) << "\n";
      }
    }
    o_ << "}\n\n";
    o_ << "def __getattr__(name):\n"
          "    spec = _ENUMS.get(name)\n"
          "    if spec is None:\n"
          "        target = _ENUM_ALIASES.get(name)\n"
          "        if target is None:\n"
          "            raise AttributeError(f\"module {__name__!r} has no attribute {name!r}\")\n"
          "        cls = __getattr__(target)\n"
          "    else:\n"
          "        doc, _, pairs = spec.partition(\"\\n\")\n"
          "        items = pairs.split()\n"
          "        cls = _make_enum(name, __name__, items[0::2], [int(v) for v in items[1::2]], doc or None,\n"
          "                         _ENUM_PREFIXES.get(name))\n"
          "    globals()[name] = cls\n"
          "    return cls\n\n";
    o_ << "def __dir__():\n"
          "    return sorted(set(globals()) | set(_ENUMS) | set(_ENUM_ALIASES))\n\n";
    o_ << "cdef object _enum_member(str name, long long value):\n"
          "    cls = globals().get(name)\n"
          "    if cls is None:\n"
          "        cls = __getattr__(name)\n"
          "    return cls(value)\n\n";
    for (const Enum& e : lib_.enums) {
      if (e.name.rfind("anon_enum", 0) == 0) continue;
      pyi_ << "class " << py_enum_name(e.name) << "(Enum):\n";
      if (!e.doc.empty()) pyi_ << docstring(clean_doc(first_sentence(e.doc)), "    ");
      for (const auto& v : e.enumerators) pyi_ << "    " << v.name << ": " << py_enum_name(e.name) << "\n";
      if (e.enumerators.empty()) pyi_ << "    ...\n";
      pyi_ << "\n";
    }
    for (const auto& [name, aliases] : m_.enum_aliases) {
      for (const auto& a : aliases) pyi_ << py_enum_name(a) << " = " << py_enum_name(name) << "\n";
    }
    pyi_ << "\n";
  }

  void status() {
    status_type_ = lib_.functions.front().result.spelling;
    for (const Function& f : lib_.functions) {
      if (m_.resolve(f.result.spelling).kind == TypeInfo::Kind::Enum) {
        status_type_ = f.result.spelling;
        break;
      }
    }
    const TypeInfo st = m_.resolve(status_type_);
    status_py_ = py_enum_name(st.py);
    o_ << "# The status type: a member per code, the success member cached.\n";
    o_ << "cdef object _SUCCESS = None\n";
    o_ << "cdef dict _STATUS = None\n\n";
    o_ << "cdef object _status(long long code):\n"
          "    global _SUCCESS, _STATUS\n"
          "    if code == 0 and _SUCCESS is not None:\n"
          "        return _SUCCESS\n"
          "    if _STATUS is None:\n"
          "        cls = _enum_class(\""
       << status_py_
       << "\")\n"
          "        _STATUS = {int(m): m for m in cls}\n"
          "        _SUCCESS = cls(0)\n"
          "    member = _STATUS.get(code)\n"
          "    if member is None:\n"
          "        member = _enum_class(\""
       << status_py_
       << "\")(code)\n"
          "    return member\n\n";
    o_ << "cdef object _enum_class(str name):\n"
          "    cls = globals().get(name)\n"
          "    return cls if cls is not None else __getattr__(name)\n\n";
    if (raising_) {
      o_ << "class nvJitLinkError(Exception):\n"
         << "    \"\"\"A failed nvJitLink call: .status is the Result, .log the error log when one was kept.\"\"\"\n\n"
         << "    def __init__(self, status, log=None):\n"
         << "        self.status = status\n"
         << "        self.log = log\n"
         << "        text = f\"{status.name} ({int(status)})\"\n"
         << "        if log:\n"
         << "            text += \":\\n\" + log\n"
         << "        super().__init__(text)\n\n"
         << "    def __reduce__(self):\n"
         << "        return (type(self), (self.status, self.log))\n\n"
         << "cdef int _check(long long code) except -1:\n"
         << "    if code != 0:\n"
         << "        raise nvJitLinkError(_status(code))\n"
         << "    return 0\n\n";
      pyi_ << "class nvJitLinkError(Exception):\n    status: Result\n    log: Optional[str]\n\n";
    }
  }

  void handles() {
    o_ << "# Handles\n";
    for (const auto& name : m_.handle_order) {
      const Typedef* td = m_.find_typedef(name);
      o_ << "cdef class " << name << "(_support.Handle):\n";
      std::string doc = td != nullptr ? clean_doc(first_sentence(td->doc)) : "";
      o_ << docstring(name + "(init_value=0, _ptr=0)\n\n" + (doc.empty() ? "A CUDA handle." : doc) +
                          "\n\nint(h) is its address; getPtr() the address of its storage.",
                      "    ");
      // The C struct the handle points to: classes of the same one (CUstream,
      // cudaStream_t) are accepted for each other.
      std::string record;
      if (td != nullptr) record = td->kind == Typedef::Kind::Handle ? td->record : strip_qualifiers(td->target.canonical);
      record = strip_pointer(record);
      o_ << "\n    _c_type = \"" << record << "\"\n";
      const bool stream = name == "CUstream" || name == "cudaStream_t";
      if (stream) {
        o_ << "\n    def __cuda_stream__(self):\n"
              "        \"\"\"The CUDA stream protocol: (version, address).\"\"\"\n"
              "        return (0, <uintptr_t>self._value)\n";
      }
      o_ << "\n" << wrap_function(name);
      pyi_ << "class " << name << "(Handle):\n    def __init__(self, init_value: int | Handle | None = 0, _ptr: int = 0) -> None: ...\n";
      if (stream) pyi_ << "    def __cuda_stream__(self) -> tuple[int, int]: ...\n";
      pyi_ << "\n";
    }
    // Callback typedefs: the address of a C function, as cuda.bindings' classes
    // of these names hold (for a ctypes CFUNCTYPE object, its address). A
    // function taking a callback accepts one of these, or a Python callable.
    for (const auto& name : m_.function_pointer_order) {
      o_ << "cdef class " << name << "(_support.Handle):\n";
      o_ << docstring(name + "(init_value=0, _ptr=0)\n\nThe address of a C function of type " + name +
                          " (a ctypes function's, ctypes.cast(f, ctypes.c_void_p).value).\n\n"
                          "int(f) is the address; getPtr() the address of its storage.",
                      "    ");
      o_ << "\n    _c_type = \"" << name << "\"\n\n" << wrap_function(name);
      pyi_ << "class " << name << "(Handle):\n    def __init__(self, init_value: int | Handle | None = 0, _ptr: int = 0) -> None: ...\n\n";
    }
    o_ << "\n";
  }

  void values() {
    o_ << "# Integer-valued types with a class of their own (devices, device pointers, ...)\n";
    for (const auto& name : m_.value_order) {
      const std::string c = m_.cy + "." + name;
      o_ << "cdef class " << name << ":\n";
      o_ << docstring(name + "(init_value=0, _ptr=0)\n\nA " + m_.value_c_type(name) +
                          " with a type of its own: int(), ==, hash() and index() use its value.",
                      "    ");
      o_ << "    cdef " << c << " _value\n\n";
      o_ << "    def __init__(self, init_value=0, _ptr=0):\n"
            "        if _ptr:\n"
            "            self._value = (<"
         << c << "*><uintptr_t>_ptr)[0]\n"
                 "        else:\n"
                 "            self._value = <"
         << c << ">_support.as_int(init_value, \"init_value\")\n\n";
      o_ << "    @staticmethod\n"
            "    cdef "
         << name << " _from(" << c << " value):\n"
         << "        cdef " << name << " obj = " << name << ".__new__(" << name << ")\n"
         << "        obj._value = value\n"
            "        return obj\n\n";
      o_ << "    def __int__(self):\n        return self._value\n\n"
            "    def __index__(self):\n        return self._value\n\n"
            "    def __eq__(self, other):\n"
            "        if isinstance(other, "
         << name << "):\n            return self._value == (<" << name
         << ">other)._value\n"
            "        if isinstance(other, int):\n            return self._value == other\n"
            "        return NotImplemented\n\n"
            "    def __lt__(self, other):\n        return self._value < other.__index__()\n\n"
            "    def __le__(self, other):\n        return self._value <= other.__index__()\n\n"
            "    def __gt__(self, other):\n        return self._value > other.__index__()\n\n"
            "    def __ge__(self, other):\n        return self._value >= other.__index__()\n\n"
            "    def __hash__(self):\n        return hash(self._value)\n\n"
            "    def __repr__(self):\n        return f\"<"
         << name << " {self._value}>\"\n\n"
         << "    def getPtr(self):\n        return <uintptr_t>&self._value\n\n"
         << "    def __reduce__(self):\n        return (" << name << ", (self._value,))\n\n";
      pyi_ << "class " << name << ":\n    def __init__(self, init_value: int = 0, _ptr: int = 0) -> None: ...\n"
           << "    def __int__(self) -> int: ...\n    def __index__(self) -> int: ...\n"
           << "    def getPtr(self) -> int: ...\n\n";
    }
  }

  // Fields of a record, C11 anonymous members flattened into it.
  void collect_fields(const Record& r, std::vector<const Field*>& out) const {
    for (const Field& f : r.fields) {
      if (f.anonymous_member) {
        if (const Record* inner = lib_.find_record(f.type.record)) collect_fields(*inner, out);
        continue;
      }
      out.push_back(&f);
    }
  }

  void structs() {
    o_ << "# Structs and unions\n";
    // Classes are declared first: fields of one refer to others.
    for (const auto& sc : m_.structs) {
      const std::string c = m_.cy + "." + sc.record->name;
      o_ << "cdef class " << sc.py << "(_support.Struct):\n";
      std::string doc = clean_doc(sc.record->doc);
      o_ << docstring(sc.py + "(_ptr=0, **fields)\n\n" + (doc.empty() ? std::string(sc.record->is_union ? "A union." : "A struct.") : doc) +
                          "\n\nHolds its own zeroed storage, or views the memory at _ptr. Fields are\n"
                          "attributes; nested structs and array fields write through.",
                      "    ");
      // Storage from the heap, not a member: some C++ types (unions holding dim3)
      // have no default constructor.
      o_ << "    def __cinit__(self, *args, **kwargs):\n"
            "        self._ptr = _support.alloc_struct(sizeof(" << c << "))\n"
            "        self._own = True\n\n";
      o_ << "    def __dealloc__(self):\n"
            "        if self._own:\n"
            "            _support.free_struct(self._ptr)\n\n";
      o_ << "    def __init__(self, _ptr=0, **fields):\n"
            "        if _ptr:\n"
            "            if self._own:\n"
            "                _support.free_struct(self._ptr)\n"
            "                self._own = False\n"
            "            self._ptr = <void*><uintptr_t>_support.as_int(_ptr, \"_ptr\")\n"
            "        for name, value in fields.items():\n"
            "            if name.startswith(\"_\") or not hasattr(type(self), name):\n"
            "                raise AttributeError(f\"" << sc.py << " has no field {name!r}\")\n"
            "            setattr(self, name, value)\n\n";
      o_ << "    @staticmethod\n"
            "    cdef "
         << sc.py << " _view(void* ptr, object owner):\n"
         << "        cdef " << sc.py << " obj = " << sc.py << ".__new__(" << sc.py << ")\n"
         << "        _support.free_struct(obj._ptr)\n"
            "        obj._own = False\n"
            "        obj._ptr = ptr\n"
            "        obj._owner = owner\n"
            "        return obj\n\n";
      o_ << "    @staticmethod\n"
            "    cdef "
         << sc.py << " _copy(const void* ptr):\n"
         << "        cdef " << sc.py << " obj = " << sc.py << ".__new__(" << sc.py << ")\n"
         << "        memcpy(obj._ptr, ptr, sizeof(" << c << "))\n"
            "        return obj\n\n";
      std::vector<const Field*> fields;
      collect_fields(*sc.record, fields);
      std::vector<std::string> names;
      pyi_ << "class " << sc.py << "(Struct):\n    def __init__(self, _ptr: int = 0, **fields: Any) -> None: ...\n";
      for (const Field* f : fields) {
        if (field(c, *f)) names.push_back(f->name);
      }
      o_ << "    def __repr__(self):\n";
      o_ << "        return \"" << sc.py << "(\" + \", \".join(f\"{n}={_safe_repr(self, n)}\" for n in (";
      for (const auto& n : names) o_ << "\"" << python_identifier(n) << "\", ";
      o_ << ")) + \")\"\n\n";
      pyi_ << "\n";
      for (const auto& a : sc.aliases) {
        alias_lines_ << a << " = " << sc.py << "\n";
        pyi_ << a << " = " << sc.py << "\n";
      }
    }
    o_ << "def _safe_repr(obj, name):\n"
          "    try:\n"
          "        return repr(getattr(obj, name))\n"
          "    except Exception as e:\n"
          "        return f\"<{type(e).__name__}>\"\n\n";
    // #define aliases of struct and handle types.
    for (const auto& [alias, target] : lib_.type_aliases) {
      if (const auto* sc = m_.find_struct(target)) {
        alias_lines_ << alias << " = " << sc->py << "\n";
        pyi_alias_lines_ << alias << " = " << sc->py << "\n";
      }
    }
    o_ << alias_lines_.str() << "\n";
  }

  // One property; false when the field has no Python form (it is then left out).
  bool field(const std::string& c, const Field& f) {
    const std::string name = python_identifier(f.name);
    const std::string p = "(<" + c + "*>self._ptr)." + cython_member(f.name);
    std::ostringstream g, s;
    std::string annotation;
    const Type& t = f.type;
    if (t.kind == Type::Kind::Array) {
      const TypeInfo elem = m_.resolve(t.element);
      std::uint64_t n = 1;
      for (auto e : t.extents) n *= e;
      const std::string first = "&" + p + first_element(t);
      if (elem.kind == TypeInfo::Kind::Scalar && elem.is_char) {
        // Text (name) ends at the first NUL; identifiers (uuid bytes, reserved) keep every byte.
        const bool text = f.name.find("name") != std::string::npos || f.name.find("Name") != std::string::npos;
        if (text) {
          g << "        return _support.c_string(<const char*>" << first << ", " << n << ")\n";
        } else {
          g << "        return PyBytes_FromStringAndSize(<const char*>" << first << ", " << n << ")\n";
        }
        s << "        _support.array_assign(<void*>" << first << ", " << n << ", 1, \"b\", value, \"" << f.name << "\")\n";
        annotation = "bytes";
      } else if (elem.kind == TypeInfo::Kind::Scalar || elem.kind == TypeInfo::Kind::Enum || elem.kind == TypeInfo::Kind::Value) {
        const std::string fmt = elem.kind == TypeInfo::Kind::Enum ? "i" : elem.format;
        g << "        return _support.array_view(<void*>" << first << ", " << n << ", sizeof(" << elem.c << "), \""
          << fmt << "\", self)\n";
        s << "        _support.array_assign(<void*>" << first << ", " << n << ", sizeof(" << elem.c << "), \"" << fmt
          << "\", value, \"" << f.name << "\")\n";
        annotation = "memoryview";
      } else if (elem.kind == TypeInfo::Kind::Struct) {
        g << "        return [" << elem.py << "._view(<void*>&(" << first << ")[i], self) for i in range(" << n
          << ")]\n";
        s << "        _support.check_count(value, " << n << ", \"" << f.name << "\", \"its length\")\n"
          << "        for i in range(" << n << "):\n"
          << "            memcpy(&(" << first << ")[i], _support.struct_pointer_required(value[i], " << elem.py
          << ", \"" << f.name << "\"), sizeof(" << elem.c << "))\n";
        annotation = "list[" + elem.py + "]";
      } else if (elem.kind == TypeInfo::Kind::Handle) {
        g << "        return [_wrap_" << elem.py << "(<void*>(" << first << ")[i]) for i in range(" << n
          << ")]\n";
        s << "        _support.check_count(value, " << n << ", \"" << f.name << "\", \"its length\")\n"
          << "        for i in range(" << n << "):\n"
          << "            (" << first << ")[i] = " << to_c(elem, "value[i]", f.name) << "\n";
        annotation = "list[" + elem.py + "]";
      } else {
        return false;
      }
    } else if (t.kind == Type::Kind::Pointer) {
      if (t.pointer_depth == 1 && t.pointee == "char" && t.pointee_const) {
        g << "        return None if " << p << " == NULL else <bytes>" << p << "\n";
        s << "        if value is None:\n"
          << "            " << p << " = NULL\n"
          << "            return\n"
          << "        data = _support.as_bytes(value, \"" << f.name << "\")\n"
          << "        _support.keep(self, \"" << f.name << "\", data)\n"
          << "        " << p << " = PyBytes_AS_STRING(data)\n";
        annotation = "bytes | None";
      } else if (t.pointer_depth == 2 && t.pointee == "void *" && (f.name == "kernelParams" || f.name == "extra")) {
        // As cuLaunchKernel takes them: None, an address, or (values, types), kept by the struct.
        g << "        return <uintptr_t>" << p << "\n";
        // Kept only once packed and addressed: a value refused on the way leaves the field as it was.
        s << "        cdef void** _address\n"
          << "        packed = _support.kernel_params(value)\n"
          << "        _address = _support.kernel_params_pointer(packed)\n"
          << "        _support.keep(self, \"" << f.name << "\", packed)\n"
          << "        " << p << " = <" << pointer_c(t) << ">_address\n";
        annotation = "int";
      } else if (t.pointer_depth == 1 && m_.resolve(t.pointee).kind == TypeInfo::Kind::Struct) {
        // CUlaunchConfig.attrs: a struct, a sequence of them (copied into one array the
        // struct keeps), an address or None.
        const TypeInfo elem = m_.resolve(t.pointee);
        g << "        return <uintptr_t>" << p << "\n";
        s << "        " << p << " = <" << pointer_c(t) << ">_support.struct_array_field(value, " << elem.py
          << ", sizeof(" << elem.c << "), self, \"" << f.name << "\")\n";
        annotation = "int";
      } else {
        g << "        return <uintptr_t>" << p << "\n";
        s << "        " << p << " = <" << pointer_c(t) << ">_support.field_address(value, self, \"" << f.name
          << "\")\n";
        annotation = "int";
      }
    } else {
      const TypeInfo ti = m_.resolve(t.spelling);
      switch (ti.kind) {
        case TypeInfo::Kind::Scalar:
          g << "        return " << p << "\n";
          s << "        " << p << " = " << to_c(ti, "value", f.name) << "\n";
          annotation = ti.is_float ? "float" : "int";
          break;
        case TypeInfo::Kind::Enum:
        case TypeInfo::Kind::Handle:
        case TypeInfo::Kind::Value:
        case TypeInfo::Kind::FunctionPointer:
          g << "        return " << to_python(ti, p) << "\n";
          s << "        " << p << " = " << to_c(ti, "value", f.name) << "\n";
          annotation = py_result_annotation(ti);
          break;
        case TypeInfo::Kind::Struct:
          g << "        return " << ti.py << "._view(<void*>&" << p << ", self)\n";
          s << "        memcpy(&" << p << ", _support.struct_pointer_required(value, " << ti.py << ", \"" << f.name
            << "\"), sizeof(" << p << "))\n";
          annotation = ti.py;
          break;
        default: return false;
      }
    }
    o_ << "    @property\n    def " << name << "(self):\n";
    if (!f.doc.empty()) o_ << docstring(clean_doc(f.doc), "        ");
    o_ << g.str() << "\n";
    o_ << "    @" << name << ".setter\n    def " << name << "(self, value):\n" << s.str() << "\n";
    pyi_ << "    " << name << ": " << annotation << "\n";
    return true;
  }

  static std::string first_element(const Type& t) {
    std::string s;
    for (std::size_t i = 0; i < t.extents.size(); ++i) s += "[0]";
    return s;
  }

  std::string pointer_c(const Type& t) const {
    // The field's C pointer type, spelled for Cython.
    std::string s = t.spelling;
    static const std::regex keyword_re(R"(\b(struct|union|enum)\s+)");
    s = std::regex_replace(s, keyword_re, "");
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
        out += id;
      } else {
        out += m_.cy + "." + id;
      }
      last = it->position() + it->length();
    }
    out += s.substr(last);
    return out;
  }

  // Trampolines for the callback types that functions take with user data.
  void callbacks() {
    std::set<std::string> types;
    for (const Function& f : lib_.functions) {
      if (lib_.skipped.count(f.name)) continue;
      try {
        for (const Plan& pl : planner_.plan(f)) {
          if (pl.role == Role::Callback) types.insert(pl.type.py);
        }
      } catch (const std::runtime_error&) {
        // Reported once, by functions().
      }
    }
    if (types.empty()) return;
    o_ << "# Trampolines: CUDA calls these with the context made by _support.callback_context.\n";
    for (const auto& name : types) {
      const Typedef* td = m_.find_typedef(name);
      const int user = planner_.callback_user_param(name);
      const bool one_shot = one_shot_callback(name);
      o_ << "cdef " << cython_c(td->fn_result.spelling) << " _callback_" << name << "(";
      for (std::size_t i = 0; i < td->fn_params.size(); ++i) {
        if (i) o_ << ", ";
        o_ << cython_c(td->fn_params[i].type.spelling) << " " << python_identifier(td->fn_params[i].name);
      }
      o_ << ") noexcept with gil:\n";
      o_ << "    _support.callback_invoke(" << python_identifier(td->fn_params[user].name) << ", (";
      for (std::size_t i = 0; i < td->fn_params.size(); ++i) {
        if (static_cast<int>(i) == user) continue;
        const TypeInfo ti = m_.resolve(td->fn_params[i].type.spelling);
        const std::string n = python_identifier(td->fn_params[i].name);
        if (ti.kind == TypeInfo::Kind::Enum && ti.py == m_.resolve(status_type_).py) {
          o_ << "_status(" << n << "), ";
        } else if (ti.kind == TypeInfo::Kind::Unknown || ti.kind == TypeInfo::Kind::Void) {
          o_ << "<uintptr_t>" << n << ", ";
        } else {
          o_ << to_python(ti, n) << ", ";
        }
      }
      o_ << "))\n";
      if (one_shot) o_ << "    _support.callback_finished(" << python_identifier(td->fn_params[user].name) << ")\n";
      if (td->fn_result.spelling != "void") o_ << "    return 0\n";
      o_ << "\n";
    }
  }

  static bool one_shot_callback(const std::string& name) {
    // Called once per registration: host functions and stream callbacks.
    static const std::set<std::string> one_shot = {"CUhostFn", "CUstreamCallback", "cudaHostFn_t",
                                                   "cudaStreamCallback_t"};
    return one_shot.count(name) != 0;
  }

  std::string cython_c(const std::string& spelling) const {
    Type t;
    t.spelling = spelling;
    std::string s = pointer_c(t);
    // The raw layer's function pointers are noexcept nogil (declared in a nogil block).
    if (s.find("(*)") != std::string::npos) s += " noexcept nogil";
    return s;
  }

  // -------------------------------------------------------------------------
  // Functions

  void functions() {
    o_ << "# Functions\n";
    for (const Function& f : lib_.functions) {
      if (lib_.skipped.count(f.name)) continue;
      try {
        function(f, f.name);
        for (const auto& alias : f.aliases) function(f, alias);
      } catch (const std::runtime_error& e) {
        errors_.push_back(e.what());
      }
    }
  }

 public:
  const std::vector<std::string>& errors() const { return errors_; }

 private:

  void function(const Function& f, const std::string& public_name) {
    const std::vector<Plan> plans = planner_.plan(f);
    const TypeInfo result = m_.resolve(f.result.spelling);
    const bool returns_status = f.result.spelling == status_type_;
    const std::string py_name = py_function_name(public_name);
    std::ostringstream body, cleanup, call_args, sig, pyi_sig, init_refs;
    std::vector<std::string> out_exprs, out_annotations, out_names;

    // Locals are declared first (Cython wants cdef at the top of a function).
    std::ostringstream locals;
    locals << "    cdef " << (returns_status ? "long long" : cython_c(f.result.spelling)) << " _result\n";
    const auto add_arg = [&](const std::string& decl, const std::string& annotation) {
      sig_parts_.push_back(decl);
      stub_parts_.push_back(annotation);
      // The Python name is the last word of the declaration ("unsigned int Flags" -> "Flags").
      const auto space = decl.rfind(' ');
      arg_names_.push_back(space == std::string::npos ? decl : decl.substr(space + 1));
    };
    // Inout parameters become optional arguments: they come last, in order.
    std::vector<const Plan*> optional;
    bool needs_try = false;
    std::map<std::string, const Plan*> by_name;
    for (const Plan& pl : plans) by_name[pl.param->name] = &pl;

    for (const Plan& pl : plans) {
      const std::string n = pl.py_name;
      const std::string cn = "_c_" + n;
      const std::string pn = pl.param->name;
      switch (pl.role) {
        case Role::Scalar:
          add_arg(pl.type.c + " " + n, n + ": " + py_annotation(pl.type));
          call_args << n;
          break;
        case Role::Enum:
        case Role::Handle:
        case Role::Value:
          add_arg(n, n + ": " + py_annotation(pl.type));
          locals << "    cdef " << pl.type.c << " " << cn << "\n";
          body << "    " << cn << " = " << to_c(pl.type, n, pn) << "\n";
          call_args << cn;
          break;
        case Role::FunctionPointer:
          // The address of a C function (ctypes.cast(fn, c_void_p).value), or None.
          add_arg(n, n + ": int | None");
          locals << "    cdef void* " << cn << "\n";
          body << "    " << cn << " = _support.plain_address(" << n << ", \"" << pn << "\")\n";
          if (pl.param->nullable < 0) {
            // The library calls it without a check (cuVDPAUCtxCreate's vdpGetProcAddress).
            body << "    if " << cn << " == NULL:\n        raise ValueError(\"" << pn
                 << ": the library calls this function, so it cannot be None or 0\")\n";
          }
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          break;
        case Role::StructValue:
          add_arg(n, n + ": " + pl.type.py);
          locals << "    cdef " << pl.type.c << "* " << cn << "\n";
          body << "    " << cn << " = <" << pl.type.c << "*>_support.struct_pointer_required(" << n << ", " << pl.type.py
               << ", \"" << pn << "\")\n";
          call_args << cn << "[0]";
          break;
        case Role::StructIn:
        case Role::InTyped:
          if (pl.role == Role::StructIn) {
            const bool nullable = accepts_null(f, *pl.param);
            add_arg(n, n + ": " + (nullable ? "Optional[" + pl.type.py + "]" : pl.type.py));
            locals << "    cdef void* " << cn << "\n";
            body << "    " << cn << " = _support." << (nullable ? "struct_pointer" : "struct_pointer_required") << "(" << n
                 << ", " << pl.type.py << ", \"" << pn << "\")\n";
            call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          } else {
            // The value's type follows the attribute: a typed value converted by _typed_in.
            add_arg(n, n + ": Any");
            locals << "    cdef _support.TypedValue " << cn << "\n";
            after_inputs_ << "    " << cn << " = _typed_value(\"" << attribute_enum(f, pl) << "\", "
                          << python_identifier(pl.typed_by) << ", " << n << ", \"" << pn << "\", "
                          << size_hint(pl, by_name) << ")\n";
            fill_default_size(pl, by_name, cn);
            call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn << ".ptr";
          }
          break;
        case Role::String: {
          // None (NULL) only where the header says the call takes NULL.
          const bool nullable = accepts_null(f, *pl.param);
          add_arg(n, n + (nullable ? ": bytes | str | None" : ": bytes | str"));
          locals << "    cdef const char* " << cn << " = NULL\n";
          body << "    _b_" << n << " = "
               << (nullable ? "None if " + n + " is None else " : std::string())
               << "_support.as_bytes(" << n << ", \"" << pn << "\")\n"
               << "    if _b_" << n << " is not None:\n"
               << "        " << cn << " = PyBytes_AS_STRING(_b_" << n << ")\n";
          call_args << cn;
          break;
        }
        case Role::Address: {
          add_arg(n, n + ": int | Buffer | None");
          locals << "    cdef _support.BufferRef _view_" << n << "\n    cdef void* " << cn << "\n";
          init_refs << "    _view_" << n << ".held = False\n";
          // A destination (dst, dstHost) or a caller's buffer the call fills
          // (inout) must be writable; other buffers the call reads.
          std::string lower = pl.param->name;
          std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
          const bool writable =
              !pl.param->type.pointee_const && (lower.rfind("dst", 0) == 0 || pl.param->direction == "inout");
          if (pl.param->nullable < 0) {
            body << "    if " << n << " is None:\n        raise TypeError(\"" << pn << " cannot be None\")\n";
          }
          body << "    " << cn << " = _support.address(" << n << ", &_view_" << n << ", " << (writable ? "True" : "False")
               << ", \"" << pn << "\")\n";
          // A caller's buffer of `size_param` bytes (annotation `size:`) must hold them.
          if (!pl.param->size_param.empty()) {
            const auto sized = by_name.find(pl.param->size_param);
            if (sized == by_name.end()) throw std::runtime_error(f.name + ": size names no parameter");
            const std::string size_py = sized->second->py_name;
            body << "    if _view_" << n << ".held and <size_t>_view_" << n << ".view.len < <size_t>_support.as_int("
                 << size_py << ", \"" << sized->second->param->name << "\"):\n"
                 << "        _support.release_address(&_view_" << n << ")\n"
                 << "        raise ValueError(f\"" << pn << " holds {len(memoryview(" << n << ").cast('B'))} bytes but "
                 << sized->second->param->name << " is {" << size_py << "}\")\n";
          }
          // A buffer given for a copy must hold the bytes the call moves.
          for (const Plan& q : plans) {
            static const std::set<std::string> byte_counts = {"ByteCount", "count", "bytesize", "sizeInBytes"};
            if (q.role == Role::Scalar && byte_counts.count(q.param->name) && q.type.c == "size_t") {
              body << "    if _view_" << n << ".held and <size_t>_view_" << n << ".view.len < " << q.py_name << ":\n"
                   << "        _support.release_address(&_view_" << n << ")\n"
                   << "        raise ValueError(f\"" << pn << " holds {len(memoryview(" << n << ").cast('B'))} bytes but "
                   << q.param->name << " is {" << q.py_name << "}\")\n";
            }
          }
          cleanup << "        _support.release_address(&_view_" << n << ")\n";
          needs_try = true;
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          break;
        }
        case Role::KernelParams:
          add_arg(n, n + ": Any");
          locals << "    cdef void** " << cn << "\n";
          body << "    _k_" << n << " = _support.kernel_params(" << n << ")\n"
               << "    " << cn << " = _support.kernel_params_pointer(_k_" << n << ")\n";
          call_args << cn;
          break;
        case Role::Callback: {
          add_arg(n, n + ": Callable[..., None] | " + pl.type.py);
          // A Python callable runs through the trampoline, which consumes the
          // user data argument; a C function's address (an int or a
          // function-pointer object) is passed as it is, with the user data.
          locals << "    cdef void* _ctx = NULL\n    cdef " << pl.type.c << " " << cn << "\n"
                 << "    cdef bint _trampoline = False\n";
          call_args << cn;
          callback_ = &pl;
          break;
        }
        case Role::UserData:
          add_arg(n, n + ": Any");
          call_args << "_ctx";
          break;
        case Role::ArrayIn: {
          const std::string count = pl.count_is_fixed ? pl.count : python_identifier(pl.count);
          add_arg(n, n + ": Sequence[" + (pl.type.is_char ? std::string("bytes | str") : py_annotation(pl.type)) + "] | None");
          const std::string elem_c = pl.type.is_char ? "const char*" : pl.type.c;
          locals << "    cdef " << elem_c << "* " << cn << " = NULL\n    cdef Py_ssize_t _i_" << n << "\n";
          body << "    _support.check_count(" << n << ", " << count << ", \"" << pn << "\", \""
               << (pl.count_is_fixed ? std::string("the required length") : pl.count) << "\")\n";
          body << "    if " << count << " > 0:\n"
               << "        " << cn << " = <" << elem_c << "*>_support.alloc_array(" << count << ", sizeof(" << elem_c
               << "))\n";
          cleanup << "        free(" << cn << ")\n";
          needs_try = true;
          if (pl.type.is_char) {
            body << "        _keep_" << n << " = [_support.as_bytes(x, \"" << pn << "\") for x in " << n << "[:" << count
                 << "]]\n"
                 << "        for _i_" << n << " in range(" << count << "):\n"
                 << "            " << cn << "[_i_" << n << "] = PyBytes_AS_STRING(_keep_" << n << "[_i_" << n << "])\n";
          } else if (pl.type.c == "void*") {
            body << "        for _i_" << n << " in range(" << count << "):\n"
                 << "            " << cn << "[_i_" << n << "] = _support.plain_address(" << n << "[_i_" << n << "], \""
                 << pn << "\")\n";
          } else if (pl.type.kind == TypeInfo::Kind::Struct) {
            body << "        for _i_" << n << " in range(" << count << "):\n"
                 << "            memcpy(&" << cn << "[_i_" << n << "], _support.struct_pointer_required(" << n << "[_i_"
                 << n << "], " << pl.type.py << ", \"" << pn << "\"), sizeof(" << elem_c << "))\n";
          } else {
            body << "        for _i_" << n << " in range(" << count << "):\n"
                 << "            " << cn << "[_i_" << n << "] = " << to_c(pl.type, n + "[_i_" + n + "]", pn) << "\n";
          }
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          break;
        }
        case Role::OutScalar: {
          const std::string& elem_c = pl.type.c;
          locals << "    cdef " << elem_c << " " << cn << "\n";
          body << "    memset(&" << cn << ", 0, sizeof(" << cn << "))\n";
          call_args << "&" << cn;
          out_exprs.push_back(to_python(pl.type, cn));
          out_annotations.push_back(py_result_annotation(pl.type));
          out_names.push_back(n);
          break;
        }
        case Role::InPointer:
          add_arg(n, n + ": " + py_annotation(pl.type));
          locals << "    cdef " << pl.type.c << " " << cn << "\n";
          body << "    " << cn << " = " << to_c(pl.type, n, pn) << "\n";
          call_args << "<" << cython_c(pl.param->type.spelling) << ">&" << cn;
          if (pl.type.kind == TypeInfo::Kind::Handle) {
            // Destroy functions zero the handle they are given: so does its object.
            writebacks_ << "    if isinstance(" << n << ", _support.Handle):\n"
                        << "        _support.set_handle(" << n << ", <void*>" << cn << ")\n";
          }
          break;
        case Role::InOut: {
          const std::string elem_c = pl.type.c;
          optional.push_back(&pl);
          locals << "    cdef " << elem_c << " " << cn << "\n";
          if (pl.param->nullable > 0) {
            // None passes NULL (cuLogsDumpToMemory's iterator: dump every log) and comes back as None.
            add_arg(n, n + ": " + py_annotation(pl.type) + " | None");
            locals << "    cdef " << elem_c << "* _p_" << n << " = &" << cn << "\n";
            body << "    if " << n << " is None:\n        _p_" << n << " = NULL\n    else:\n        " << cn << " = "
                 << to_c(pl.type, n, pn) << "\n";
            call_args << "_p_" << n;
            out_exprs.push_back("None if _p_" + n + " == NULL else " + to_python(pl.type, cn));
          } else {
            add_arg(n, n + ": " + py_annotation(pl.type));
            body << "    " << cn << " = " << to_c(pl.type, n, pn) << "\n";
            call_args << "&" << cn;
            out_exprs.push_back(to_python(pl.type, cn));
          }
          out_annotations.push_back(py_result_annotation(pl.type));
          out_names.push_back(n);
          break;
        }
        case Role::OutStruct:
          locals << "    cdef " << pl.type.py << " " << cn << " = " << pl.type.py << "()\n";
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn << "._ptr";
          out_exprs.push_back(cn);
          out_annotations.push_back(pl.type.py);
          out_names.push_back(n);
          break;
        case Role::OutString:
          locals << "    cdef const char* " << cn << " = NULL\n";
          call_args << "&" << cn;
          out_exprs.push_back("None if " + cn + " == NULL else <bytes>" + cn);
          out_annotations.push_back("bytes | None");
          out_names.push_back(n);
          break;
        case Role::OutPointer:
          locals << "    cdef void* " << cn << " = NULL\n";
          call_args << "<" << cython_c(pl.param->type.spelling) << ">&" << cn;
          out_exprs.push_back("<uintptr_t>" + cn);
          out_annotations.push_back("int");
          out_names.push_back(n);
          break;
        case Role::OutBuffer: {
          const std::string size = pl.count.empty() ? "8" : (pl.count_is_fixed ? pl.count : python_identifier(pl.count));
          locals << "    cdef char* " << cn << " = NULL\n";
          body << "    if " << size << " < 0:\n"
               << "        raise ValueError(f\"" << (pl.count.empty() ? "size" : pl.count) << " cannot be negative ({"
               << size << "})\")\n"
               << "    " << cn << " = <char*>_support.alloc_array(" << size << " if " << size << " > 0 else 1, 1)\n";
          cleanup << "        free(" << cn << ")\n";
          needs_try = true;
          call_args << cn;
          if (pl.count.empty()) {
            out_exprs.push_back("PyBytes_FromStringAndSize(" + cn + ", " + size + ")");
          } else {
            out_exprs.push_back("_support.c_string(" + cn + ", " + size + ")");
          }
          out_annotations.push_back("bytes");
          out_names.push_back(n);
          break;
        }
        case Role::OutSized: {
          // An optional caller buffer; by default a new one of the reported size.
          add_arg(n, n + ": Buffer | None");
          optional.push_back(&pl);
          const std::string elem = pl.param->type.pointee;
          const bool bytes_out = elem == "char" || elem == "void";
          locals << "    cdef _support.BufferRef _view_" << n << "\n    cdef void* " << cn << " = NULL\n    cdef "
                 << size_type(pl) << " _n_" << n << " = 0\n";
          init_refs << "    _view_" << n << ".held = False\n";
          if (!bytes_out) locals << "    cdef " << pl.type.c << "* _a_" << n << " = NULL\n";
          body << size_query(f, pl, "_n_" + n);
          if (bytes_out) {
            body << "    _out_" << n << " = _support.sized_output(" << n << ", _n_" << n << ", &_view_" << n << ", &"
                 << cn << ", \"" << pn << "\", \"" << (pl.size_from ? pl.size_from->name : std::string("the call"))
                 << "\")\n";
            cleanup << "        _support.release_address(&_view_" << n << ")\n";
            // A buffer made here comes back as bytes; the caller's comes back as it is.
            out_exprs.push_back("(bytes(_out_" + n + ") if " + n + " is None else " + n + ")");
            out_annotations.push_back("bytes");
          } else {
            body << "    _view_" << n << ".held = False\n"
                 << "    _a_" << n << " = <" << pl.type.c << "*>_support.alloc_array(_n_" << n << " if _n_" << n
                 << " > 0 else 1, sizeof(" << pl.type.c << "))\n"
                 << "    " << cn << " = _a_" << n << "\n";
            cleanup << "        free(_a_" << n << ")\n";
            out_exprs.push_back("[" + to_python(pl.type, "_a_" + n + "[i]") + " for i in range(_n_" + n + ")]");
            out_annotations.push_back("list[" + py_result_annotation(pl.type) + "]");
          }
          needs_try = true;
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          out_names.push_back(n);
          break;
        }
        case Role::OutArray: {
          const Plan* count_plan = by_name.count(pl.count) ? by_name.at(pl.count) : nullptr;
          std::string count_expr;
          if (pl.count_is_fixed) {
            count_expr = pl.count;
          } else if (count_plan != nullptr && count_plan->role == Role::InOut) {
            count_expr = "_c_" + count_plan->py_name;
          } else {
            count_expr = python_identifier(pl.count);
          }
          const std::string& elem_c = pl.type.c;
          locals << "    cdef " << elem_c << "* " << cn << " = NULL\n    cdef Py_ssize_t _cap_" << n << " = 0\n";
          // The capacity is read before the call (an inout count is overwritten by it).
          after_inputs_ << "    _cap_" << n << " = <Py_ssize_t>" << count_expr << "\n"
                        << "    if _cap_" << n << " < 0:\n"
                        << "        raise ValueError(f\"" << pl.count << " cannot be negative ({_cap_" << n << "})\")\n"
                        << "    if _cap_" << n << " > 0:\n"
                        << "        " << cn << " = <" << elem_c << "*>_support.alloc_array(_cap_" << n << ", sizeof("
                        << elem_c << "))\n";
          cleanup << "        free(" << cn << ")\n";
          needs_try = true;
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          const std::string n_out = count_plan != nullptr && count_plan->role == Role::InOut
                                        ? "min(_cap_" + n + ", <Py_ssize_t>" + count_expr + ")"
                                        : "_cap_" + n;
          out_exprs.push_back("[" + to_python(pl.type, cn + "[i]") + " for i in range(" + n_out + ")]");
          out_annotations.push_back("list[" + py_result_annotation(pl.type) + "]");
          out_names.push_back(n);
          break;
        }
        case Role::OutArrayRef: {
          const Plan* count_plan = by_name.count(pl.count) ? by_name.at(pl.count) : nullptr;
          const std::string count_expr = count_plan ? "_c_" + count_plan->py_name : pl.count;
          locals << "    cdef const " << pl.type.c << "* " << cn << " = NULL\n";
          call_args << "<" << cython_c(pl.param->type.spelling) << ">&" << cn;
          out_exprs.push_back("[] if " + cn + " == NULL else [" + to_python(pl.type, cn + "[i]") + " for i in range(" +
                              count_expr + ")]");
          out_annotations.push_back("list[" + py_result_annotation(pl.type) + "]");
          out_names.push_back(n);
          break;
        }
        case Role::OutTyped: {
          // Storage for the largest value the attribute can select; converted after the call.
          locals << "    cdef _support.TypedValue " << cn << "\n";
          after_inputs_ << "    " << cn << " = _typed_value(\"" << attribute_enum(f, pl) << "\", "
                        << python_identifier(pl.typed_by) << ", None, \"" << pn << "\", " << size_hint(pl, by_name)
                        << ")\n";
          fill_default_size(pl, by_name, cn);
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn << ".ptr";
          out_exprs.push_back(cn + ".value()");
          out_annotations.push_back("Any");
          out_names.push_back(n);
          break;
        }
        case Role::OutTypedArray: {
          // One TypedValue per attribute of the attributes array.
          const std::string attrs = python_identifier(pl.typed_by);
          const std::string count = python_identifier(pl.count);
          std::string sizes;
          for (const Plan& q : plans) {
            if (q.role == Role::ArrayIn && q.count == pl.count && q.param->name.find("Size") != std::string::npos) {
              sizes = q.py_name;
            }
          }
          locals << "    cdef void** " << cn << " = NULL\n    cdef Py_ssize_t _i_" << n << "\n";
          after_inputs_ << "    _tv_" << n << " = [_typed_value(\"" << attribute_enum(f, pl) << "\", " << attrs
                        << "[_i_" << n << "], None, \"" << pn << "\", " << (sizes.empty() ? "0" : sizes + "[_i_" + n + "]")
                        << ") for _i_" << n << " in range(" << count << ")]\n"
                        << "    " << cn << " = <void**>_support.alloc_array(" << count << ", sizeof(void*))\n"
                        << "    for _i_" << n << " in range(" << count << "):\n"
                        << "        " << cn << "[_i_" << n << "] = (<_support.TypedValue>_tv_" << n << "[_i_" << n
                        << "]).ptr\n";
          cleanup << "        free(" << cn << ")\n";
          needs_try = true;
          call_args << "<" << cython_c(pl.param->type.spelling) << ">" << cn;
          out_exprs.push_back("[v.value() for v in _tv_" + n + "]");
          out_annotations.push_back("list[Any]");
          out_names.push_back(n);
          break;
        }
      }
      call_args << ", ";
    }
    // Arguments keep the C order (as in cuda.bindings); the trailing run of
    // inout values and optional buffers gets defaults (0, None).
    {
      std::vector<std::string> decls = sig_parts_, stubs = stub_parts_;
      for (std::size_t i = decls.size(); i-- > 0;) {
        const Plan* opt = nullptr;
        for (const Plan* pl : optional) {
          if (pl->py_name == arg_names_[i]) opt = pl;
        }
        if (opt == nullptr) break;
        const std::string dflt = opt->role == Role::OutSized ? "None" : "0";
        decls[i] = opt->py_name + "=" + dflt;
        stubs[i] += " = " + dflt;
      }
      sig.str("");
      pyi_sig.str("");
      for (std::size_t i = 0; i < decls.size(); ++i) {
        sig << (i ? ", " : "") << decls[i];
        pyi_sig << (i ? ", " : "") << stubs[i];
      }
      sig_parts_.clear();
      stub_parts_.clear();
      arg_names_.clear();
    }

    std::string args = call_args.str();
    if (args.size() >= 2) args.resize(args.size() - 2);

    // Render.
    o_ << "def " << py_name << "(" << sig.str() << "):\n";
    o_ << docstring(function_doc(f, public_name, plans, out_names), "    ");
    o_ << locals.str();
    // Everything from the first conversion on runs inside try/finally when
    // something must be released (buffers, arrays), so a failed conversion of
    // a later argument releases what an earlier one acquired.
    std::ostringstream inner;
    inner << body.str() << after_inputs_.str();
    after_inputs_.str("");
    if (callback_ != nullptr) {
      const Plan* user = nullptr;
      for (const Plan& pl : plans) {
        if (pl.role == Role::UserData) user = &pl;
      }
      // A host function launched into a stream that is being captured runs at
      // every launch of the graph: its context must outlive the first run.
      std::string one_shot = "True";
      for (const Plan& pl : plans) {
        if (pl.role == Role::Handle && (pl.type.py == "CUstream" || pl.type.py == "cudaStream_t")) {
          const bool drv = pl.type.py == "CUstream";
          o_ << "    cdef " << m_.cy << "." << (drv ? "CUstreamCaptureStatus" : "cudaStreamCaptureStatus")
             << " _capture = " << m_.cy << "." << (drv ? "CU_STREAM_CAPTURE_STATUS_NONE" : "cudaStreamCaptureStatusNone")
             << "\n";
          inner << "    with nogil:\n        " << m_.cy << "." << (drv ? "cuStreamIsCapturing" : "cudaStreamIsCapturing")
                << "(_c_" << pl.py_name << ", &_capture)\n";
          one_shot = std::string("_capture == ") + m_.cy + "." +
                     (drv ? "CU_STREAM_CAPTURE_STATUS_NONE" : "cudaStreamCaptureStatusNone");
        }
      }
      if (!one_shot_callback(callback_->type.py)) one_shot = "False";
      const std::string fn = callback_->py_name;
      const std::string user_arg = user ? user->py_name : std::string("None");
      // A bare int is refused: an address is named as one by its class, so a
      // stray number never reaches the driver as a function to call.
      inner << "    if " << fn << " is None or isinstance(" << fn << ", " << callback_->type.py << "):\n"
            << "        _c_" << fn << " = <" << callback_->type.c << ">_support.plain_address(" << fn << ", \"" << fn
            << "\")\n"
            << "        _ctx = _support.plain_address(" << user_arg << ", \"" << user_arg << "\")\n"
            << "    elif isinstance(" << fn << ", int):\n"
            << "        raise TypeError(f\"" << fn << ": expected a callable or " << callback_->type.py
            << "(address) for a C function, got the int {" << fn << "}\")\n"
            << "    else:\n"
            << "        _ctx = _support.callback_context(" << fn << ", " << user_arg << ", " << one_shot << ")\n"
            << "        _c_" << fn << " = <" << callback_->type.c << ">_callback_" << callback_->type.py << "\n"
            << "        _trampoline = True\n";
    }
    const std::string in = "    ";
    if (f.header_inline) {
      // A helper defined in the header (make_cudaExtent): no library call, so
      // no GIL release, and its value comes back alone, as in cuda.bindings.
      inner << in << "_result = " << m_.cy << "." << public_name << "(" << args << ")\n";
    } else {
      inner << in << "with nogil:\n";
      inner << in << "    _result = " << m_.cy << "." << public_name << "(" << args << ")\n";
    }
    inner << writebacks_.str();
    writebacks_.str("");
    if (callback_ != nullptr) {
      // Not registered: the trampoline will never run to release the context.
      inner << in << "if _result != 0 and _trampoline:\n" << in << "    _support.callback_discard(_ctx)\n";
      callback_ = nullptr;
    }
    if (raising_) {
      inner << in << "_check(_result)\n";
      if (out_exprs.empty()) {
        inner << in << "return None\n";
      } else if (out_exprs.size() == 1) {
        inner << in << "return " << out_exprs[0] << "\n";
      } else {
        inner << in << "return (";
        for (const auto& e : out_exprs) inner << e << ", ";
        inner << ")\n";
      }
    } else if (returns_status) {
      if (out_exprs.empty()) {
        inner << in << "return (_status(_result),)\n";
      } else {
        inner << in << "if _result != 0:\n" << in << "    return (_status(_result)";
        for (std::size_t i = 0; i < out_exprs.size(); ++i) inner << ", None";
        inner << ")\n" << in << "return (_status(0)";
        for (const auto& e : out_exprs) inner << ", " << e;
        inner << ")\n";
      }
    } else if (f.header_inline) {
      inner << in << "return " << to_python_result(result, f.result.spelling, "_result") << "\n";
    } else {
      // A function that returns a value rather than a status (cudaGetErrorString).
      inner << in << "return (_status(0), " << to_python_result(result, f.result.spelling, "_result");
      for (const auto& e : out_exprs) inner << ", " << e;
      inner << ")\n";
    }
    if (needs_try) {
      o_ << init_refs.str() << "    try:\n" << indent(inner.str(), "    ") << "    finally:\n" << cleanup.str();
    } else {
      o_ << inner.str();
    }
    o_ << "\n";

    // Stub.
    std::string ret;
    if (f.header_inline) {
      ret = py_result_annotation(result);
    } else if (raising_) {
      ret = out_annotations.empty() ? "None"
            : out_annotations.size() == 1
                ? out_annotations[0]
                : "tuple[" + join(out_annotations) + "]";
    } else {
      std::vector<std::string> parts = {status_py_};
      if (!returns_status) parts.push_back(py_result_annotation(result) == "Any" ? "bytes | None" : py_result_annotation(result));
      for (const auto& a : out_annotations) parts.push_back(a);
      ret = "tuple[" + join(parts) + "]";
    }
    pyi_ << "def " << py_name << "(" << pyi_sig.str() << ") -> " << ret << ":\n";
    pyi_ << docstring(clean_doc(first_sentence(f.doc)), "    ");
    pyi_ << "    ...\n\n";
  }

  // The C type a size function reports through its output (size_t, int).
  std::string size_type(const Plan& pl) const {
    for (const Param& q : pl.size_from->params) {
      if (q.direction == "out") return cython_c(q.type.pointee);
    }
    throw std::runtime_error(pl.size_from->name + " has no output for the size");
  }

  std::string to_python_result(const TypeInfo& t, const std::string& spelling, const std::string& expr) const {
    if (spelling == "const char *") return "None if " + expr + " == NULL else <bytes>" + expr;
    return to_python(t, expr);
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  // The call that reports an OutSized buffer's size: the same leading
  // arguments by name, and an output for the size.
  std::string size_query(const Function& f, const Plan& pl, const std::string& out) const {
    const Function* sf = pl.size_from;
    std::ostringstream s;
    std::string args;
    for (const Param& q : sf->params) {
      if (!args.empty()) args += ", ";
      if (q.direction == "out") {
        args += "<" + cython_c(q.type.spelling) + ">&" + out;
      } else {
        // Same-named parameter of this function, converted as it was.
        args += "_c_" + python_identifier(q.name);
        bool found = std::any_of(f.params.begin(), f.params.end(), [&](const Param& p) { return p.name == q.name; });
        if (!found) throw std::runtime_error(f.name + ": " + sf->name + " takes '" + q.name + "', which " + f.name + " lacks");
      }
    }
    s << "    with nogil:\n        _result = " << m_.cy << "." << sf->name << "(" << args << ")\n";
    if (raising_) {
      s << "    _check(_result)\n";
    } else {
      s << "    if _result != 0:\n        return (_status(_result), None)\n";
    }
    return s.str();
  }

  // An inout size left at 0 takes the typed value's own size.
  void fill_default_size(const Plan& pl, const std::map<std::string, const Plan*>& by_name, const std::string& cn) {
    if (pl.param->size_param.empty()) return;
    auto it = by_name.find(pl.param->size_param);
    if (it == by_name.end() || it->second->role != Role::InOut) return;
    const std::string size = "_c_" + it->second->py_name;
    after_inputs_ << "    if " << size << " == 0:\n        " << size << " = " << cn << ".nbytes\n";
  }

  // Whether a pointer parameter takes NULL: an annotation says so, or the
  // header's documentation mentions NULL near the parameter's name.
  static bool accepts_null(const Function& f, const Param& p) {
    if (p.nullable != 0) return p.nullable > 0;
    if (p.doc.find("NULL") != std::string::npos) return true;
    for (std::size_t pos = f.doc.find("NULL"); pos != std::string::npos; pos = f.doc.find("NULL", pos + 4)) {
      const std::size_t from = pos > 120 ? pos - 120 : 0;
      const std::string window = f.doc.substr(from, 240);
      static const std::regex word_re(R"(\w+)");
      for (std::sregex_iterator it(window.begin(), window.end(), word_re), end; it != end; ++it) {
        if (it->str() == p.name) return true;
      }
    }
    return false;
  }

  // The byte size the caller gives for a typed value (dataSize), or 0.
  static std::string size_hint(const Plan& pl, const std::map<std::string, const Plan*>& by_name) {
    if (pl.param->size_param.empty()) return "0";
    auto it = by_name.find(pl.param->size_param);
    if (it == by_name.end()) return "0";
    return it->second->role == Role::InOut ? "_c_" + it->second->py_name : it->second->py_name;
  }

  std::string attribute_enum(const Function& f, const Plan& pl) const {
    for (const Param& q : f.params) {
      if (q.name == pl.typed_by) {
        const Enum* e = m_.find_enum(q.type.kind == Type::Kind::Pointer ? q.type.pointee : q.type.spelling);
        if (e == nullptr) throw std::runtime_error(f.name + ": typed_by parameter '" + q.name + "' is not an enum");
        if (!lib_.attribute_types.count(e->name)) {
          throw std::runtime_error(f.name + ": no attribute_types for " + e->name + " (typed_by " + q.name + ")");
        }
        used_attribute_enums_.insert(e->name);
        return e->name;
      }
    }
    throw std::runtime_error(f.name + ": typed_by names no parameter");
  }

  std::string function_doc(const Function& f, const std::string& public_name, const std::vector<Plan>& plans,
                            const std::vector<std::string>& out_names) const {
    std::ostringstream d;
    d << py_function_name(public_name) << "(";
    std::vector<std::pair<std::string, std::string>> args;  // name, default
    for (const Plan& pl : plans) {
      if (!takes_argument(pl.role)) continue;
      const bool optional = pl.role == Role::InOut || pl.role == Role::OutSized;
      args.emplace_back(pl.py_name, optional ? (pl.role == Role::OutSized ? "None" : "0") : "");
    }
    for (std::size_t i = args.size(); i-- > 0 && !args[i].second.empty();) args[i].first += "=" + args[i].second;
    for (std::size_t i = 0; i < args.size(); ++i) d << (i ? ", " : "") << args[i].first;
    d << ")\n\n";
    if (public_name != f.name) d << "The same function as " << f.name << ".\n\n";
    d << clean_doc(f.doc) << "\n\n";
    d << "Returns: ";
    if (f.header_inline) {
      d << f.result.spelling << " (a helper the header defines; no library call)";
    } else if (raising_) {
      d << (out_names.empty() ? std::string("None") : join(out_names)) << "; raises nvJitLinkError on failure.";
    } else {
      std::vector<std::string> r = {"status"};
      for (const auto& n : out_names) r.push_back(n);
      d << "(" << join(r) << ")";
    }
    d << "\nC function: " << f.name << " (" << f.location.file << ")";
    if (f.deprecated) d << "\nDeprecated" << (f.deprecated->empty() ? "." : ": " + *f.deprecated);
    return d.str();
  }

  void sizes() {
    o_ << "# sizeof(cls_or_obj): the size in bytes of a struct, union, handle or value type.\n";
    o_ << "cdef dict _SIZES = {\n";
    for (const auto& sc : m_.structs) o_ << "    " << sc.py << ": sizeof(" << m_.cy << "." << sc.record->name << "),\n";
    for (const auto& h : m_.handle_order) o_ << "    " << h << ": sizeof(void*),\n";
    for (const auto& h : m_.function_pointer_order) o_ << "    " << h << ": sizeof(void*),\n";
    for (const auto& v : m_.value_order) o_ << "    " << v << ": sizeof(" << m_.cy << "." << v << "),\n";
    o_ << "}\n\n";
    o_ << "def sizeof(objType):\n"
          "    \"\"\"sizeof(objType)\n\n    Size in bytes of a cubind struct, union, handle or value type (class or instance).\n    \"\"\"\n"
          "    cls = objType if isinstance(objType, type) else type(objType)\n"
          "    try:\n"
          "        return _SIZES[cls]\n"
          "    except KeyError:\n"
          "        raise TypeError(f\"sizeof() takes a cubind type of this module, got {cls.__name__}\") from None\n\n";
    pyi_ << "def sizeof(objType: Any) -> int: ...\n";
    pyi_ << pyi_alias_lines_.str();
    // Attribute-typed values.
    o_ << "# void * values typed by an attribute: member -> C type.\n";
    o_ << "cdef dict _ATTRIBUTE_TYPES = {\n";
    for (const auto& e : used_attribute_enums_) {
      o_ << "    \"" << e << "\": {\n";
      const Enum* en = m_.find_enum(e);
      for (const auto& [member, type] : lib_.attribute_types.at(e)) {
        long long value = 0;
        for (const auto& v : en->enumerators) {
          if (v.name == member) value = v.value;
        }
        o_ << "        " << value << ": " << typed_spec(type) << ",  # " << member << "\n";
      }
      o_ << "    },\n";
    }
    o_ << "}\n\n";
    // Each entry becomes a prepared _support.TypedSpec at its first use.
    o_ << "cdef _support.TypedValue _typed_value(str enum_name, attribute, value, str name, Py_ssize_t size_hint):\n"
          "    key = _support.as_int(attribute, name)\n"
          "    cdef dict table = _ATTRIBUTE_TYPES[enum_name]\n"
          "    spec = table.get(key)\n"
          "    if spec is None:\n"
          "        raise ValueError(f\"{name}: {enum_name} value {key} has no known value type\")\n"
          "    if type(spec) is tuple:\n"
          "        cls = (<tuple>spec)[3]\n"
          "        spec = _support.typed_spec(<tuple>spec, _enum_class(cls) if isinstance(cls, str) else cls)\n"
          "        table[key] = spec\n"
          "    return _support.typed_value(<_support.TypedSpec>spec, value, name, size_hint)\n";
  }

  // (kind, size, format, class, count) for _support.TypedValue; count 0: sized by the caller.
  std::string typed_spec(const std::string& type) const {
    std::string base = type;
    std::string count = "1";
    if (auto b = type.find('['); b != std::string::npos) {
      base = type.substr(0, b);
      while (!base.empty() && base.back() == ' ') base.pop_back();
      const std::string extent = type.substr(b + 1, type.size() - b - 2);
      count = extent.empty() ? "0" : extent;
    }
    if (base == "void *") return "(\"pointer\", sizeof(void*), None, None, " + count + ")";
    const TypeInfo t = m_.resolve(base);
    const std::string size = "sizeof(" + t.c + ")";
    switch (t.kind) {
      case TypeInfo::Kind::Scalar:
        if (t.is_char && count != "1") return "(\"bytes\", 1, \"b\", None, " + count + ")";
        return "(\"scalar\", " + size + ", \"" + t.format + "\", None, " + count + ")";
      case TypeInfo::Kind::Enum: return "(\"enum\", " + size + ", \"i\", \"" + t.py + "\", " + count + ")";
      case TypeInfo::Kind::Handle: return "(\"handle\", " + size + ", None, " + t.py + ", " + count + ")";
      case TypeInfo::Kind::Value: return "(\"value\", " + size + ", \"" + t.format + "\", " + t.py + ", " + count + ")";
      case TypeInfo::Kind::Struct: return "(\"struct\", " + size + ", None, " + t.py + ", " + count + ")";
      default: throw std::runtime_error("attribute type '" + type + "' has no Python form");
    }
  }

  static std::string py_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out + "\"";
  }

  const Library& lib_;
  Model m_;
  FunctionPlanner planner_;
  EmitOptions options_;
  bool raising_;
  std::ostringstream o_, pyi_, alias_lines_, after_inputs_, pyi_alias_lines_, writebacks_;
  std::string status_type_;
  std::string status_py_;
  const Plan* callback_ = nullptr;
  std::vector<std::string> sig_parts_, stub_parts_, arg_names_;
  mutable std::set<std::string> used_attribute_enums_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<GeneratedFile> emit_python_module(const Library& library, const EmitOptions& options) {
  PyxWriter w(library, options);
  const std::string pyx = w.run();
  if (!w.errors().empty()) {
    std::string msg = library.name + ": " + std::to_string(w.errors().size()) + " function(s) have no Python form:";
    for (const auto& e : w.errors()) msg += "\n  " + e;
    throw std::runtime_error(msg);
  }
  return {{"python/cubind/bindings/" + library.name + ".pyx", pyx},
          {"python/cubind/bindings/" + library.name + ".pyi", w.stub()}};
}

}  // namespace codegen

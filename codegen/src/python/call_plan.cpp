#include "python/call_plan.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <stdexcept>

#include "codegen/emit_common.hpp"

namespace codegen::python {

namespace {

[[noreturn]] void fail(const Function& f, const Param& p, const std::string& why) {
  throw std::runtime_error(f.name + ": parameter '" + p.name + "' (" + p.type.spelling + ", " + p.direction +
                           "): " + why);
}

// An element type given by its Cython spelling alone (strings, addresses).
TypeInfo scalar_of(const std::string& c) {
  TypeInfo t;
  t.kind = TypeInfo::Kind::Scalar;
  t.c = c;
  return t;
}

// A buffer the call fills is the bytes an OutSized parameter returns.
bool sized_as_bytes(const Plan& pl) {
  const std::string& elem = pl.param->type.pointee;
  return elem == "char" || elem == "void";
}

}  // namespace

bool points_to_bytes(const Field& f) {
  const Type& t = f.type;
  return t.kind == Type::Kind::Pointer && t.pointer_depth == 1 &&
         (t.pointee == "void" || t.pointee == "char" || t.pointee == "unsigned char");
}

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
    case Role::OutTypedArray:
    case Role::DerivedSize:
    case Role::QueriedCount:
    case Role::FilledCount:
    case Role::StructSize:
    case Role::StructFields:  // its field arguments stand for it
    case Role::ItemCount:
    case Role::Fixed: return false;
    default: return true;
  }
}

bool accepts_null(const Function& f, const Param& p) {
  if (p.nullable != 0) return p.nullable > 0;
  if (p.doc.find("NULL") != std::string::npos) return true;
  static const std::regex word_re(R"(\w+)");
  for (std::size_t pos = f.doc.find("NULL"); pos != std::string::npos; pos = f.doc.find("NULL", pos + 4)) {
    const std::size_t from = pos > 120 ? pos - 120 : 0;
    const std::string window = f.doc.substr(from, 240);
    for (std::sregex_iterator it(window.begin(), window.end(), word_re), end; it != end; ++it) {
      if (it->str() == p.name) return true;
    }
  }
  return false;
}

bool one_shot_callback(const std::string& typedef_name) {
  static const std::set<std::string> one_shot = {"CUhostFn", "CUstreamCallback", "cudaHostFn_t",
                                                 "cudaStreamCallback_t"};
  return one_shot.count(typedef_name) != 0;
}

FunctionPlan FunctionPlanner::plan(const Function& f) const {
  FunctionPlan fp;
  fp.function = &f;
  const bool has_callback = std::any_of(f.params.begin(), f.params.end(), [](const Param& p) {
    return p.type.kind == Type::Kind::FunctionPointer;
  });
  const bool has_user_data = std::any_of(f.params.begin(), f.params.end(), [](const Param& p) {
    return p.classified_by == "callback_user_data";
  });
  for (const Param& p : f.params) fp.params.push_back(plan_param(f, p, has_callback, has_user_data));
  // The inout size of a value typed by an attribute follows from the
  // attribute (cuCoredumpGetAttribute): as in cuda.bindings, the caller
  // neither gives it nor gets it back.
  for (const Plan& typed : fp.params) {
    if (typed.role != Role::InTyped && typed.role != Role::OutTyped) continue;
    for (Plan& size : fp.params) {
      if (size.role == Role::InOut && size.param->name == typed.param->size_param) size.role = Role::DerivedSize;
    }
  }
  // An output array counted by an output (unsigned int *infoCount) is queried:
  // the count is neither an argument nor an output.
  // A char buffer counted so (nvmlVgpuTypeGetName's size) is queried too, and returned as text.
  for (Plan& array : fp.params) {
    if ((array.role != Role::OutArray && array.role != Role::OutBuffer) || array.count_is_fixed) continue;
    for (Plan& count : fp.params) {
      if (count.param->name == array.count && count.role == Role::OutScalar) {
        count.role = Role::QueriedCount;
        array.queried = true;
        if (array.role == Role::OutBuffer) {
          array.role = Role::OutArray;
          array.type.c = "char";
        }
      }
    }
  }
  // An array of a fixed count filled in part: the count of what the call
  // wrote is neither an argument nor an output; the list returned has as many.
  for (const Plan& array : fp.params) {
    if (array.param->filled.empty()) continue;
    if (array.role != Role::OutArray || !array.count_is_fixed) {
      fail(f, *array.param, "filled: is given to an output array of a fixed count only");
    }
    bool found = false;
    for (Plan& count : fp.params) {
      if (count.param->name != array.param->filled) continue;
      if (count.role != Role::OutScalar) fail(f, *count.param, "a filled: count is an output scalar (T *)");
      count.role = Role::FilledCount;
      found = true;
    }
    if (!found) fail(f, *array.param, "filled: names no parameter of the function");
  }
  // The count of an array of struct items is the length of the sequence given.
  for (const Plan& items : fp.params) {
    if (items.role != Role::StructItems) continue;
    for (Plan& count : fp.params) {
      if (count.param->name == items.count) count.role = Role::ItemCount;
    }
  }
  // A count parameter that belongs to an output array stays an argument: the
  // array's capacity. An inout count is an optional argument, returned.
  fp.arguments = arguments(fp.params);
  fp.outputs = outputs(fp.params);
  return fp;
}

Plan FunctionPlanner::plan_param(const Function& f, const Param& p, bool has_callback, bool has_user_data) const {
  Plan pl;
  pl.param = &p;
  pl.py_name = p.python_name.empty() ? m_.conventions.parameter_name(p.name) : p.python_name;
  pl.count = !p.count_param.empty() ? p.count_param : p.size_param;
  pl.count_is_fixed = !pl.count.empty() && std::all_of(pl.count.begin(), pl.count.end(), ::isdigit);
  // A length the header #defines (NVML_GSP_FIRMWARE_VERSION_BUF_SIZE), read from the cy module.
  if (!pl.count.empty() && !pl.count_is_fixed &&
      std::any_of(m_.lib.macros.begin(), m_.lib.macros.end(),
                  [&](const Macro& m) { return m.name == pl.count && m.kind == Macro::Kind::Integer; })) {
    pl.count = m_.cy + "." + pl.count;
    pl.count_is_fixed = true;
  }
  pl.typed_by = p.typed_by;
  const Type& t = p.type;
  if (!p.bytes_of.empty() && t.kind == Type::Kind::Pointer) {
    // The size of an output struct, in and out (nvmlDeviceGetVgpuMetadata's bufferSize).
    if (t.pointer_depth != 1 || m_.resolve(t.pointee).kind != TypeInfo::Kind::Scalar) {
      fail(f, p, "bytes_of: is given to a parameter passed by value, or to a pointer to one integer");
    }
    pl.type = m_.resolve(t.pointee);
    pl.role = Role::StructSize;
    return pl;
  }
  if (!p.bytes_of.empty()) {
    pl.type = m_.resolve(t.spelling);
    pl.role = Role::Fixed;
    return pl;
  }
  if (!p.fixed_value.empty()) {
    if (t.kind == Type::Kind::Pointer) fail(f, p, "a value: is given to a parameter passed by value only");
    pl.type = m_.resolve(t.spelling);
    pl.role = Role::Fixed;
    return pl;
  }
  if (t.kind == Type::Kind::FunctionPointer ||
      (t.kind == Type::Kind::Builtin && m_.resolve(t.spelling).kind == TypeInfo::Kind::FunctionPointer)) {
    pl.type = m_.resolve(t.spelling);
    pl.role = has_callback && has_user_data && pl.type.kind == TypeInfo::Kind::FunctionPointer &&
                      callback_user_param(pl.type.py) >= 0
                  ? Role::Callback
                  : Role::FunctionPointer;
    if (pl.type.kind != TypeInfo::Kind::FunctionPointer) pl.type.c = "void*";
    return pl;
  }
  // address: an int address, whatever it points to (cuda.bindings' intptr_t:
  // cuFileDriverGetProperties' props), or, out, the pointer the call returns as an int.
  if (p.as_address) {
    if (t.kind != Type::Kind::Pointer) fail(f, p, "address: is given to a pointer only");
    pl.type = scalar_of("void*");
    pl.role = p.direction == "out" ? Role::OutPointer : Role::Address;
    return pl;
  }
  // A typedef of another library's opaque pointer (EGLImageKHR) is a handle.
  const bool opaque_pointer =
      t.kind == Type::Kind::Pointer && t.pointer_depth == 0 && m_.resolve(t.spelling).kind == TypeInfo::Kind::Handle;
  if (t.kind != Type::Kind::Pointer || opaque_pointer) {
    if (!plan_by_value(p, pl)) fail(f, p, "no Python form for this by-value type");
    return pl;
  }
  plan_pointer(f, p, has_callback, pl);
  if (pl.role == Role::InTyped || pl.role == Role::OutTyped || pl.role == Role::OutTypedArray) {
    pl.attribute_enum = attribute_enum(f, pl);
  }
  if (pl.role == Role::StructIn || pl.role == Role::String) pl.accepts_null = accepts_null(f, p);
  if (pl.role == Role::StructFields || pl.role == Role::StructItems) plan_struct_fields(f, p, pl);
  return pl;
}

// The fields a built struct takes as arguments, and those it returns, named as its class names them.
void FunctionPlanner::plan_struct_fields(const Function& f, const Param& p, Plan& pl) const {
  const Model::StructClass* sc = m_.find_struct(strip_qualifiers(p.type.pointee));
  if (sc == nullptr) fail(f, p, "fields: the pointee is no struct");
  m_.collect_fields(*sc->record, pl.fields);
  const auto field = [&](const std::string& name, const char* key) -> const Field* {
    for (const Field* fd : pl.fields) {
      if (fd->name == name) return fd;
    }
    fail(f, p, std::string(key) + " names '" + name + "', which is no field of " + sc->record->name);
  };
  for (const std::string& name : p.struct_fields) {
    FieldArgument a;
    a.field = field(name, "fields");
    const auto renamed = p.field_names.find(name);
    a.py_name = renamed != p.field_names.end() ? renamed->second : m_.conventions.field_name(name);
    a.type = a.field->type.kind == Type::Kind::Array ? TypeInfo{} : m_.resolve(a.field->type.spelling);
    if (const auto arr = p.field_arrays.find(name); arr != p.field_arrays.end()) {
      a.caller_array = true;
      a.type = a.field->type.kind == Type::Kind::Pointer ? m_.resolve(a.field->type.pointee) : TypeInfo{};
      if (a.type.kind != TypeInfo::Kind::Struct) fail(f, p, "arrays: '" + name + "' is no pointer to structs");
      if (!m_.conventions.numpy_structs()) fail(f, p, "arrays: needs structs: numpy (arrays of structs)");
      field(arr->second, "arrays");
    }
    pl.field_args.push_back(a);
  }
  for (const std::string& name : p.item_fields) field(name, "item_fields");
  for (const std::string& name : p.returns_fields) field(name, "returns");
  for (const auto& [name, size] : p.field_sizes) {
    const Field* bytes = field(name, "sizes");
    const TypeInfo elem = bytes->type.kind == Type::Kind::Array ? m_.resolve(bytes->type.element) : TypeInfo{};
    if (elem.kind != TypeInfo::Kind::Scalar || elem.c.find("char") == std::string::npos) {
      fail(f, p, "sizes: '" + name + "' is no array of bytes");
    }
    if (m_.resolve(field(size, "sizes")->type.spelling).kind != TypeInfo::Kind::Scalar) {
      fail(f, p, "sizes: '" + size + "' is no number field");
    }
  }
  if (!p.returns_count.empty()) field(p.returns_count, "returns_count");
  for (const auto& [pointer, count] : p.field_queried) {
    const Field* array = field(pointer, "queried");
    // Numbers too where the struct class reads them as a list (python.counted_fields).
    const TypeInfo::Kind elem = array->type.kind == Type::Kind::Pointer ? m_.resolve(array->type.pointee).kind
                                                                          : TypeInfo::Kind::Unknown;
    const bool numbers = elem == TypeInfo::Kind::Scalar && !m_.counted_by(*sc->record, *array).empty();
    if (array->type.kind != Type::Kind::Pointer ||
        (elem != TypeInfo::Kind::Struct && !numbers && !points_to_bytes(*array))) {
      fail(f, p, "queried: '" + pointer + "' is no pointer to structs or bytes, nor a counted one to numbers");
    }
    field(count, "queried");
  }
  for (const auto& [pointer, count] : p.field_buffers) {
    if (field(pointer, "buffers")->type.kind != Type::Kind::Pointer) fail(f, p, "buffers: '" + pointer + "' is no pointer field");
    field(count, "buffers");
    if (std::find(p.struct_fields.begin(), p.struct_fields.end(), count) == p.struct_fields.end()) {
      fail(f, p, "buffers: the count '" + count + "' must be one of fields, an argument");
    }
  }
}

bool FunctionPlanner::plan_by_value(const Param& p, Plan& pl) const {
  pl.type = m_.resolve(p.type.spelling);
  switch (pl.type.kind) {
    case TypeInfo::Kind::Scalar: pl.role = Role::Scalar; return true;
    case TypeInfo::Kind::Enum: pl.role = Role::Enum; return true;
    case TypeInfo::Kind::Handle: pl.role = Role::Handle; return true;
    case TypeInfo::Kind::Value: pl.role = Role::Value; return true;
    case TypeInfo::Kind::Struct: pl.role = Role::StructValue; return true;
    default: return false;
  }
}

void FunctionPlanner::plan_pointer(const Function& f, const Param& p, bool has_callback, Plan& pl) const {
  const Type& t = p.type;
  const std::string& dir = p.direction;
  const TypeInfo pointee = m_.resolve(t.pointee);
  if (pointee.kind == TypeInfo::Kind::Unknown && t.pointer_depth == 2) {
    // struct cudaGraphicsResource **: spelled without its handle typedef.
    const std::string handle = m_.handle_spelled(t.pointee);
    if (!handle.empty() && (dir == "out" || dir == "in")) {
      pl.type = m_.resolve(handle);
      pl.role = dir == "out" ? Role::OutScalar : Role::InPointer;
      return;
    }
  }
  pl.type = pointee;
  if (p.classified_by == "callback_user_data" && has_callback) {
    pl.role = Role::UserData;
  } else if (!p.typed_by.empty()) {
    // void **data with a count: one value per attribute.
    pl.role = !p.count_param.empty() ? Role::OutTypedArray : dir == "in" ? Role::InTyped : Role::OutTyped;
  } else if (!p.size_from.empty()) {
    pl.role = Role::OutSized;
    pl.size_from = m_.lib.find_function(p.size_from);
    if (pl.size_from == nullptr) fail(f, p, "size_from names no function");
  } else if (t.pointer_depth == 1 && t.pointee == "void") {
    // An output through void * is an address the call writes (cudaGraphMemFreeNodeGetParams).
    pl.role = dir == "out" ? Role::OutPointer : Role::Address;
  } else if (t.pointer_depth == 1 && t.pointee == "char" && t.pointee_const && !p.size_param.empty()) {
    // Bytes the call reads, of size_param bytes (nvvmAddModuleToProgram's IR, nvFatbinAddPTX's
    // PTX): a buffer or an address, as a const void * is, not a string that ends at a NUL.
    pl.role = Role::Address;
  } else if (t.pointer_depth == 1 && t.pointee == "char" && t.pointee_const) {
    pl.role = pl.count.empty() ? Role::String : Role::ArrayIn;
    if (!pl.count.empty()) pl.type.is_char = true;
  } else if (t.pointer_depth == 1 && t.pointee == "char" && !t.pointee_const) {
    // in: a buffer the call reads; inout: the caller's buffer, which the call fills.
    // out with no count: a fixed-size identifier (cuDeviceGetLuid): the caller's size is 8.
    pl.role = dir == "in" || dir == "inout" ? Role::Address : Role::OutBuffer;
  } else if (t.pointer_depth == 2) {
    if (!plan_double_pointer(p, pl)) fail(f, p, "no Python form for a pointer of depth 2");
    if (pl.role == Role::ArrayIn && pl.type.is_char && pl.count.empty()) fail(f, p, "an array of strings needs a count");
    if (pl.role == Role::OutArrayRef && pl.type.kind == TypeInfo::Kind::Unknown) {
      fail(f, p, "no Python form for the array's elements");
    }
  } else if (t.pointer_depth == 1) {
    if (pointee.kind == TypeInfo::Kind::Unknown || pointee.kind == TypeInfo::Kind::Void) {
      fail(f, p, "no Python form for the pointee");
    }
    plan_single_pointer(p, pointee, pl);
  } else {
    fail(f, p, "no Python form for a pointer of depth " + std::to_string(t.pointer_depth));
  }
}

// T ** parameters; false when none of the forms fits.
bool FunctionPlanner::plan_double_pointer(const Param& p, Plan& pl) const {
  const Type& t = p.type;
  const std::string& dir = p.direction;
  if (t.pointee == "const char *" && dir == "out") {
    pl.role = Role::OutString;
  } else if ((t.pointee == "const char *" || t.pointee == "char *") && dir == "in") {
    pl.role = Role::ArrayIn;
    pl.type = scalar_of("const char*");
    pl.type.is_char = true;
  } else if (t.pointee == "const void *" && dir == "out") {
    pl.role = Role::OutPointer;
  } else if (t.pointee == "const void *" && dir == "in" && !pl.count.empty()) {
    pl.role = Role::ArrayIn;  // const void *const *srcs: addresses
    pl.type = scalar_of("void*");
  } else if (t.pointee == "void *") {
    if (dir == "out") {
      pl.role = Role::OutPointer;
    } else if (p.name == "kernelParams" || p.name == "args") {
      pl.role = Role::KernelParams;
    } else if (!pl.count.empty()) {
      pl.role = Role::ArrayIn;
      pl.type = scalar_of("void*");
    } else {
      pl.role = Role::Address;  // e.g. cuLaunchKernel's extra: an address or None
    }
  } else if (dir == "out" && !pl.count.empty()) {
    // const CUgraphNode **dependencies_out: the library's own array.
    pl.type = m_.resolve(strip_pointer(t.pointee));
    pl.role = Role::OutArrayRef;
  } else {
    return false;
  }
  return true;
}

// T * parameters of a type with a Python form.
void FunctionPlanner::plan_single_pointer(const Param& p, const TypeInfo& pointee, Plan& pl) const {
  const std::string& dir = p.direction;
  if (pointee.kind == TypeInfo::Kind::FunctionPointer) {
    // VdpGetProcAddress *: the function's address, given in its class.
    const Typedef* td = m_.find_typedef(p.type.pointee);
    const bool function_type = td != nullptr && Model::is_function_type(*td);
    pl.role = dir == "out" ? Role::OutScalar : function_type ? Role::FunctionPointer : Role::Address;
  } else if (!p.item_fields.empty() && pointee.kind == TypeInfo::Kind::Struct && !pl.count.empty()) {
    pl.role = Role::StructItems;
  } else if (!pl.count.empty()) {
    pl.role = dir == "in" ? Role::ArrayIn : Role::OutArray;
  } else if (pointee.kind == TypeInfo::Kind::Struct &&
             (!p.struct_fields.empty() || !p.returns_fields.empty() || !p.field_queried.empty())) {
    pl.role = Role::StructFields;
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
}

int FunctionPlanner::callback_user_param(const std::string& typedef_name) const {
  const Typedef* td = m_.find_typedef(typedef_name);
  if (td == nullptr || td->kind != Typedef::Kind::FunctionPointer) return -1;
  for (std::size_t i = 0; i < td->fn_params.size(); ++i) {
    const Type& t = td->fn_params[i].type;
    if (t.kind == Type::Kind::Pointer && t.pointer_depth == 1 && t.pointee == "void") return static_cast<int>(i);
  }
  return -1;
}

std::string FunctionPlanner::attribute_enum(const Function& f, const Plan& pl) const {
  for (const Param& q : f.params) {
    if (q.name != pl.typed_by) continue;
    const Enum* e = m_.find_enum(q.type.kind == Type::Kind::Pointer ? q.type.pointee : q.type.spelling);
    if (e == nullptr) throw std::runtime_error(f.name + ": typed_by parameter '" + q.name + "' is not an enum");
    if (!m_.lib.attribute_types.count(e->name)) {
      throw std::runtime_error(f.name + ": no attribute_types for " + e->name + " (typed_by " + q.name + ")");
    }
    return e->name;
  }
  throw std::runtime_error(f.name + ": typed_by names no parameter");
}

// Arguments keep the C order (as in cuda.bindings); the trailing run of
// inout values and optional buffers gets defaults (0, None).
std::vector<Argument> FunctionPlanner::arguments(const std::vector<Plan>& plans) const {
  std::vector<Argument> args;
  for (const Plan& pl : plans) {
    for (const FieldArgument& fa : pl.field_args) {
      const bool as_bytes = std::find(pl.param->bytes_fields.begin(), pl.param->bytes_fields.end(), fa.field->name) !=
                            pl.param->bytes_fields.end();
      args.push_back({fa.py_name, fa.py_name,
                      fa.caller_array ? fa.type.py
                      : as_bytes      ? "bytes | str"
                      : fa.type.kind == TypeInfo::Kind::Unknown ? "bytes"
                                                                : py_annotation(fa.type),
                      ""});
    }
    if (!takes_argument(pl.role)) continue;
    const std::string& n = pl.py_name;
    Argument a{n, n, "", ""};
    switch (pl.role) {
      case Role::Scalar:
        // Integers convert in the body, so an error names the parameter and a
        // float truncates as in cuda.bindings; floating point stays typed.
        if (!is_integer(pl.type)) a.declaration = pl.type.c + " " + n;
        a.annotation = py_annotation(pl.type);
        break;
      case Role::FunctionPointer: a.annotation = "int | None"; break;
      case Role::StructValue: a.annotation = pl.type.py; break;
      case Role::StructIn: a.annotation = pl.accepts_null ? "Optional[" + pl.type.py + "]" : pl.type.py; break;
      case Role::String: a.annotation = pl.accepts_null ? "bytes | str | None" : "bytes | str"; break;
      case Role::Address: a.annotation = "int | Buffer | None"; break;
      case Role::Callback: a.annotation = "Callable[..., None] | " + pl.type.py; break;
      case Role::InTyped:
      case Role::KernelParams:
      case Role::UserData: a.annotation = "Any"; break;
      case Role::ArrayIn:
        a.annotation = "Sequence[" + (pl.type.is_char ? std::string("bytes | str") : py_annotation(pl.type)) + "] | None";
        break;
      case Role::InOut:
        a.annotation = py_annotation(pl.type) + (pl.param->nullable > 0 ? " | None" : "");
        break;
      case Role::OutSized: a.annotation = "Buffer | None"; break;
      case Role::StructItems: {
        std::string item = pl.type.py + " | int";
        if (pl.param->item_fields.size() > 1) {
          item += " | tuple[int";
          for (std::size_t i = 1; i < pl.param->item_fields.size(); ++i) item += ", int";
          item += "]";
        }
        a.annotation = "Sequence[" + item + "] | " + pl.type.py;
        break;
      }
      default: a.annotation = py_annotation(pl.type); break;  // Enum, Handle, Value, InPointer
    }
    args.push_back(a);
  }
  for (std::size_t i = args.size(); i-- > 0;) {
    const auto it = std::find_if(plans.begin(), plans.end(), [&](const Plan& pl) { return pl.py_name == args[i].name; });
    if (it == plans.end()) break;
    if (!it->param->default_value.empty()) {
      args[i].default_value = it->param->default_value;  // annotation default: (cuFileReadv's flags=0)
      continue;
    }
    if (it->role != Role::InOut && it->role != Role::OutSized) break;
    args[i].default_value = it->role == Role::OutSized ? "None" : "0";
  }
  return args;
}

std::vector<Output> FunctionPlanner::outputs(const std::vector<Plan>& plans) const {
  std::vector<Output> outs;
  for (const Plan& pl : plans) {
    const std::string list = "list[" + py_result_annotation(pl.type) + "]";
    switch (pl.role) {
      case Role::OutScalar:
      case Role::InOut: outs.push_back({pl.py_name, py_result_annotation(pl.type)}); break;
      case Role::OutStruct: outs.push_back({pl.py_name, pl.type.py}); break;
      case Role::OutString: outs.push_back({pl.py_name, "bytes | None"}); break;
      case Role::OutPointer: outs.push_back({pl.py_name, "int"}); break;
      case Role::OutBuffer:
        outs.push_back({pl.py_name, m_.conventions.text_as_str() && !pl.count.empty() ? "str" : "bytes"});
        break;
      case Role::OutSized: outs.push_back({pl.py_name, sized_as_bytes(pl) ? "bytes" : list}); break;
      case Role::OutArray:
        if (pl.queried && pl.param->type.pointee == "char") {
          outs.push_back({pl.py_name, m_.conventions.text_as_str() ? "str" : "bytes"});
          break;
        }
        outs.push_back({pl.py_name, list});
        break;
      case Role::OutArrayRef: outs.push_back({pl.py_name, list}); break;
      case Role::StructItems:
        // Read only (cuFileReadv's iov): nothing comes back.
        if (pl.param->direction != "in") outs.push_back({pl.py_name, "list[" + pl.type.py + "]"});
        break;
      case Role::StructFields: {
        if (pl.param->returns_fields.empty()) {
          if (pl.param->direction != "in") outs.push_back({pl.py_name, pl.type.py});
          break;
        }
        for (const std::string& name : pl.param->returns_fields) {
          const Field* returned = nullptr;
          for (const Field* fd : pl.fields) {
            if (fd->name == name) returned = fd;
          }
          outs.push_back(returned_field(pl, *returned));
        }
        break;
      }
      case Role::OutTyped: outs.push_back({pl.py_name, "Any"}); break;
      case Role::OutTypedArray: outs.push_back({pl.py_name, "list[Any]"}); break;
      default: break;
    }
  }
  return outs;
}

// One field a built struct returns: as its class reads it, but bytes for a sized
// or queried byte array, the caller's own array object, or a list of returns_count.
Output FunctionPlanner::returned_field(const Plan& pl, const Field& returned) const {
  const std::string name = m_.conventions.field_name(returned.name);
  const Param& p = *pl.param;
  if (p.field_sizes.count(returned.name) || (points_to_bytes(returned) && p.field_queried.count(returned.name))) {
    return {name, "bytes"};
  }
  if (p.field_arrays.count(returned.name)) return {name, m_.resolve(returned.type.pointee).py};
  if (!p.returns_count.empty()) return {name, "list[" + m_.resolve(returned.type.pointee).py + "]"};
  const FieldPlan field = plan_field(m_, returned, pl.fields);
  // Text the struct class reads as str where the module's text is str (NVML).
  const bool text = field.kind == FieldPlan::Kind::Text && m_.conventions.text_as_str();
  return {name, text ? "str" : field.annotation};
}

FieldPlan plan_field(const Model& m, const Field& f, const std::vector<const Field*>& siblings) {
  FieldPlan fp;
  const Type& t = f.type;
  if (t.kind == Type::Kind::Array) {
    fp.type = m.resolve(t.element);
    for (auto e : t.extents) fp.count *= e;
    // An array of addresses (void *pPitch[3]): a list of ints.
    if (t.element.find('*') != std::string::npos && fp.type.kind != TypeInfo::Kind::Handle &&
        fp.type.kind != TypeInfo::Kind::FunctionPointer) {
      fp.kind = FieldPlan::Kind::NumberArray;
      fp.type.c = "void*";
      fp.format = "P";
      fp.annotation = "list[int]";
      return fp;
    }
    switch (fp.type.kind) {
      case TypeInfo::Kind::Scalar:
        if (fp.type.format == "b" || fp.type.format == "B") {
          // Text (name) ends at the first NUL; identifiers (uuid bytes, reserved) keep every byte.
          // Where text is str (NVML), every char array is text: busId, serial, version.
          const bool text = f.name.find("name") != std::string::npos || f.name.find("Name") != std::string::npos ||
                            (m.conventions.text_as_str() && strip_qualifiers(f.type.element) == "char");
          fp.kind = text ? FieldPlan::Kind::Text : FieldPlan::Kind::Bytes;
          fp.annotation = "bytes";
          return fp;
        }
        fp.format = fp.type.format;
        fp.kind = FieldPlan::Kind::NumberArray;
        fp.annotation = fp.type.is_float ? "list[float]" : "list[int]";
        return fp;
      case TypeInfo::Kind::Enum:
      case TypeInfo::Kind::Value:
        fp.format = fp.type.kind == TypeInfo::Kind::Enum ? "i" : fp.type.format;
        fp.kind = FieldPlan::Kind::NumberArray;
        fp.annotation = fp.type.kind == TypeInfo::Kind::Value ? "list[" + fp.type.py + "]" : "list[int]";
        return fp;
      case TypeInfo::Kind::Struct: fp.kind = FieldPlan::Kind::StructArray; break;
      case TypeInfo::Kind::Handle: fp.kind = FieldPlan::Kind::HandleArray; break;
      default: return fp;
    }
    fp.annotation = "list[" + fp.type.py + "]";
    return fp;
  }
  if (t.kind == Type::Kind::FunctionPointer && m.resolve(t.spelling).kind != TypeInfo::Kind::FunctionPointer) {
    // A C function's address of no named type (CUfileFSOps' read): read as an int.
    fp.kind = FieldPlan::Kind::Pointer;
    fp.read_only = true;
    fp.annotation = "int";
    return fp;
  }
  if (t.kind == Type::Kind::Pointer) {
    fp.annotation = "int";
    const TypeInfo pointee = t.pointer_depth == 1 ? m.resolve(t.pointee) : TypeInfo{};
    if (t.pointer_depth == 1 && t.pointee == "char" && t.pointee_const) {
      fp.kind = FieldPlan::Kind::String;
      fp.annotation = "bytes | None";
    } else if (t.pointer_depth == 2 && t.pointee == "void *" && (f.name == "kernelParams" || f.name == "extra")) {
      fp.kind = FieldPlan::Kind::KernelParams;
      // Reads as an address; takes an address, None or a (values, types) tuple.
      fp.annotation = "Any";
    } else if (pointee.kind == TypeInfo::Kind::Struct) {
      fp.kind = FieldPlan::Kind::StructList;
      fp.type = pointee;
      fp.annotation = "list[" + pointee.py + "]";
    } else if (pointee.kind == TypeInfo::Kind::Handle) {
      fp.kind = FieldPlan::Kind::HandleList;
      fp.type = pointee;
      fp.annotation = "list[" + pointee.py + "]";
      // An array the library fills and sizes (phGraph_out, `size` graphs):
      // read-only, its length is the count field's.
      const std::string suffix = "_out";
      if (f.name.size() > suffix.size() && f.name.compare(f.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        for (const Field* s : siblings) {
          if (s->name == "size" && s->type.kind == Type::Kind::Builtin) fp.count_field = s->name;
        }
        if (fp.count_field.empty()) fp.kind = FieldPlan::Kind::Pointer;
        fp.read_only = !fp.count_field.empty();
      }
    } else {
      fp.kind = FieldPlan::Kind::Pointer;
    }
    if (fp.kind == FieldPlan::Kind::Pointer) fp.annotation = "int";
    return fp;
  }
  fp.type = m.resolve(t.spelling);
  switch (fp.type.kind) {
    case TypeInfo::Kind::Scalar:
      fp.kind = FieldPlan::Kind::Scalar;
      fp.annotation = fp.type.is_float ? "float" : "int";
      break;
    case TypeInfo::Kind::Enum:
    case TypeInfo::Kind::Handle:
    case TypeInfo::Kind::Value:
    case TypeInfo::Kind::FunctionPointer:
      fp.kind = FieldPlan::Kind::Wrapped;
      fp.annotation = py_result_annotation(fp.type);
      break;
    case TypeInfo::Kind::Struct:
      fp.kind = FieldPlan::Kind::Struct;
      fp.annotation = fp.type.py;
      break;
    default: break;
  }
  return fp;
}

FieldPlan plan_record_field(const Model& m, const Record& r, const Field& f, const std::vector<const Field*>& siblings) {
  const auto* shared = m.shared_count_lists(r);
  if (shared == nullptr || std::find(shared->lists.begin(), shared->lists.end(), f.name) == shared->lists.end()) {
    return plan_field(m, f, siblings);
  }
  FieldPlan fp;
  fp.type = m.resolve(f.type.pointee);
  if (fp.type.kind != TypeInfo::Kind::Value) {
    throw std::runtime_error("python.shared_count_lists: " + r.name + "." + f.name + " (" + f.type.spelling +
                             ") points to no value type (CUdeviceptr)");
  }
  fp.kind = FieldPlan::Kind::SharedList;
  fp.count_field = shared->count;
  fp.annotation = "list[" + fp.type.py + "]";
  return fp;
}

ModulePlan::ModulePlan(const Library& lib) : lib(lib), conventions(lib), model(lib, conventions), planner(model) {
  for (const Function& f : lib.functions) {
    if (lib.skipped.count(f.name)) continue;
    try {
      functions.push_back(planner.plan(f));
    } catch (const std::runtime_error& e) {
      FunctionPlan failed;
      failed.function = &f;
      failed.error = e.what();
      functions.push_back(std::move(failed));
    }
    for (const Plan& pl : functions.back().params) {
      if (!pl.attribute_enum.empty()) attribute_enums.insert(pl.attribute_enum);
    }
  }
  status_type = lib.functions.front().result.spelling;
  for (const Function& f : lib.functions) {
    if (model.resolve(f.result.spelling).kind == TypeInfo::Kind::Enum) {
      status_type = f.result.spelling;
      break;
    }
  }
  status_py = model.resolve(status_type).py;
  // A struct status (cuFile's CUfileError_t): the enum of its status_field is the status.
  if (!lib.python.status_field.empty()) {
    for (const Function& f : lib.functions) {
      const Model::StructClass* sc = model.find_struct(f.result.spelling);
      if (sc == nullptr) continue;
      std::vector<const Field*> fields;
      model.collect_fields(*sc->record, fields);
      for (const Field* fd : fields) {
        if (fd->name == lib.python.status_field) status_code_type = fd->type.spelling;
      }
      if (status_code_type.empty()) continue;
      status_type = f.result.spelling;
      status_py = model.resolve(status_code_type).py;
      break;
    }
    if (status_code_type.empty()) {
      throw std::runtime_error(lib.name + ": status_field '" + lib.python.status_field +
                               "' is a field of no struct a function returns");
    }
  }
}

}  // namespace codegen::python

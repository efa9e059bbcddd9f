#include "python/pyx_function.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "codegen/annotations.hpp"
#include "codegen/emit_common.hpp"
#include "python/docs.hpp"

namespace codegen::python {

namespace {

// Parameters convert integers and integer values (CUdevice, CUdeviceptr) as
// cuda.bindings does (floats truncated, the range checked), each error naming
// the parameter.
std::string arg_to_c(const TypeInfo& t, const std::string& obj, const std::string& name) {
  const bool integer_value = t.kind == TypeInfo::Kind::Value && t.format.size() == 1 && t.format != "?";
  return is_integer(t) || integer_value ? integer_to_c(t, obj, name) : to_c(t, obj, name);
}

// A struct status (CUfileError_t) the call returns.
bool struct_status_result(const Model& m, const Function& f) {
  return !m.lib.python.status_field.empty() && m.resolve(f.result.spelling).kind == TypeInfo::Kind::Struct;
}

// A byte count that is negative on failure (cuFileRead's ssize_t), in a library with a struct status.
bool signed_count_result(const Model& m, const Function& f) {
  return !m.lib.python.status_field.empty() && f.result.spelling == "ssize_t";
}

}  // namespace

PyxFunction::PyxFunction(const Model& m, const FunctionPlan& plan, const std::string& public_name,
                         const std::string& status_type)
    : m_(m),
      plan_(plan),
      f_(*plan.function),
      public_name_(public_name),
      returns_status_(plan.function->result.spelling == status_type && !plan.function->status_value) {}

std::string PyxFunction::render() {
  const bool returns_void = f_.result.spelling == "void";
  if (!returns_void) {
    locals_ << "    cdef " << (returns_status_ ? "long long" : m_.cython_c(f_.result.spelling)) << " _result\n";
  }
  // A struct status (CUfileError_t): the call's value is the struct, _result its code.
  if (returns_status_ && struct_status()) locals_ << "    cdef " << m_.cython_c(f_.result.spelling) << " _err\n";
  for (const Plan& pl : plan_.params) convert(pl);

  std::ostringstream out, inner;
  out << "def " << m_.conventions.function_name(public_name_) << "(" << signature() << "):\n";
  out << docstring(doc(), "    ");
  out << locals_.str();
  // Everything from the first conversion on runs inside try/finally when
  // something must be released (buffers, arrays), so a failed conversion of
  // a later argument releases what an earlier one acquired.
  inner << scalars_.str() << body_.str() << after_inputs_.str();
  if (callback_ != nullptr) callback_setup(out, inner);
  call(inner);
  returns(inner);
  if (needs_try_) {
    out << init_refs_.str() << "    try:\n" << indent(inner.str(), "    ") << "    finally:\n" << cleanup_.str();
  } else {
    out << inner.str();
  }
  out << "\n";
  return out.str();
}

// ---------------------------------------------------------------------------
// Arguments, converted in C order

void PyxFunction::convert(const Plan& pl) {
  switch (pl.role) {
    case Role::Scalar: scalar(pl); break;
    case Role::Enum:
    case Role::Handle:
    case Role::Value: by_value(pl); break;
    case Role::FunctionPointer: function_pointer(pl); break;
    case Role::StructValue:
    case Role::StructIn: struct_in(pl); break;
    case Role::InTyped: typed_in(pl); break;
    case Role::String: string(pl); break;
    case Role::Address: address(pl); break;
    case Role::KernelParams: kernel_params(pl); break;
    case Role::Callback: callback(pl); break;
    case Role::UserData: call_args_.push_back("_ctx"); break;
    case Role::ArrayIn: array_in(pl); break;
    case Role::InPointer: in_pointer(pl); break;
    case Role::InOut: in_out(pl); break;
    case Role::StructFields: struct_fields(pl); break;
    case Role::StructItems: struct_items(pl); break;
    case Role::ItemCount:
      locals_ << "    cdef " << pl.type.c << " _c_" << pl.py_name << " = 0\n";
      call_args_.push_back("_c_" + pl.py_name);
      break;
    case Role::Fixed:
      if (!pl.param->bytes_of.empty()) {
        // The byte size of an array of a fixed count (nvmlDeviceGetSupportedPerformanceStates' size).
        const Plan* array = plan_named(pl.param->bytes_of);
        if (array == nullptr || !array->count_is_fixed) {
          throw std::runtime_error(f_.name + ": bytes_of names '" + pl.param->bytes_of + "', which is no array of a fixed count");
        }
        locals_ << "    cdef " << pl.type.c << " _c_" << pl.py_name << " = <" << pl.type.c << ">(" << array->count
                << " * sizeof(" << array->type.c << "))\n";
        call_args_.push_back("_c_" + pl.py_name);
        break;
      }
      // A macro of the header is the raw module's constant.
      locals_ << "    cdef " << pl.type.c << " _c_" << pl.py_name << " = "
              << (std::isdigit(static_cast<unsigned char>(pl.param->fixed_value[0])) ? "" : m_.cy + ".")
              << pl.param->fixed_value << "\n";
      call_args_.push_back("_c_" + pl.py_name);
      break;
    case Role::StructSize: {
      // The byte size of an output struct, given in and rewritten by the call.
      const Plan* out = plan_named(pl.param->bytes_of);
      if (out == nullptr || out->role != Role::OutStruct) {
        throw std::runtime_error(f_.name + ": bytes_of names '" + pl.param->bytes_of + "', which is no output struct");
      }
      locals_ << "    cdef " << pl.type.c << " _c_" << pl.py_name << " = <" << pl.type.c << ">sizeof(" << out->type.c
              << ")\n";
      call_args_.push_back("&_c_" + pl.py_name);
      break;
    }
    case Role::QueriedCount:
    case Role::FilledCount:
    case Role::DerivedSize:
      locals_ << "    cdef " << pl.type.c << " _c_" << pl.py_name << " = 0\n";
      call_args_.push_back("&_c_" + pl.py_name);
      break;
    case Role::OutScalar:
    case Role::OutStruct:
    case Role::OutString:
    case Role::OutPointer: out_value(pl); break;
    case Role::OutBuffer: out_buffer(pl); break;
    case Role::OutSized: out_sized(pl); break;
    case Role::OutArray: pl.queried ? out_array_queried(pl) : out_array(pl); break;
    case Role::OutArrayRef: out_array_ref(pl); break;
    case Role::OutTyped: out_typed(pl); break;
    case Role::OutTypedArray: out_typed_array(pl); break;
  }
}

std::string PyxFunction::cast_param(const Plan& pl) const { return "<" + m_.cython_c(pl.param->type.spelling) + ">"; }

// Integers convert first, before any argument that uses them as a count.
void PyxFunction::scalar(const Plan& pl) {
  if (!is_integer(pl.type)) {
    call_args_.push_back(pl.py_name);
    return;
  }
  const std::string cn = "_c_" + pl.py_name;
  locals_ << "    cdef " << pl.type.c << " " << cn << "\n";
  scalars_ << "    " << cn << " = " << integer_to_c(pl.type, pl.py_name, pl.param->name) << "\n";
  call_args_.push_back(cn);
}

// The C value of the parameter named `c_name` (a count or size): its
// converted local where it has one.
// An inout one converts in C order, so only what runs after the inputs
// (after_inputs_) reads its local.
std::string PyxFunction::c_value(const std::string& c_name, bool after_inputs) const {
  // `tensorRank - 1`: the parameter's value less a constant.
  const std::string name = count_parameter(c_name);
  // Clamped at 0: a rank of 0 reaches the library, which reports it.
  if (name != c_name) {
    return "max(<long long>" + c_value(name, after_inputs) + c_name.substr(c_name.find('-') - 1) + ", 0)";
  }
  const Plan* q = plan_named(c_name);
  if (q == nullptr) return python_identifier(c_name);
  if ((q->role == Role::Scalar && is_integer(q->type)) || q->role == Role::Value || q->role == Role::DerivedSize ||
      q->role == Role::Fixed ||
      (after_inputs && q->role == Role::InOut)) {
    return "_c_" + q->py_name;
  }
  return q->py_name;
}

void PyxFunction::by_value(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  locals_ << "    cdef " << pl.type.c << " " << cn << "\n";
  // A value (cuuint32_t tensorRank) may count an array: it converts first too.
  (pl.role == Role::Value ? scalars_ : body_) << "    " << cn << " = " << arg_to_c(pl.type, pl.py_name, pl.param->name) << "\n";
  if (pl.role == Role::Handle) check_live(pl, strip_qualifiers(pl.param->type.spelling), cn);
  call_args_.push_back(cn);
}

void PyxFunction::check_live(const Plan& pl, const std::string& handle_type, const std::string& cn) {
  for (const LiveHandle& h : live_handles(m_.lib)) {
    if (h.type != handle_type) continue;
    body_ << "    if <void*>" << cn << " != NULL and not " << m_.cy << "." << h.type << "_is_live(" << cn << "):\n"
          << "        _support.not_live(" << pl.py_name << ", \"" << pl.py_name << "\", \"" << h.type << "\", \""
          << h.made_by->name << "\", \"" << h.destroyed_by->name << "\")\n";
  }
}

// The address of a C function (ctypes.cast(fn, c_void_p).value), or None.
void PyxFunction::function_pointer(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string& pn = pl.param->name;
  locals_ << "    cdef void* " << cn << "\n";
  body_ << "    " << cn << " = _support.plain_address(" << n << ", \"" << pn << "\")\n";
  if (pl.param->nullable < 0) {
    // The library calls it without a check (cuVDPAUCtxCreate's vdpGetProcAddress).
    body_ << "    if " << cn << " == NULL:\n        raise ValueError(\"" << pn
          << ": the library calls this function, so it cannot be None or 0\")\n";
  }
  call_args_.push_back(cast_param(pl) + cn);
}

// A struct by value (StructValue) or by pointer (StructIn, None where the call takes NULL).
void PyxFunction::struct_in(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string& pn = pl.param->name;
  if (pl.role == Role::StructValue) {
    locals_ << "    cdef " << pl.type.c << "* " << cn << "\n";
    body_ << "    " << cn << " = <" << pl.type.c << "*>_support.struct_pointer_required(" << n << ", " << pl.type.py
          << ", \"" << pn << "\")\n";
    call_args_.push_back(cn + "[0]");
    return;
  }
  locals_ << "    cdef void* " << cn << "\n";
  body_ << "    " << cn << " = _support." << (pl.accepts_null ? "struct_pointer" : "struct_pointer_required") << "(" << n
        << ", " << pl.type.py << ", \"" << pn << "\")\n";
  call_args_.push_back(cast_param(pl) + cn);
}

// The TypedSpec of the attribute that types pl: the attribute's C value,
// converted already (an enum argument, or item `index` of an array of them),
// finds it in the module's table. The call plan takes only an enum or a
// pointer to one for typed_by; a pointer that is no array has no C value here.
std::string PyxFunction::typed_spec_of(const Plan& pl, const std::string& index) const {
  const Plan* attribute = plan_named(pl.typed_by);
  if (attribute == nullptr) throw std::runtime_error(f_.name + ": typed_by names no parameter");
  const bool scalar = attribute->role == Role::Enum || attribute->role == Role::Scalar;
  if (index.empty() ? !scalar : attribute->role != Role::ArrayIn) {
    throw std::runtime_error(f_.name + "." + pl.param->name + ": typed_by names " + attribute->param->name +
                             ", which is not an enum " + (index.empty() ? "argument" : "array"));
  }
  const std::string key = "_c_" + attribute->py_name + (index.empty() ? "" : "[" + index + "]");
  return typed_table(pl.attribute_enum) + ".spec(<long long>" + key + ", \"" + pl.param->name + "\")";
}

// A value typed by an attribute, in a _support.TypedSlot on the stack (_c_),
// of the C type _t_ describes; value: the Python value to store, or None.
void PyxFunction::typed_slot(const Plan& pl, const std::string& value) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  locals_ << "    cdef _support.TypedSlot " << cn << "\n    cdef _support.TypedSpec _t_" << n << "\n";
  init_refs_ << "    " << cn << ".buf = NULL\n";
  after_inputs_ << "    _t_" << n << " = " << typed_spec_of(pl, "") << "\n"
                << "    _support.typed_init(&" << cn << ", _t_" << n << ", " << value << ", \"" << pl.param->name
                << "\", " << size_hint(pl) << ")\n";
  cleanup_ << "        _support.typed_release(&" << cn << ")\n";
  needs_try_ = true;
  fill_default_size(pl, cn);
  call_args_.push_back(cast_param(pl) + cn + ".ptr");
}

// The value's type follows the attribute.
void PyxFunction::typed_in(const Plan& pl) { typed_slot(pl, pl.py_name); }

// None (NULL) only where the header says the call takes NULL.
void PyxFunction::string(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  locals_ << "    cdef const char* " << cn << " = NULL\n";
  body_ << "    _b_" << n << " = " << (pl.accepts_null ? "None if " + n + " is None else " : std::string())
        << "_support.as_bytes(" << n << ", \"" << pl.param->name << "\")\n"
        << "    if _b_" << n << " is not None:\n"
        << "        " << cn << " = PyBytes_AS_STRING(_b_" << n << ")\n";
  call_args_.push_back(cn);
}

void PyxFunction::address(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string& pn = pl.param->name;
  locals_ << "    cdef _support.BufferRef _view_" << n << "\n    cdef void* " << cn << "\n";
  init_refs_ << "    _view_" << n << ".held = False\n";
  // A destination (dst, dstHost) or a caller's buffer the call fills
  // (inout) must be writable; other buffers the call reads.
  std::string lower = pn;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  const bool writable =
      !pl.param->type.pointee_const && (lower.rfind("dst", 0) == 0 || pl.param->direction == "inout");
  if (pl.param->nullable < 0) {
    body_ << "    if " << n << " is None:\n        raise TypeError(\"" << pn << " cannot be None\")\n";
  }
  if (pl.param->direction == "inout" && !pl.param->size_param.empty() && pl.param->type.pointee == "char") {
    // A char * the call fills, of `size` bytes (cuLogsDumpToMemory's buffer):
    // cuda.bindings takes bytes there, so programs pass b" " * size; an int
    // would be taken as an address of memory no one checked.
    const Plan* sized = plan_named(pl.param->size_param);
    if (sized == nullptr) throw std::runtime_error(f_.name + ": size names no parameter");
    const std::string value = sized->role == Role::Scalar && is_integer(sized->type)
                                  ? "_c_" + sized->py_name
                                  : "<size_t>_support.unsigned_arg(" + sized->py_name + ", sizeof(size_t), \"" +
                                        sized->param->name + "\")";
    body_ << "    " << cn << " = _support.caller_buffer(" << n << ", " << value << ", &_view_" << n << ", \"" << pn
          << "\", \"" << sized->param->name << "\")\n";
    cleanup_ << "        _support.release_address(&_view_" << n << ")\n";
    needs_try_ = true;
    call_args_.push_back(cast_param(pl) + cn);
    return;
  }
  body_ << "    " << cn << " = _support.address(" << n << ", &_view_" << n << ", " << (writable ? "True" : "False")
        << ", \"" << pn << "\")\n";
  address_size_checks(pl);
  cleanup_ << "        _support.release_address(&_view_" << n << ")\n";
  needs_try_ = true;
  call_args_.push_back(cast_param(pl) + cn);
}

// A caller's buffer must hold the bytes the call reads or writes.
void PyxFunction::address_size_checks(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string& pn = pl.param->name;
  const auto check = [&](const std::string& size_expr, const std::string& size_c_name, const std::string& size_py) {
    body_ << "    if _view_" << n << ".held and <size_t>_view_" << n << ".view.len < " << size_expr << ":\n"
          << "        _support.release_address(&_view_" << n << ")\n"
          << "        raise ValueError(f\"" << pn << " holds {len(memoryview(" << n << ").cast('B'))} bytes but "
          << size_c_name << " is {" << size_py << "}\")\n";
  };
  // Of `size_param` bytes (annotation `size:`).
  if (!pl.param->size_param.empty()) {
    const Plan* sized = plan_named(pl.param->size_param);
    if (sized == nullptr) throw std::runtime_error(f_.name + ": size names no parameter");
    // An inout size converts in C order, after this buffer: read its argument.
    const std::string value = sized->role == Role::Scalar && is_integer(sized->type)
                                  ? "_c_" + sized->py_name
                                  : "<size_t>_support.as_int(" + sized->py_name + ", \"" + sized->param->name + "\")";
    check(value, sized->param->name, value);
  }
  // A buffer given for a copy must hold the bytes the call moves.
  static const std::set<std::string> byte_counts = {"ByteCount", "count", "bytesize", "sizeInBytes", "size"};
  for (const Plan& q : plan_.params) {
    if (q.role == Role::Scalar && byte_counts.count(q.param->name) && q.type.c == "size_t" &&
        q.param->name != pl.param->size_param) {
      check("_c_" + q.py_name, q.param->name, "_c_" + q.py_name);
    }
  }
}

void PyxFunction::kernel_params(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  locals_ << "    cdef void** " << cn << "\n";
  body_ << "    _k_" << n << " = _support.kernel_params(" << n << ")\n"
        << "    " << cn << " = _support.kernel_params_pointer(_k_" << n << ")\n";
  call_args_.push_back(cn);
}

// A Python callable runs through the trampoline, which consumes the user
// data argument; a C function's address (an int or a function-pointer
// object) is passed as it is, with the user data (callback_setup).
void PyxFunction::callback(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  locals_ << "    cdef void* _ctx = NULL\n    cdef " << pl.type.c << " " << cn << "\n"
          << "    cdef bint _trampoline = False\n";
  call_args_.push_back(cn);
  callback_ = &pl;
}

void PyxFunction::array_in(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string& pn = pl.param->name;
  const std::string count = pl.count_is_fixed ? pl.count : c_value(pl.count, false);
  const std::string elem_c = pl.type.is_char ? "const char*" : pl.type.c;
  const std::string item = n + "[_i_" + n + "]";
  locals_ << "    cdef " << elem_c << "* " << cn << " = NULL\n    cdef Py_ssize_t _i_" << n << "\n";
  const std::string what = pl.type.is_char ? "bytes" : pl.type.c == "void*" ? "addresses" : pl.type.kind == TypeInfo::Kind::Scalar ? (pl.type.is_float ? "floats" : "ints") : pl.type.py;
  body_ << "    _support.check_list(" << n << ", " << count << ", \"" << pn << "\", \""
        << (pl.count_is_fixed ? std::string("the required length") : pl.count) << "\", \"" << what << "\")\n";
  body_ << "    if " << count << " > 0:\n"
        << "        " << cn << " = <" << elem_c << "*>_support.alloc_array(" << count << ", sizeof(" << elem_c
        << "))\n";
  cleanup_ << "        free(" << cn << ")\n";
  needs_try_ = true;
  if (pl.type.is_char) {
    body_ << "        _keep_" << n << " = [_support.as_bytes(x, \"" << pn << "\") for x in " << n << "[:" << count
          << "]]\n"
          << "        for _i_" << n << " in range(" << count << "):\n"
          << "            " << cn << "[_i_" << n << "] = PyBytes_AS_STRING(_keep_" << n << "[_i_" << n << "])\n";
  } else {
    body_ << "        for _i_" << n << " in range(" << count << "):\n";
    if (pl.type.c == "void*") {
      body_ << "            " << cn << "[_i_" << n << "] = _support.plain_address(" << item << ", \"" << pn << "\")\n";
    } else if (pl.type.kind == TypeInfo::Kind::Struct) {
      body_ << "            memcpy(&" << cn << "[_i_" << n << "], _support.struct_pointer_required(" << item << ", "
            << pl.type.py << ", \"" << pn << "\"), sizeof(" << elem_c << "))\n";
    } else {
      body_ << "            " << cn << "[_i_" << n << "] = " << arg_to_c(pl.type, item, pn) << "\n";
    }
  }
  call_args_.push_back(cast_param(pl) + cn);
}

void PyxFunction::in_pointer(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  locals_ << "    cdef " << pl.type.c << " " << cn << "\n";
  body_ << "    " << cn << " = " << arg_to_c(pl.type, n, pl.param->name) << "\n";
  if (pl.type.kind == TypeInfo::Kind::Handle) check_live(pl, strip_qualifiers(pl.param->type.pointee), cn);
  call_args_.push_back(cast_param(pl) + "&" + cn);
  if (pl.type.kind == TypeInfo::Kind::Handle) {
    // Destroy functions zero the handle they are given: so does its object.
    writebacks_ << "    if isinstance(" << n << ", _support.Handle):\n"
                << "        _support.set_handle(" << n << ", <void*>" << cn << ")\n";
  }
}

void PyxFunction::in_out(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  locals_ << "    cdef " << pl.type.c << " " << cn << "\n";
  if (pl.param->nullable > 0) {
    // None passes NULL (cuLogsDumpToMemory's iterator: dump every log) and comes back as None.
    locals_ << "    cdef " << pl.type.c << "* _p_" << n << " = &" << cn << "\n";
    body_ << "    if " << n << " is None:\n        _p_" << n << " = NULL\n    else:\n        " << cn << " = "
          << arg_to_c(pl.type, n, pl.param->name) << "\n";
    call_args_.push_back("_p_" + n);
    add_out("None if _p_" + n + " == NULL else " + to_python(pl.type, cn));
  } else {
    body_ << "    " << cn << " = " << arg_to_c(pl.type, n, pl.param->name) << "\n";
    call_args_.push_back("&" + cn);
    add_out(to_python(pl.type, cn), holds_little(pl.type));
  }
}

// ---------------------------------------------------------------------------
// Outputs

// One value the call writes: a scalar, enum, handle or value; a struct; a string; an address.
void PyxFunction::out_value(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  switch (pl.role) {
    case Role::OutScalar:
      locals_ << "    cdef " << pl.type.c << " " << cn << "\n";
      body_ << "    memset(&" << cn << ", 0, sizeof(" << cn << "))\n";
      call_args_.push_back("&" + cn);
      add_out(to_python(pl.type, cn), holds_little(pl.type));
      break;
    case Role::OutStruct:
      locals_ << "    cdef " << pl.type.py << " " << cn << " = " << pl.type.py << "()\n";
      // A versioned struct (NVML's) says which layout it is before the call reads it.
      if (const std::string v = m_.version_macro(pl.param->type.pointee); !v.empty()) {
        body_ << "    (<" << pl.type.c << "*>" << cn << "._ptr).version = " << m_.cy << "." << v << "\n";
      }
      call_args_.push_back(cast_param(pl) + cn + "._ptr");
      add_out(cn);
      break;
    case Role::OutString:
      locals_ << "    cdef const char* " << cn << " = NULL\n";
      call_args_.push_back("&" + cn);
      add_out("None if " + cn + " == NULL else <bytes>" + cn);
      break;
    default:  // OutPointer
      locals_ << "    cdef void* " << cn << " = NULL\n";
      call_args_.push_back(cast_param(pl) + "&" + cn);
      add_out("<uintptr_t>" + cn, true);
      break;
  }
}

// A struct built here: its version from nvml.h's macro, the fields given as
// arguments, arrays for its pointer fields; returned whole, or one field of it.
void PyxFunction::struct_fields(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  const std::string c_struct = "(<" + pl.type.c + "*>" + cn + "._ptr)";
  locals_ << "    cdef " << pl.type.py << " " << cn << " = " << pl.type.py << "()\n";
  if (const std::string v = m_.version_macro(pl.param->type.pointee); !v.empty()) {
    body_ << "    " << c_struct << ".version = " << m_.cy << "." << v << "\n";
  }
  for (const FieldArgument& fa : pl.field_args) {
    const TypeInfo::Kind k = fa.type.kind;
    const auto& as_bytes = pl.param->bytes_fields;
    if (std::find(as_bytes.begin(), as_bytes.end(), fa.field->name) != as_bytes.end()) {
      // bytes or str (UTF-8), copied into the field's storage; what follows stays zero.
      const std::string b = "_bytes_" + fa.py_name;
      const std::string member = "&" + c_struct + "." + cython_member(fa.field->name);
      const std::string size = "sizeof(" + c_struct + "." + cython_member(fa.field->name) + ")";
      body_ << "    if isinstance(" << fa.py_name << ", str):\n"
            << "        " << b << " = (<str>" << fa.py_name << ").encode(\"utf-8\")\n"
            << "    elif isinstance(" << fa.py_name << ", (bytes, bytearray)):\n"
            << "        " << b << " = bytes(" << fa.py_name << ")\n"
            << "    else:\n"
            << "        raise TypeError(f\"" << fa.py_name << ": expected bytes or str, got {" << fa.py_name
            << ".__class__.__name__}\")\n"
            << "    if len(" << b << ") > " << size << ":\n"
            << "        raise ValueError(f\"" << fa.py_name << ": at most {" << size << "} bytes, got {len(" << b << ")}\")\n"
            << "    memcpy(" << member << ", PyBytes_AS_STRING(" << b << "), len(" << b << "))\n";
      if (const auto sized = pl.param->field_sizes.find(fa.field->name); sized != pl.param->field_sizes.end()) {
        body_ << "    " << c_struct << "." << cython_member(sized->second) << " = len(" << b << ")\n";
      }
      continue;
    }
    if (fa.caller_array) {
      // The caller's array, filled in place: not a copy, so it must be writable.
      const std::string arr = "(<" + fa.type.py + ">" + fa.py_name + ")";
      body_ << "    if not isinstance(" << fa.py_name << ", " << fa.type.py << "):\n"
            << "        raise TypeError(f\"" << fa.py_name << ": expected " << fa.type.py << ", got {"
            << fa.py_name << ".__class__.__name__}\")\n"
            << "    if " << arr << "._readonly:\n"
            << "        raise ValueError(\"" << fa.py_name << ": the " << fa.type.py
            << " is read-only; the call writes its answers into it\")\n"
            << "    " << c_struct << "." << cython_member(fa.field->name) << " = <" << fa.type.c << "*>" << arr
            << "._ptr\n"
            << "    " << c_struct << "." << cython_member(pl.param->field_arrays.at(fa.field->name)) << " = "
            << arr << "._n\n";
      continue;
    }
    if (k == TypeInfo::Kind::Scalar || k == TypeInfo::Kind::Enum || k == TypeInfo::Kind::Handle ||
        k == TypeInfo::Kind::Value) {
      // Converted as a parameter is, so an error names the argument.
      scalars_ << "    " << c_struct << "." << cython_member(fa.field->name) << " = " << arg_to_c(fa.type, fa.py_name, fa.py_name)
               << "\n";
    } else {
      // Arrays and nested structs: through the struct class's own setter.
      body_ << "    " << cn << "." << m_.conventions.field_name(fa.field->name) << " = " << fa.py_name << "\n";
    }
  }
  // The one returned field that may be a buffer made here (buffers, queried).
  const Field* returned = nullptr;
  if (pl.param->returns_fields.size() == 1) {
    for (const Field* fd : pl.fields) {
      if (fd->name == pl.param->returns_fields.front()) returned = fd;
    }
  }
  std::string returned_buffer;
  for (const auto& [pointer, count] : pl.param->field_buffers) {
    const Field* pointer_field = nullptr;
    for (const Field* fd : pl.fields) {
      if (fd->name == pointer) pointer_field = fd;
    }
    const TypeInfo elem = m_.resolve(pointer_field->type.pointee);
    const std::string bn = "_b_" + pl.py_name + "_" + pointer;
    locals_ << "    cdef " << elem.c << "* " << bn << " = NULL\n";
    after_inputs_ << "    " << bn << " = <" << elem.c << "*>_support.alloc_array(" << c_struct << "."
                  << cython_member(count) << ", sizeof(" << elem.c << "))\n"
                  << "    " << c_struct << "." << cython_member(pointer) << " = " << bn << "\n";
    cleanup_ << "        free(" << bn << ")\n";
    needs_try_ = true;
    if (returned == pointer_field) {
      // At most as many elements as the array holds, whatever the count field says.
      returned_buffer = "[" + elem.py + "._copy(&" + bn + "[i]) for i in range(min(" + c_struct + "." +
                        cython_member(pl.param->returns_count) + ", " + c_struct + "." + cython_member(count) + "))]";
    }
  }
  std::string returned_bytes;
  for (const auto& [pointer, count] : pl.param->field_queried) {
    const Field* array = nullptr;
    for (const Field* fd : pl.fields) {
      if (fd->name == pointer) array = fd;
    }
    const std::string count_c_ = c_struct + "." + cython_member(count);
    if (points_to_bytes(*array)) {
      // Asked first with no buffer (the size query); then with as many bytes as it reported.
      const std::string qn = "_q_" + pl.py_name + "_" + pointer;
      locals_ << "    cdef void* " << qn << " = NULL\n    cdef size_t " << qn << "_size = 0\n";
      cleanup_ << "        free(" << qn << ")\n";
      needs_try_ = true;
      std::ostringstream q;
      q << "    while " << asks_again(qn + " == NULL") << " and " << count_c_ << " > 0:\n"
        << "        free(" << qn << ")\n"
        << "        " << qn << " = NULL\n"
        << "        " << qn << "_size = " << count_c_ << "\n"
        << "        " << qn << " = _support.alloc_array(" << qn << "_size, 1)\n"
        << "        " << c_struct << "." << cython_member(pointer) << " = <" << m_.cython_c(array->type.spelling) << ">" << qn << "\n"
        << "        with nogil:\n            _result = " << m_.cy << "." << public_name_ << "(@ARGS@)\n";
      struct_query_ += q.str();
      if (returned == array) {
        // No more bytes than the buffer holds, whatever the size field says.
        returned_bytes = "b\"\" if " + qn + " == NULL else PyBytes_FromStringAndSize(<char*>" + qn + ", min(" +
                         count_c_ + ", " + qn + "_size))";
      }
      continue;
    }
    // The array is the struct's own (its class keeps what a list field is set to).
    const TypeInfo elem = m_.resolve(array->type.pointee);
    const std::string field_py = cn + "." + m_.conventions.field_name(pointer);
    const std::string count_c = c_struct + "." + cython_member(count);
    const std::string items = elem.kind == TypeInfo::Kind::Scalar ? "[0] * " + count_c
                                                                   : "[" + elem.py + "() for _ in range(" + count_c + ")]";
    std::ostringstream q;
    q << "    while " << asks_again(c_struct + "." + cython_member(pointer) + " == NULL") << " and " << count_c
      << " > 0:\n"
      << "        " << field_py << " = " << items << "\n"
      << "        with nogil:\n            _result = " << m_.cy << "." << public_name_ << "(@ARGS@)\n"
      << "    if _result == 0 and " << count_c << " < len(" << field_py << "):\n"
      << "        " << field_py << " = " << field_py << "[:" << count_c << "]\n";
    struct_query_ += q.str();
  }
  call_args_.push_back(cast_param(pl) + cn + "._ptr");
  if (pl.param->returns_fields.empty()) {
    if (pl.param->direction != "in") add_out(cn);
    return;
  }
  for (const std::string& name : pl.param->returns_fields) {
    const auto given = std::find_if(pl.field_args.begin(), pl.field_args.end(),
                                    [&](const FieldArgument& fa) { return fa.field->name == name; });
    if (const auto sized = pl.param->field_sizes.find(name); sized != pl.param->field_sizes.end()) {
      // No more bytes than the array holds, whatever the size field says.
      const std::string array = c_struct + "." + cython_member(name);
      add_out("PyBytes_FromStringAndSize(<char*>" + array + ", min(" + c_struct + "." +
                           cython_member(sized->second) + ", sizeof(" + array + ")))");
    } else if (given != pl.field_args.end() && given->caller_array) {
      add_out(given->py_name);
    } else if (!returned_bytes.empty()) {
      add_out(returned_bytes);
    } else if (!pl.param->returns_count.empty()) {
      add_out(returned_buffer);
    } else {
      add_out(cn + "." + m_.conventions.field_name(name));
    }
  }
}

// A sequence of structs, or of ints and tuples that set the item_fields in
// order; the count is its length. The call's answers come back as new structs
// and are copied into the structs given.
void PyxFunction::struct_items(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string& elem = pl.type.c;
  const std::string& cls = pl.type.py;
  const Plan* count = plan_named(pl.count);
  if (count == nullptr) throw std::runtime_error(f_.name + ": item_fields: the count names no parameter");
  std::vector<TypeInfo> item_types;
  std::vector<bool> item_addresses;  // a pointer field (CUfileIOVec_t's base): an int address
  for (const std::string& name : pl.param->item_fields) {
    for (const Field* fd : pl.fields) {
      if (fd->name != name) continue;
      const bool address = fd->type.kind == Type::Kind::Pointer;
      item_types.push_back(address ? m_.resolve("uintptr_t") : m_.resolve(fd->type.spelling));
      item_addresses.push_back(address);
    }
  }
  const auto item_value = [&](std::size_t i, const std::string& obj) {
    const std::string value = integer_to_c(item_types[i], obj, n);
    return item_addresses[i] ? "<void*>" + value : value;
  };
  const std::vector<std::string>& names = pl.param->item_fields;
  std::string what = "a " + cls + ", an int (" + names[0] + ")";
  if (names.size() > 1) {
    what += " or a (" + names[0];
    for (std::size_t i = 1; i < names.size(); ++i) what += ", " + names[i];
    what += ") tuple";
  }
  locals_ << "    cdef " << elem << "* " << cn << " = NULL\n    cdef Py_ssize_t _i_" << n << "\n    cdef Py_ssize_t _len_"
          << n << " = 0\n";
  // An array of structs (structs: numpy) iterates over views of its items.
  const bool struct_array = std::any_of(m_.structs.begin(), m_.structs.end(), [&](const Model::StructClass& sc) {
    return sc.py == cls && m_.struct_array(*sc.record);
  });
  if (struct_array) {
    body_ << "    _seq_" << n << " = " << n << "\n";
  } else {
    body_ << "    _seq_" << n << " = [" << n << "] if isinstance(" << n << ", " << cls << ") else " << n << "\n";
  }
  body_
        << "    try:\n        _seq_" << n << " = list(_seq_" << n << ")\n"
        << "    except TypeError:\n        raise TypeError(f\"" << n << ": expected a sequence, each item " << what
        << ", got {type(" << n << ").__name__}\") from None\n"
        << "    _len_" << n << " = len(_seq_" << n << ")\n"
        << "    " << cn << " = <" << elem << "*>_support.alloc_array(_len_" << n << ", sizeof(" << elem << "))\n"
        << "    for _i_" << n << " in range(_len_" << n << "):\n"
        << "        _item_" << n << " = _seq_" << n << "[_i_" << n << "]\n"
        << "        if isinstance(_item_" << n << ", " << cls << "):\n"
        << "            memcpy(&" << cn << "[_i_" << n << "], (<" << cls << ">_item_" << n << ")._ptr, sizeof(" << elem
        << "))\n";
  if (names.size() > 1) {
    body_ << "        elif isinstance(_item_" << n << ", tuple) and 1 <= len(_item_" << n << ") <= " << names.size()
          << ":\n";
    for (std::size_t i = 0; i < names.size(); ++i) {
      body_ << "            if len(_item_" << n << ") > " << i << ":\n"
            << "                " << cn << "[_i_" << n << "]." << cython_member(names[i]) << " = "
            << item_value(i, "_item_" + n + "[" + std::to_string(i) + "]") << "\n";
    }
  }
  body_ << "        elif isinstance(_item_" << n << ", int):\n"
        << "            " << cn << "[_i_" << n << "]." << cython_member(names[0]) << " = " << item_value(0, "_item_" + n)
        << "\n"
        << "        else:\n"
        << "            raise ValueError(f\"" << n << ": each item must be " << what << "; item {_i_" << n
        << "} is {_item_" << n << "!r}\")\n"
        << "    _c_" << count->py_name << " = <" << count->type.c << ">_len_" << n << "\n";
  cleanup_ << "        free(" << cn << ")\n";
  needs_try_ = true;
  call_args_.push_back(cast_param(pl) + cn);
  if (pl.param->direction == "in") return;  // read only (cuFileReadv's iov): nothing written back
  writebacks_ << "    for _i_" << n << " in range(_len_" << n << "):\n"
              << "        if isinstance(_seq_" << n << "[_i_" << n << "], " << cls << "):\n"
              << "            memcpy((<" << cls << ">_seq_" << n << "[_i_" << n << "])._ptr, &" << cn << "[_i_" << n
              << "], sizeof(" << elem << "))\n";
  add_out("[" + cls + "._copy(&" + cn + "[i]) for i in range(_len_" + n + ")]");
}

void PyxFunction::out_buffer(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  const std::string size = pl.count.empty() ? "8" : (pl.count_is_fixed ? pl.count : c_value(pl.count, false));
  locals_ << "    cdef char* " << cn << " = NULL\n";
  if (pl.count.empty() || pl.count_is_fixed) {
    body_ << "    if " << size << " < 0:\n"
          << "        raise ValueError(f\"size cannot be negative ({" << size << "})\")\n";
  } else {
    // A C string of the caller's length: it needs room for its NUL, and a
    // library given 0 may write one anyway (cuDeviceGetName did, past the buffer).
    const Plan* length = plan_named(pl.count);
    const std::string shown = length != nullptr ? length->py_name : pl.count;
    body_ << "    if " << size << " < 1:\n"
          << "        raise ValueError(f\"" << shown << " must be at least 1, room for the string's NUL ({" << size
          << "})\")\n";
  }
  body_ << "    " << cn << " = <char*>_support.alloc_array(" << size << " if " << size << " > 0 else 1, 1)\n";
  cleanup_ << "        free(" << cn << ")\n";
  needs_try_ = true;
  call_args_.push_back(cn);
  if (pl.count.empty()) {
    add_out("PyBytes_FromStringAndSize(" + cn + ", " + size + ")");
  } else {
    add_out("_support.c_string(" + cn + ", " + size + ")" +
                         (m_.conventions.text_as_str() ? ".decode(\"utf-8\", \"replace\")" : ""));
  }
}

// An optional caller buffer; by default a new one of the reported size.
void PyxFunction::out_sized(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string elem = pl.param->type.pointee;
  const bool bytes_out = elem == "char" || elem == "void";
  locals_ << "    cdef _support.BufferRef _view_" << n << "\n    cdef void* " << cn << " = NULL\n    cdef "
          << size_type(pl) << " _n_" << n << " = 0\n";
  init_refs_ << "    _view_" << n << ".held = False\n";
  if (!bytes_out) locals_ << "    cdef " << pl.type.c << "* _a_" << n << " = NULL\n";
  body_ << size_query(pl, "_n_" + n);
  if (bytes_out) {
    body_ << "    _out_" << n << " = _support.sized_output(" << n << ", _n_" << n << ", &_view_" << n << ", &" << cn
          << ", \"" << pl.param->name << "\", \"" << (pl.size_from ? pl.size_from->name : std::string("the call"))
          << "\")\n";
    cleanup_ << "        _support.release_address(&_view_" << n << ")\n";
    // A buffer made here comes back as bytes; the caller's is filled in
    // place and left out of the result, as cuda.bindings does.
    caller_buffer_ = &pl;
    caller_buffer_index_ = out_exprs_.size();
    add_out("bytes(_out_" + n + ")");
  } else {
    body_ << "    _view_" << n << ".held = False\n"
          << "    _a_" << n << " = <" << pl.type.c << "*>_support.alloc_array(_n_" << n << " if _n_" << n
          << " > 0 else 1, sizeof(" << pl.type.c << "))\n"
          << "    " << cn << " = _a_" << n << "\n";
    cleanup_ << "        free(_a_" << n << ")\n";
    add_out("[" + to_python(pl.type, "_a_" + n + "[i]") + " for i in range(_n_" + n + ")]");
  }
  needs_try_ = true;
  call_args_.push_back(cast_param(pl) + cn);
}

void PyxFunction::out_array(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const Plan* count_plan = plan_named(pl.count);
  const bool inout_count = count_plan != nullptr && count_plan->role == Role::InOut;
  const std::string count_expr =
      pl.count_is_fixed ? pl.count : c_value(pl.count, true);
  const std::string& elem_c = pl.type.c;
  locals_ << "    cdef " << elem_c << "* " << cn << " = NULL\n    cdef Py_ssize_t _cap_" << n << " = 0\n";
  // The capacity is read before the call (an inout count is overwritten by it).
  after_inputs_ << "    _cap_" << n << " = <Py_ssize_t>" << count_expr << "\n"
                << "    if _cap_" << n << " < 0:\n"
                << "        raise ValueError(f\"" << pl.count << " cannot be negative ({_cap_" << n << "})\")\n"
                << "    if _cap_" << n << " > 0:\n"
                << "        " << cn << " = <" << elem_c << "*>_support.alloc_array(_cap_" << n << ", sizeof(" << elem_c
                << "))\n";
  cleanup_ << "        free(" << cn << ")\n";
  needs_try_ = true;
  call_args_.push_back(cast_param(pl) + cn);
  // As many items as the call says it wrote (an inout count, or the filled:
  // output), no more than the array holds; else all of them.
  const Plan* filled = pl.param->filled.empty() ? nullptr : plan_named(pl.param->filled);
  const std::string n_out = filled != nullptr ? "min(_cap_" + n + ", <Py_ssize_t>_c_" + filled->py_name + ")"
                            : inout_count     ? "min(_cap_" + n + ", <Py_ssize_t>" + count_expr + ")"
                                              : "_cap_" + n;
  add_out("[" + to_python(pl.type, cn + "[i]") + " for i in range(" + n_out + ")]");
}

// Asked first with a count of 0 and no array; while the call answers that
// the array is too small, again with room for the count it reported.
void PyxFunction::out_array_queried(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  const std::string count = "_c_" + plan_named(pl.count)->py_name;
  locals_ << "    cdef " << pl.type.c << "* " << cn << " = NULL\n";
  cleanup_ << "        free(" << cn << ")\n";
  needs_try_ = true;
  queried_ = &pl;
  call_args_.push_back(cast_param(pl) + cn);
  if (pl.param->type.pointee == "char") {
    // Text up to its NUL ("" when the call reported no length).
    add_out("(b\"\" if " + cn + " == NULL else _support.c_string(" + cn + ", " + count + "))" +
                         (m_.conventions.text_as_str() ? ".decode(\"utf-8\", \"replace\")" : ""));
    return;
  }
  add_out("[" + to_python(pl.type, cn + "[i]") + " for i in range(" + count + ")]");
}

void PyxFunction::out_array_ref(const Plan& pl) {
  const std::string cn = "_c_" + pl.py_name;
  const Plan* count_plan = plan_named(pl.count);
  const std::string count_expr = count_plan ? "_c_" + count_plan->py_name : pl.count;
  locals_ << "    cdef const " << pl.type.c << "* " << cn << " = NULL\n";
  call_args_.push_back(cast_param(pl) + "&" + cn);
  add_out("[] if " + cn + " == NULL else [" + to_python(pl.type, cn + "[i]") + " for i in range(" +
                       count_expr + ")]");
}

// Storage for the largest value the attribute can select; converted after the call.
void PyxFunction::out_typed(const Plan& pl) {
  typed_slot(pl, "None");
  add_out("_support.typed_read(&_c_" + pl.py_name + ", _t_" + pl.py_name + ")", true);
}

// One TypedValue per attribute of the attributes array.
void PyxFunction::out_typed_array(const Plan& pl) {
  const std::string& n = pl.py_name;
  const std::string cn = "_c_" + n;
  const std::string count = c_value(pl.count, true);
  std::string sizes;
  for (const Plan& q : plan_.params) {
    if (q.role == Role::ArrayIn && q.count == pl.count && q.param->name.find("Size") != std::string::npos) {
      sizes = q.py_name;
    }
  }
  locals_ << "    cdef void** " << cn << " = NULL\n    cdef Py_ssize_t _i_" << n << "\n";
  after_inputs_ << "    _tv_" << n << " = [_support.typed_value(" << typed_spec_of(pl, "_i_" + n) << ", None, \""
                << pl.param->name << "\", "
                << (sizes.empty() ? "0" : sizes + "[_i_" + n + "]") << ") for _i_" << n << " in range(" << count << ")]\n"
                << "    " << cn << " = <void**>_support.alloc_array(" << count << ", sizeof(void*))\n"
                << "    for _i_" << n << " in range(" << count << "):\n"
                << "        " << cn << "[_i_" << n << "] = (<_support.TypedValue>_tv_" << n << "[_i_" << n << "]).slot.ptr\n";
  cleanup_ << "        free(" << cn << ")\n";
  needs_try_ = true;
  call_args_.push_back(cast_param(pl) + cn);
  add_out("[v.value() for v in _tv_" + n + "]");
}

// ---------------------------------------------------------------------------
// Sizes reported by another call, and typed values' sizes

std::string PyxFunction::size_type(const Plan& pl) const {
  for (const Param& q : pl.size_from->params) {
    if (q.direction == "out") return m_.cython_c(q.type.pointee);
  }
  throw std::runtime_error(pl.size_from->name + " has no output for the size");
}

// The same leading arguments by name, and an output for the size.
std::string PyxFunction::size_query(const Plan& pl, const std::string& out) const {
  const Function* sf = pl.size_from;
  std::string args;
  for (const Param& q : sf->params) {
    if (!args.empty()) args += ", ";
    if (q.direction == "out") {
      args += "<" + m_.cython_c(q.type.spelling) + ">&" + out;
      continue;
    }
    // Same-named parameter of this function, converted as it was.
    const Plan* same = plan_named(q.name);
    args += "_c_" + (same != nullptr ? same->py_name : python_identifier(q.name));
    if (same == nullptr) throw std::runtime_error(f_.name + ": " + sf->name + " takes '" + q.name + "', which " + f_.name + " lacks");
  }
  std::string s = "    with nogil:\n        _result = " + m_.cy + "." + sf->name + "(" + args + ")\n";
  if (m_.conventions.raising()) return s + "    _check(_result)\n";
  // A caller's buffer leaves its output out of the result, failures included.
  return s + "    if _result != 0:\n        return (_status(_result),) if " + pl.py_name +
         " is not None else (_status(_result), None)\n";
}

void PyxFunction::fill_default_size(const Plan& pl, const std::string& cn) {
  if (pl.param->size_param.empty()) return;
  const Plan* size = plan_named(pl.param->size_param);
  if (size == nullptr || (size->role != Role::InOut && size->role != Role::DerivedSize)) return;
  const std::string c_size = "_c_" + size->py_name;
  after_inputs_ << "    if " << c_size << " == 0:\n        " << c_size << " = " << cn << ".nbytes\n";
}

std::string PyxFunction::size_hint(const Plan& pl) const {
  if (pl.param->size_param.empty()) return "0";
  const Plan* size = plan_named(pl.param->size_param);
  if (size == nullptr) return "0";
  return c_value(pl.param->size_param, true);
}

const Plan* PyxFunction::plan_named(const std::string& c_name) const {
  for (const Plan& pl : plan_.params) {
    if (pl.param->name == c_name) return &pl;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// The call and what it returns

void PyxFunction::callback_setup(std::ostringstream& prelude, std::ostringstream& inner) const {
  const Plan* user = nullptr;
  for (const Plan& pl : plan_.params) {
    if (pl.role == Role::UserData) user = &pl;
  }
  const std::string& fn = callback_->py_name;
  const std::string user_arg = user ? user->py_name : std::string("None");
  // None or 0 passes NULL on, as in cuda.bindings; a C function's address is
  // named as one by its class, so a stray nonzero int never reaches the
  // library as a function to call. Checked before any library call.
  if (callback_->param->nullable < 0) {
    inner << "    if " << fn << " is None or (isinstance(" << fn << ", int) and " << fn << " == 0):\n"
          << "        raise ValueError(\"" << callback_->param->name
          << ": the library calls this function, so it cannot be None or 0\")\n";
  }
  inner << "    if isinstance(" << fn << ", int) and " << fn << " != 0:\n"
        << "        raise TypeError(f\"" << fn << ": expected a callable, None, 0 or " << callback_->type.py
        << "(address) for a C function, got the int {" << fn << "}\")\n";
  // A host function launched into a stream that is being captured runs at
  // every launch of the graph: its context must outlive the first run.
  std::string one_shot = "True";
  for (const Plan& pl : plan_.params) {
    if (pl.role != Role::Handle || (pl.type.py != "CUstream" && pl.type.py != "cudaStream_t")) continue;
    const bool drv = pl.type.py == "CUstream";
    const std::string none = m_.cy + "." + (drv ? "CU_STREAM_CAPTURE_STATUS_NONE" : "cudaStreamCaptureStatusNone");
    prelude << "    cdef " << m_.cy << "." << (drv ? "CUstreamCaptureStatus" : "cudaStreamCaptureStatus")
            << " _capture = " << none << "\n";
    inner << "    with nogil:\n        " << m_.cy << "." << (drv ? "cuStreamIsCapturing" : "cudaStreamIsCapturing")
          << "(_c_" << pl.py_name << ", &_capture)\n";
    one_shot = "_capture == " + none;
  }
  if (!one_shot_callback(callback_->type.py)) one_shot = "False";
  inner << "    if " << fn << " is None or isinstance(" << fn << ", (" << callback_->type.py << ", int)):\n"
        << "        _c_" << fn << " = <" << callback_->type.c << ">_support.plain_address(" << fn << ", \"" << fn
        << "\")\n"
        << "        _ctx = _support.plain_address(" << user_arg << ", \"" << user_arg << "\")\n"
        << "    else:\n"
        << "        _ctx = _support.callback_context(" << fn << ", " << user_arg << ", " << one_shot << ")\n"
        << "        _c_" << fn << " = <" << callback_->type.c << ">_callback_" << callback_->type.py << "\n"
        << "        _trampoline = True\n";
}

bool PyxFunction::struct_status() const { return !m_.lib.python.status_field.empty(); }

// What a call assigns: _result, or for a struct status the struct (_err) and then its code.
std::string PyxFunction::call_target() const { return returns_status_ && struct_status() ? "_err" : "_result"; }

std::string PyxFunction::asks_again(const std::string& no_buffer) const {
  return "(_result == " + std::to_string(m_.conventions.insufficient_size_status()) + " or (_result == 0 and " +
         no_buffer + "))";
}

std::string PyxFunction::after_call(const std::string& pad) const {
  if (!(returns_status_ && struct_status())) return "";
  return pad + "_result = _err." + m_.lib.python.status_field + "\n";
}

std::string PyxFunction::check_call() const {
  if (returns_status_ && struct_status() && !m_.lib.python.status_detail.empty()) {
    return "_check(_result, _err." + m_.lib.python.status_detail + ")";
  }
  return "_check(_result)";
}

void PyxFunction::call(std::ostringstream& inner) const {
  std::string args;
  for (const auto& a : call_args_) args += (args.empty() ? "" : ", ") + a;
  const std::string target = call_target();
  if (f_.header_inline) {
    // A helper defined in the header (make_cudaExtent): no library call, so
    // no GIL release, and its value comes back alone, as in cuda.bindings.
    inner << "    _result = " << m_.cy << "." << public_name_ << "(" << args << ")\n";
  } else if (m_.conventions.error_subclasses()) {
    // The loader's RuntimeError (no library, or no such entry point in it)
    // becomes the library's own error (LibraryNotFoundError, FunctionNotFoundError).
    inner << "    try:\n"
          << "        with nogil:\n"
          << "            _result = " << m_.cy << "." << public_name_ << "(" << args << ")\n"
          << "    except RuntimeError as _e:\n"
          << "        _loader_error(_e)\n";
  } else {
    inner << "    with nogil:\n";
    if (f_.result.spelling == "void") {
      // Nothing comes back (cuFileHandleDeregister).
      inner << "        " << m_.cy << "." << public_name_ << "(" << args << ")\n";
    } else {
      inner << "        " << target << " = " << m_.cy << "." << public_name_ << "(" << args << ")\n";
    }
    inner << after_call("    ");
  }
  if (queried_ != nullptr) {
    const std::string cn = "_c_" + queried_->py_name;
    const std::string count = "_c_" + plan_named(queried_->count)->py_name;
    inner << "    while " << asks_again(cn + " == NULL") << " and " << count << " > 0:\n"
          << "        free(" << cn << ")\n"
          << "        " << cn << " = NULL\n"
          << "        " << cn << " = <" << queried_->type.c << "*>_support.alloc_array(" << count << ", sizeof("
          << queried_->type.c << "))\n"
          << "        with nogil:\n"
          << "            _result = " << m_.cy << "." << public_name_ << "(" << args << ")\n";
  }
  if (!struct_query_.empty()) {
    std::string q = struct_query_;
    for (std::size_t at = q.find("@ARGS@"); at != std::string::npos; at = q.find("@ARGS@")) q.replace(at, 6, args);
    inner << q;
  }
  inner << writebacks_.str();
  if (!f_.release_on_error.empty()) release_on_error(inner);
  if (callback_ != nullptr) {
    // Not registered: the trampoline will never run to release the context.
    inner << "    if _result != 0 and _trampoline:\n        _support.callback_discard(_ctx)\n";
  }
}

void PyxFunction::release_on_error(std::ostringstream& inner) const {
  // The handle a failed call made anyway is freed before the error is raised,
  // through the release function named by the annotation.
  const Function* release = m_.lib.find_function(f_.release_on_error);
  if (release == nullptr || release->params.empty()) {
    throw std::runtime_error(f_.name + ": release_on_error names '" + f_.release_on_error +
                             "', which is no function taking the handle");
  }
  const Param* out = nullptr;
  for (const Param& p : f_.params) {
    if (p.direction == "out") {
      out = &p;
      break;
    }
  }
  const Plan* plan = out != nullptr ? plan_named(out->name) : nullptr;
  if (plan == nullptr) throw std::runtime_error(f_.name + ": release_on_error needs an output parameter");
  // Out parameters are pointers to the handle: the release function takes
  // either the same pointer (nvJitLinkDestroy) or the handle itself.
  const std::string& taken = release->params.front().type.spelling;
  std::string pointee = out->type.spelling;
  while (!pointee.empty() && (pointee.back() == ' ' || pointee.back() == '*')) pointee.pop_back();
  std::string argument;
  if (taken == out->type.spelling) {
    argument = "&_c_" + plan->py_name;
  } else if (taken == pointee) {
    argument = "_c_" + plan->py_name;
  } else {
    throw std::runtime_error(f_.name + ": " + release->name + " takes '" + taken + "', not the output '" +
                             out->type.spelling + "' or what it points to");
  }
  inner << "    if _result != 0 and _c_" << plan->py_name << " != NULL:\n"
        << "        with nogil:\n"
        << "            " << m_.cy << "." << release->name << "(" << argument << ")\n";
}

void PyxFunction::add_out(std::string expr, bool little) {
  out_exprs_.push_back(std::move(expr));
  out_little_.push_back(little);
}

void PyxFunction::returns(std::ostringstream& inner) const {
  if (caller_buffer_ == nullptr) {
    return_values(inner, out_exprs_, out_exprs_.size() == 1 && out_little_[0], "    ");
    return;
  }
  std::vector<std::string> without = out_exprs_;
  without.erase(without.begin() + static_cast<std::ptrdiff_t>(caller_buffer_index_));
  const bool little = without.size() == 1 && out_little_[caller_buffer_index_ == 0 ? 1 : 0];
  inner << "    if " << caller_buffer_->py_name << " is not None:\n";
  return_values(inner, without, little, "        ");
  return_values(inner, out_exprs_, false, "    ");
}

void PyxFunction::return_values(std::ostringstream& inner, const std::vector<std::string>& out_exprs,
                                bool one_little, const std::string& pad) const {
  const TypeInfo result = m_.resolve(f_.result.spelling);
  // A const char * result (cudaGetErrorString) comes back as bytes.
  const std::string result_value = f_.result.spelling == "const char *"
                                       ? "None if _result == NULL else <bytes>_result"
                                       : to_python(result, "_result");
  std::string outs;
  for (const auto& e : out_exprs) outs += ", " + e;
  if (m_.conventions.raising() && f_.result.spelling == "void") {
    inner << pad << "return " << (out_exprs.empty() ? "None" : outs.substr(2)) << "\n";
  } else if (m_.conventions.raising() && signed_count_result(m_, f_)) {
    // cuFileRead's count: -1 with errno set, or a negative CUfileOpError.
    inner << pad << "_check_count(_result)\n";
    inner << pad << "return " << (out_exprs.empty() ? "_result" : "(_result" + outs + ", )") << "\n";
  } else if (m_.conventions.raising() && !returns_status_) {
    // A value rather than a status (nvvmGetErrorString): returned as cuda.bindings
    // returns it, a C string as str ("" for NULL: nvFatbinGetErrorString of success).
    const std::string value = f_.result.spelling == "const char *"
                                  ? "\"\" if _result == NULL else (<bytes>_result).decode()"
                                  : to_python(result, "_result");
    inner << pad << "return " << (out_exprs.empty() ? value : "(" + value + outs + ", )") << "\n";
  } else if (m_.conventions.raising()) {
    inner << pad << check_call() << "\n";
    if (out_exprs.empty()) {
      inner << pad << "return None\n";
    } else if (out_exprs.size() == 1) {
      inner << pad << "return " << out_exprs[0] << "\n";
    } else {
      inner << pad << "return (" << outs.substr(2) << ", )\n";
    }
  } else if (returns_status_) {
    if (out_exprs.empty()) {
      inner << pad << "return _status_alone(_result)\n";
    } else {
      inner << pad << "if _result != 0:\n" << pad << "    return (_status(_result)";
      for (std::size_t i = 0; i < out_exprs.size(); ++i) inner << ", None";
      inner << ")\n";
      if (one_little) {
        // (success, value) in the module's spare pair, filled again in place
        // while nothing else refers to it: no tuple made and freed per call.
        inner << pad << "return _support.spare_pair(&_spare_pair, _status(0), " << out_exprs[0] << ")\n";
      } else {
        inner << pad << "return (_status(0)" << outs << ")\n";
      }
    }
  } else if (f_.header_inline) {
    inner << pad << "return " << result_value << "\n";
  } else {
    // A function that returns a value rather than a status (cudaGetErrorString).
    inner << pad << "return (_status(0), " << result_value << outs << ")\n";
  }
}

// ---------------------------------------------------------------------------
// The def line and the docstring

std::string PyxFunction::signature() const {
  std::string s;
  for (const Argument& a : plan_.arguments) {
    if (!s.empty()) s += ", ";
    s += a.default_value.empty() ? a.declaration : a.name + "=" + a.default_value;
  }
  return s;
}

std::string PyxFunction::doc() const {
  std::ostringstream d;
  d << m_.conventions.function_name(public_name_) << "(";
  for (std::size_t i = 0; i < plan_.arguments.size(); ++i) {
    const Argument& a = plan_.arguments[i];
    d << (i ? ", " : "") << a.name << (a.annotation.empty() ? "" : ": " + a.annotation)
      << (a.default_value.empty() ? "" : (a.annotation.empty() ? "=" : " = ") + a.default_value);
  }
  d << ")\n\n" << function_doc(m_, plan_, public_name_);
  return d.str();
}

std::string function_doc(const Model& m, const FunctionPlan& plan, const std::string& public_name) {
  const Function& f = *plan.function;
  // The output a caller's buffer replaces: a sized char or void buffer (see out_sized).
  const Plan* caller_buffer = nullptr;
  for (const Plan& pl : plan.params) {
    if (pl.role == Role::OutSized && (pl.param->type.pointee == "char" || pl.param->type.pointee == "void")) {
      caller_buffer = &pl;
    }
  }
  std::ostringstream d;
  if (public_name != f.name) d << "The same function as " << f.name << ".\n\n";
  d << clean_doc(f.doc) << "\n\n";
  d << "Returns: ";
  std::vector<std::string> names;
  for (const Output& o : plan.outputs) names.push_back(o.name);
  if (f.header_inline) {
    d << f.result.spelling << " (a helper the header defines; no library call)";
  } else if (m.conventions.raising() && f.result.spelling == "void") {
    d << (names.empty() ? std::string("None") : join(names)) << " (the call reports no status)";
  } else if (m.conventions.raising() && f.status_value) {
    d << "the status, as a " << m.resolve(f.result.spelling).py << " (nothing is raised)";
  } else if (m.conventions.raising() && struct_status_result(m, f)) {
    d << (names.empty() ? std::string("None") : join(names)) << "; raises " << m.conventions.error_class() << " on failure.";
  } else if (m.conventions.raising() && signed_count_result(m, f)) {
    d << "int, the bytes moved; raises " << m.conventions.error_class()
      << " for a negative CUfileOpError, OSError for -1 (errno).";
  } else if (m.conventions.raising() && m.resolve(f.result.spelling).kind != TypeInfo::Kind::Enum) {
    // No status to raise on (nvvmGetErrorString): the value itself.
    d << (f.result.spelling == "const char *" ? "str" : f.result.spelling) << " (no status: nothing is raised)";
  } else if (m.conventions.raising()) {
    d << (names.empty() ? std::string("None") : join(names));
    if (caller_buffer != nullptr) d << " (when " << caller_buffer->py_name << " is given, the call fills it instead)";
    d << "; raises " << m.conventions.error_class() << " on failure.";
  } else {
    names.insert(names.begin(), "status");
    d << "(" << join(names) << ")";
    if (caller_buffer != nullptr) {
      names.erase(std::find(names.begin(), names.end(), caller_buffer->py_name));
      d << "; (" << join(names) << (names.size() == 1 ? ",)" : ")") << " when " << caller_buffer->py_name
        << " is given: the call fills it";
    }
  }
  d << "\nC function: " << f.name << " (" << f.location.file << ")";
  if (f.deprecated) d << "\nDeprecated" << (f.deprecated->empty() ? "." : ": " + *f.deprecated);
  return d.str();
}

}  // namespace codegen::python

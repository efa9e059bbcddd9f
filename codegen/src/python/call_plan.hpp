// The call plan of a function: each parameter's role (how its Python argument
// converts, or how its output comes back), and from those roles the Python
// signature and outputs that both the .pyx and the .pyi writers render.
// Private to the Python emitter.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "codegen/ir.hpp"
#include "python/type_model.hpp"

namespace codegen::python {

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
  DerivedSize,     // size_t *size of a typed value: derived from the attribute, neither argument nor output
  Fixed,           // by value, always the annotation's value (a buffer's length): not an argument
  QueriedCount,    // T *count of a queried array: 0 first, then what the call reported; not an argument
  FilledCount,     // T *count of the items the call wrote into an array of a fixed count; not an argument
  StructSize,      // T *size of an output struct (bytes_of): its sizeof in, what the call says out; neither
  StructFields,    // T * to a struct the binding builds from field arguments; returned whole or one field
  StructItems,     // T * to `count` structs, given as a sequence of structs, ints or tuples; returned as a list
  ItemCount,       // the count of a StructItems array: its length, not an argument
};

// A struct field given as a Python argument (StructFields).
struct FieldArgument {
  const Field* field = nullptr;
  std::string py_name;
  TypeInfo type;            // for a field of `arrays`, the pointee (a struct class)
  bool caller_array = false;  // given as the caller's array of structs (`arrays`)
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
  std::string attribute_enum;  // the enum of the typed_by parameter (InTyped, OutTyped, OutTypedArray)
  bool accepts_null = false;   // StructIn and String: None passes NULL
  // OutArray whose count the call reads and writes (unsigned int *infoCount):
  // asked with 0 first, then again with room for the count it reported.
  bool queried = false;
  std::vector<FieldArgument> field_args;  // StructFields: the fields given as arguments, in order
  std::vector<const Field*> fields;       // StructFields, StructItems: the struct's fields
};

// One Python argument, as the .pyx declares it and the .pyi annotates it.
struct Argument {
  std::string name;
  std::string declaration;  // "unsigned int Flags" for scalars, else the name
  std::string annotation;   // without the name
  std::string default_value;  // "0" or "None" for trailing optional arguments, else ""
};

// One returned output.
struct Output {
  std::string name;
  std::string annotation;
};

struct FunctionPlan {
  const Function* function = nullptr;
  std::string error;  // why the function has no Python form; the rest is then empty
  std::vector<Plan> params;
  std::vector<Argument> arguments;
  std::vector<Output> outputs;
};

// A struct field as a Python property: the .pyx renders its getter and setter,
// the .pyi its annotation.
struct FieldPlan {
  enum class Kind {
    None,          // no Python form: left out
    Text,          // char[N] holding a name: bytes up to the first NUL
    Bytes,         // char[N] of raw bytes (uuid, reserved)
    NumberArray,   // T[N] of numbers, enums, values or addresses: a list that writes items through
    StructArray,   // S[N]: a list of views
    HandleArray,   // H[N]: a list of handles
    String,        // const char *
    KernelParams,  // void **kernelParams / extra, as cuLaunchKernel takes them
    StructList,    // S *: a list of structs (copied into an array the struct keeps)
    HandleList,    // H *: a list of handles (likewise); an output (name_out) reads count_field items
    SharedList,    // V * of python.shared_count_lists: count_field values, assigned with its siblings only
    Pointer,       // any other pointer: an address
    Scalar,        // a number
    Wrapped,       // an enum, handle, value or function pointer
    Struct,        // a nested struct: a view
  };
  Kind kind = Kind::None;
  TypeInfo type;           // the element type of arrays, the pointee of struct pointers, else the field's type
  std::uint64_t count = 1; // array elements
  std::string annotation;
  std::string format;      // NumberArray: the items' struct-module format ("P" for addresses)
  std::string count_field; // HandleList outputs, SharedList: the sibling field that counts the items
  bool read_only = false;  // an output the library fills (phGraph_out): no setter, as in cuda.bindings
};

// `siblings`: the record's fields (anonymous members flattened), for the
// count of an output list.
FieldPlan plan_field(const Model& m, const Field& f, const std::vector<const Field*>& siblings = {});

// As plan_field, for a field of record r: a pointer field that
// python.shared_count_lists names is a SharedList of a value type.
FieldPlan plan_record_field(const Model& m, const Record& r, const Field& f,
                            const std::vector<const Field*>& siblings = {});


// Whether the role takes a Python argument (outputs do not).
bool takes_argument(Role r);

// A struct field that points to bytes (void *, char *): a `queried` one comes back as bytes.
bool points_to_bytes(const Field& f);

// Whether a pointer parameter takes NULL: an annotation says so, or the
// header's documentation mentions NULL near the parameter's name.
bool accepts_null(const Function& f, const Param& p);

// Called once per registration: host functions and stream callbacks.
bool one_shot_callback(const std::string& typedef_name);

class FunctionPlanner {
 public:
  explicit FunctionPlanner(const Model& m) : m_(m) {}

  // Throws std::runtime_error naming the function and parameter when a
  // classified parameter has no Python form: the emitter must not guess.
  FunctionPlan plan(const Function& f) const;

  // The index of the callback typedef's user-data parameter, or -1.
  int callback_user_param(const std::string& typedef_name) const;

 private:
  Plan plan_param(const Function& f, const Param& p, bool has_callback, bool has_user_data) const;
  bool plan_by_value(const Param& p, Plan& pl) const;
  void plan_pointer(const Function& f, const Param& p, bool has_callback, Plan& pl) const;
  bool plan_double_pointer(const Param& p, Plan& pl) const;
  void plan_single_pointer(const Param& p, const TypeInfo& pointee, Plan& pl) const;
  void plan_struct_fields(const Function& f, const Param& p, Plan& pl) const;
  std::string attribute_enum(const Function& f, const Plan& pl) const;
  std::vector<Argument> arguments(const std::vector<Plan>& plans) const;
  std::vector<Output> outputs(const std::vector<Plan>& plans) const;
  Output returned_field(const Plan& pl, const Field& returned) const;

  const Model& m_;
};

// The plans of every bound function of a module, and what the module shares.
struct ModulePlan {
  explicit ModulePlan(const Library& lib);

  const Library& lib;
  Conventions conventions;
  Model model;
  FunctionPlanner planner;
  std::vector<FunctionPlan> functions;   // the functions not skipped, in header order
  std::string status_type;               // C spelling of the type most functions return
  std::string status_py;                 // its Python class
  std::string status_code_type;          // a struct status's code field's C type (CUfileOpError), else ""
  std::set<std::string> attribute_enums; // enums that type a void * value somewhere
};

}  // namespace codegen::python

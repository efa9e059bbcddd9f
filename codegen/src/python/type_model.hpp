// The Python layer's view of a library's types: which C names become handle,
// value, struct or enum classes, and how a value of each converts between C
// and Python. Private to the Python emitter.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/ir.hpp"
#include "python/conventions.hpp"

namespace codegen::python {

struct TypeInfo {
  enum class Kind { Void, Scalar, Enum, Handle, Value, Struct, FunctionPointer, Unknown };
  Kind kind = Kind::Unknown;
  std::string c;   // Cython spelling of the C type: "unsigned int", "cydriver.CUcontext"
  std::string py;  // the Python class (handles, values, structs, enums)
  bool is_float = false;
  bool is_char = false;
  std::string format;  // struct-module format of a scalar: "i", "Q", "f"
  bool plain_int = false;  // a handle given and returned as a plain int (python.handles: int)
};

// The spelling without const, volatile and the struct/union/enum keywords.
std::string strip_qualifiers(std::string s);

// "CUctx_st *" -> "CUctx_st": the spelling without its trailing pointers.
std::string strip_pointer(std::string s);

// C scalar name -> (struct-module format, is floating point).
const std::map<std::string, std::pair<std::string, bool>>& scalars();

class Model {
 public:
  struct StructClass {
    std::string py;
    const Record* record;
    std::vector<std::string> aliases;
  };

  Model(const Library& lib, const Conventions& conventions);

  // The C type's Cython spelling: names the library declares get the cy prefix.
  std::string cython_type(const std::string& name) const;
  // A whole C type spelling ("const CUlaunchAttribute *") for Cython: struct
  // keywords dropped, the library's names prefixed with the cimported module.
  std::string cython_spelling(const std::string& spelling) const;
  // As cython_spelling; function pointers of the raw layer are noexcept nogil.
  std::string cython_c(const std::string& spelling) const;

  TypeInfo resolve(const std::string& spelling) const;

  // The handle typedef of the pointer type spelled `spelling` ("struct cudaGraphicsResource *"), or "".
  std::string handle_spelled(const std::string& spelling) const;

  // Another library's function type (VdpGetProcAddress), taken by pointer.
  static bool is_function_type(const Typedef& t);

  const Enum* find_enum(const std::string& name) const;
  const Typedef* find_typedef(const std::string& name) const;
  const StructClass* find_struct(const std::string& name) const;
  std::string value_c_type(const std::string& name) const { return values_.at(name); }

  // The macro that gives a versioned struct's version field its value
  // (nvmlMemory_v2 for nvmlMemory_v2_t, whose first field is `version`), or "".
  std::string version_macro(const std::string& c_type) const;

  // structs: numpy -- whether cuda.bindings makes arrays of this record's
  // class (python.struct_arrays names it, its tag or a typedef of it).
  bool struct_array(const Record& r) const;
  // structs: numpy -- whether the items of array field f are structs of a class
  // with arrays: a counted one reads as that class over its used items.
  bool items_struct_array(const Field& f) const;
  // structs: numpy -- a field kept in the dtype but no attribute of the
  // class: a reserved array, or the count of a counted array.
  bool numpy_hidden(const Record& r, const Field& f) const;
  // structs: numpy -- the field that counts the items of array field f
  // (python.counted_fields), or "".
  std::string counted_by(const Record& r, const Field& f) const;
  // The pointer fields of this record that one count sizes
  // (python.shared_count_lists), or nullptr.
  const LibraryDescriptor::Python::SharedCountLists* shared_count_lists(const Record& r) const;

  // Fields of a record, C11 anonymous members flattened into it.
  void collect_fields(const Record& r, std::vector<const Field*>& out) const;

  const Library& lib;
  const Conventions& conventions;
  std::string cy;
  std::vector<StructClass> structs;
  std::vector<std::string> handle_order;
  std::vector<std::string> function_pointer_order;  // callback typedefs: CUhostFn, ...
  std::vector<std::string> value_order;
  std::map<std::string, std::vector<std::string>> enum_aliases;

 private:
  void add_enums();
  void add_handles_and_values();
  void add_structs();

  std::map<std::string, const Typedef*> typedefs_;
  std::map<std::string, const Enum*> enums_;
  std::map<std::string, std::string> handles_;
  std::map<std::string, std::string> values_;  // name -> canonical C integer type
  std::map<std::string, std::size_t> structs_by_c_;
};

// Python value of a C expression of this type.
std::string to_python(const TypeInfo& t, const std::string& expr);

// C value of the Python object `obj` for this type (`name` for errors).
// An integer scalar (not floating point, not bool).
bool is_integer(const TypeInfo& t);
// Whether the Python object of a value of t keeps nothing else alive: a
// number, an enum member or a handle read as a plain int (not a handle or
// value object, which the module reuses in place, nor a struct).
bool holds_little(const TypeInfo& t);
// The C value of an integer argument, converted and range-checked as
// cuda.bindings converts it; errors name `name`.
std::string integer_to_c(const TypeInfo& t, const std::string& obj, const std::string& name);

std::string to_c(const TypeInfo& t, const std::string& obj, const std::string& name);

// The annotation of an argument of this type, and of a returned value.
std::string py_annotation(const TypeInfo& t);
std::string py_result_annotation(const TypeInfo& t);

// A new handle object straight from the type's tp_new: the hot path of every
// function that returns one.
std::string wrap_function(const std::string& name);

}  // namespace codegen::python

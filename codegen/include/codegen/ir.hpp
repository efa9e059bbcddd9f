// The generator's intermediate representation: plain values, no clang pointers.
// The front end fills it, annotations refine it, emitters read it. dump-ir writes
// it as JSON (ir_json.cpp) so a change in the headers can be reviewed as data.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace codegen {

// Where a declaration was written, for error messages and review.
struct Location {
  std::string file;  // base name of the header
  unsigned line = 0;
};

// A type as the header spells it, plus what classification needs.
struct Type {
  enum class Kind {
    Void,
    Builtin,          // int, unsigned long long, float, char, ...
    Enum,             // a (typedef of an) enum
    Record,           // a (typedef of a) struct or union, by value
    Handle,           // a typedef of a pointer to an opaque or named struct (CUcontext)
    Pointer,          // anything else spelled with '*'
    FunctionPointer,  // a callback type
    Array,            // a fixed-size array field: char name[256]
  };
  Kind kind = Kind::Builtin;
  std::string spelling;          // as written, typedef names kept: "const char *", "CUdeviceptr"
  std::string canonical;         // with every typedef resolved: "unsigned long long"
  // Pointer: what it points to (one level), spelled, and whether that is const.
  std::string pointee;           // "char" for "const char *", "CUcontext" for "CUcontext *"
  Kind pointee_kind = Kind::Void;
  bool pointee_const = false;
  int pointer_depth = 0;         // 2 for "void **"
  // Array fields.
  std::string element;           // "char"
  std::vector<std::uint64_t> extents;
  // Record by value, or pointee record: the struct or union's IR name.
  std::string record;

};

struct Param {
  std::string name;
  Type type;
  std::string doc;                // the \param text
  std::string doc_direction;      // "in", "out", "inout" from [in]/[out] markers, else ""
  // Filled by classification (check.cpp): what the Python layer does with it.
  std::string direction;          // "in", "out", "inout"; "" while unclassified
  std::string classified_by;      // the rule's name, or "annotation"
  std::string count_param;        // an array whose length is this parameter
  std::string size_param;         // a caller-sized buffer of this many bytes
  std::string size_from;          // a buffer whose size this other function reports
  std::string typed_by;           // a void* whose type this (attribute) parameter selects
  int nullable = 0;               // 1: takes NULL (None), -1: must not be NULL, 0: as its documentation says
  std::string fixed_value;        // not a Python argument: always this value (NVML_DEVICE_NAME_V2_BUFFER_SIZE)
  std::string python_name;        // annotation: the Python name, where it is not the C name's
  bool as_address = false;        // annotation address: an int address of any pointer (cuda.bindings' intptr_t)
  std::string default_value;      // annotation default: the Python argument's default (flags=0)
  // A struct the binding builds (NVML's versioned request structs): these fields are
  // Python arguments, in this order (field_names: their Python names where cuda.bindings
  // does not snake_case the C name); the call returns the struct, or only the fields
  // `returns` names (of `returns_count` elements where it is one pointer field), a
  // tuple where they are several.
  std::vector<std::string> struct_fields;
  std::map<std::string, std::string> field_names;
  std::vector<std::string> returns_fields;
  std::string returns_count;
  // Pointer fields pointed at an array the binding allocates, of as many elements as
  // the named field (an argument) holds.
  std::map<std::string, std::string> field_buffers;
  // A pointer field to an array of structs filled by a two-call query: asked with
  // the count field at 0, then with an array of as many as the call reported.
  std::map<std::string, std::string> field_queried;
  std::string bytes_of;           // not a Python argument: the byte size of this array parameter
  // An output array of a fixed count that the call fills only in part: the
  // output parameter (neither argument nor result) in which it says how many.
  std::string filled;
  // An array of structs the call reads and fills, its count its length: each item is a
  // struct, or an int or tuple that sets these fields in order (fieldId, scopeId).
  std::vector<std::string> item_fields;
  // Of struct_fields, those given as bytes or str (UTF-8), copied into the field's
  // storage, the rest zero (nvmlUUID_t's value union: an ASCII UUID or 16 bytes).
  std::vector<std::string> bytes_fields;
  // Byte array fields whose length in bytes another field holds: set from the bytes
  // given, and read back as that many bytes (nvmlPRMTLV_v1_t's inData, outData: dataSize).
  std::map<std::string, std::string> field_sizes;
  // Pointer fields given as the caller's array of structs (an instance of the pointee's
  // class, of any length): the call fills it in place, its length goes into the count
  // field, and returning the field returns that object (nvmlPRMCounterList_v1_t's counters).
  std::map<std::string, std::string> field_arrays;
};

enum class PerThread { None, Ptds, Ptsz };

struct Function {
  unsigned order = 0;         // position in the translation unit: emitters keep header order
  std::string name;           // the public name users write: cuCtxCreate
  std::string abi_symbol;     // what the header's macros select: cuCtxCreate_v4
  std::string versioned_symbol;  // nvJitLink: the exported symbol a static inline wrapper calls
  bool header_inline = false;  // defined in the header and called directly (make_cudaExtent): no entry point
  std::vector<std::string> aliases;  // other public names #defined to this one: cuGraphInstantiate
  Type result;
  std::vector<Param> params;
  std::string doc;            // brief + details, plain text
  std::optional<std::string> deprecated;  // the attribute's message ("" when it has none)
  PerThread per_thread = PerThread::None;
  int abi_version = 0;        // driver: the CUDA version to ask cuGetProcAddress for
  std::string proc_name;      // driver: the name to ask it with (cuCtxGetDevice for cuCtxGetDevice_v2)
  std::string introduced;     // "12.8": the CUDA version that introduced it, where known
  // A function that frees the handle this one outputs even when it fails
  // (nvJitLinkCreate makes one for options it rejects): called before the error is raised.
  std::string release_on_error;
  bool status_value = false;  // annotation: its status is the value it returns, raising nothing (cudlaGetLastError)
  // The output parameter through which it makes a handle (nvrtcCreateProgram's
  // prog), or the parameter through which it destroys one (nvrtcDestroyProgram's
  // prog): the raw layer records the handles it made, so that the bindings can
  // tell a live handle from a made-up or destroyed one.
  std::string makes_handle;
  std::string destroys_handle;
  Location location;
};

struct Enumerator {
  std::string name;
  std::int64_t value = 0;
  std::string doc;
};

struct Enum {
  unsigned order = 0;         // position in the translation unit: emitters keep header order
  std::string name;           // the typedef users write (CUresult), else the tag
  std::string tag;            // cudaError_enum; "" when unnamed
  std::vector<Enumerator> enumerators;
  std::string doc;
  Location location;
  // Built by the Python emitter from a group of #define constants (nvml's
  // FieldId): its name and its members' are the Python ones, as they stand.
  bool python_named = false;
  bool unsigned_values = false;  // its constants are unsigned: -1 stands for 0xFFFFFFFFFFFFFFFF
};

struct Field {
  std::string name;           // "" for a C11 anonymous member
  Type type;
  std::string doc;
  unsigned bit_width = 0;     // bit-fields
  bool anonymous_member = false;  // struct { union { int a; }; }: the union's fields are reached as s.a
};

struct Record {
  unsigned order = 0;         // position in the translation unit: emitters keep header order
  std::string name;           // the IR name: the typedef, the tag, or a synthesized anon_<parent>_<field>
  std::string tag;            // "" when unnamed
  bool is_union = false;
  bool is_complete = true;    // false for opaque structs (struct CUctx_st;)
  bool synthesized_name = false;  // unnamed: `name` is ours, not the header's
  // How C++ code names the type: the tag or typedef, or for an unnamed member's
  // type decltype(Parent::member). Empty for C11 anonymous members, which have
  // no name in C or C++ (their fields are reached through the parent).
  std::string cpp_name;
  std::vector<Field> fields;
  std::string doc;
  Location location;
};

struct Typedef {
  unsigned order = 0;         // position in the translation unit: emitters keep header order
  enum class Kind {
    Alias,            // typedef unsigned long long CUdeviceptr_v2;  typedef CUdeviceptr_v2 CUdeviceptr;
    Handle,           // typedef struct CUctx_st *CUcontext;
    FunctionPointer,  // typedef void (*CUhostFn)(void *userData);
    RecordAlias,      // typedef struct CUDA_MEMCPY2D_st CUDA_MEMCPY2D_v2;
    EnumAlias,        // typedef enum CUjit_option_enum CUjit_option;
  };
  std::string name;
  Kind kind = Kind::Alias;
  Type target;                // what it names, spelled
  std::string record;         // Handle / RecordAlias: the record's IR name
  // FunctionPointer: the callback's signature.
  Type fn_result;
  std::vector<Param> fn_params;
  // Declared by another library's header (EGLint, VdpGetProcAddress): the
  // target is spelled canonically, and a function type is "void" (opaque,
  // used through pointers only).
  bool foreign = false;
  std::string doc;
  Location location;
};

struct Macro {
  unsigned order = 0;         // position in the translation unit: emitters keep header order
  enum class Kind {
    Integer,    // #define CUDA_VERSION 13000
    Pointer,    // #define CU_STREAM_LEGACY ((CUstream)0x1): an address, bound as an integer
    Float,
    String,
  };
  std::string name;
  Kind kind = Kind::Integer;
  std::string spelling;       // the definition's tokens, joined
  std::int64_t int_value = 0;
  double float_value = 0;
  std::string string_value;
  std::string c_type;         // the expression's type: "int", "unsigned long long", "CUstream", "void *"
  std::string doc;
};

// #define cuCtxCreate cuCtxCreate_v4, #define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2)
struct Rename {
  std::string public_name;
  std::string target;         // cuCtxCreate_v4 / cuMemcpyHtoD_v2
  PerThread per_thread = PerThread::None;
};

// One library as its annotation file's `library:` block describes it: what to
// parse, how the loader finds and resolves it, how Python presents it. Read
// once (annotations.cpp); every emitter reads these facts from here, so a new
// library is a new YAML file and no code.
struct LibraryDescriptor {
  // How the loader looks up entry points once the library is open.
  enum class Resolution {
    Symbol,                   // dlsym of each symbol
    ProcAddress,              // cuGetProcAddress_v2 with each function's ABI version (the driver)
    SymbolPerThreadVariants,  // dlsym, and <symbol>_ptds/_ptsz on request (the runtime)
  };
  // How the Python module reports a failed call.
  enum class Errors {
    StatusTuple,  // every function returns (status, *outputs)
    Raise,        // functions return their outputs and raise on failure
  };
  struct Python {
    std::string title;        // "NVRTC, the runtime compiler (nvrtc.h)": the module's docstring names it
    Errors errors = Errors::StatusTuple;
    // With errors: raise (as cuda.bindings.nvjitlink): the exception class, and the
    // prefix that Python names drop (nvJitLinkAddData -> add_data, nvJitLinkInputType -> InputType).
    std::string error_class;
    std::string prefix;
    // Module helpers that cuda.bindings offers beyond the headers, each the
    // same call as a bound function: getLocalRuntimeVersion -> cudaRuntimeGetVersion.
    std::map<std::string, std::string> aliases;
    // Function names where cuda.bindings' snake_case is not the rule's
    // (nvmlDeviceGetNvLinkState -> device_get_nvlink_state).
    std::map<std::string, std::string> names;
    // The #define constants the module exports, when not all (cuda.bindings.nvml exports three).
    std::vector<std::string> constants;
    // An enum cuda.bindings builds from a group of constants (nvml's FieldId from
    // NVML_FI_*): the constants whose names start with `prefix` (#defines and the
    // members of the header's enums; none marked @deprecated), each member named
    // by its constant less `strip` (the prefix when not given), a CamelCase rest
    // in UPPER_SNAKE (nvmlEventTypeSingleBitEccError -> SINGLE_BIT_ECC_ERROR);
    // `exclude` leaves constants out, `members` names others (member -> constant),
    // a constant it names under the prefix then has that name only.
    struct DefineEnum {
      std::string name;
      std::string prefix;
      std::string strip;
      std::vector<std::string> exclude;
      std::vector<std::pair<std::string, std::string>> members;
    };
    std::vector<DefineEnum> define_enums;
    // More names of a header enum's members, where cuda.bindings has names no
    // rule gives (nvmlCoolerTarget_t: THERMAL_GPU -> NVML_THERMAL_COOLER_TARGET_GPU).
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> member_names;
    bool int_handles = false;       // handles: int -- handles are plain integers (cuda.bindings.nvml)
    bool text_as_str = false;       // text: str -- C strings the call fills come back as str
    bool error_subclasses = false;  // a subclass of error_class per failing status (UninitializedError)
    // A status that is a struct (cuFile's CUfileError_t): the field holding the code, and
    // the field the exception also carries (its CUresult), as error_class(code, detail).
    std::string status_field;
    std::string status_detail;
    // The function that describes a status in words (cufileop_status_error): the
    // error's message carries its text, as cuda.bindings' cuFileError's does.
    std::string status_text;
    // Names of other cubind.bindings modules this one also offers, imported on
    // first use (cuda.bindings.cufile's pyCUresult: driver.CUresult).
    std::map<std::string, std::string> reexports;
    bool check_status = false;  // the module has check_status(status), as cuda.bindings.cudla
    // Each enum member also under its name less the library's prefix (CUDLA_MODULE_DEFAULT ->
    // MODULE_DEFAULT) and, for a camel-case member (cudlaErrorOs), as Error Os and ERROR_OS.
    bool member_aliases = false;
    // structs: numpy -- the struct classes carry cuda.bindings' NumPy layer
    // (cuda.bindings.nvml): a <snake>_dtype per class, ptr, from_ptr, from_data,
    // from_buffer, and field names clear of numpy.ndarray's attributes (size_).
    bool numpy_structs = false;
    // structs: numpy -- the C types whose classes are arrays, as cuda.bindings
    // makes them (FieldValue(size=1), len(), indexing).
    std::vector<std::string> struct_arrays;
    // structs: numpy -- "Type.array" -> the sibling field that counts its items
    // (nvmlClkMonStatus_t.clkMonList -> clkMonListSize): the array reads that
    // many, assigning sets it, and the count is no attribute of its own.
    std::map<std::string, std::string> counted_fields;
    // Pointer fields of one struct that one count field sizes (Type -> the
    // count, then the fields: CUDA_MEMCPY_BATCH_NODE_PARAMS_V1_st -> count,
    // dsts, srcs), as cuda.bindings makes them: each reads as a list of
    // `count` items, none is assigned alone, and set_<a>_<b>(a, b) sets them
    // and the count together.
    struct SharedCountLists {
      std::string count;
      std::vector<std::string> lists;
    };
    std::map<std::string, SharedCountLists> shared_count_lists;
    // Python names of struct fields that no rule gives, by C field name
    // (nvml's bar1Size is bar1size in cuda.bindings.nvml, beside bar1_total).
    std::map<std::string, std::string> struct_field_names;
  };

  std::string name;           // driver, runtime, nvrtc, nvjitlink: the file's stem, and every emitted name
  std::vector<std::string> headers;        // included, in order, by the parsed translation unit
  std::vector<std::string> owned_files;    // base names whose declarations belong to the library
  std::vector<std::string> extra_headers;  // included after `headers`, declarations not owned (cudaTypedefs.h)
  std::vector<std::string> defines;        // macros defined before the headers (NVML_NO_UNVERSIONED_FUNC_DEFS)
  std::string soname;                      // libcuda.so.1
  std::string display_name;                // "the CUDA driver": how the loader's messages name it
  std::string env_override;                // CUBIND_NVRTC_LIBRARY: a full path tried first; "" for none
  std::vector<std::string> wheel_dirs;     // under site-packages, where NVIDIA's wheels put the library
  // Under a toolkit's root ($CUDA_HOME, /usr/local/cuda): where it keeps the
  // library; empty for the loader's default, lib64 then lib (libNVVM: nvvm/lib64).
  std::vector<std::string> toolkit_dirs;
  bool system_loader_only = false;         // dlopen(soname) and no other place (the driver)
  Resolution resolution = Resolution::Symbol;
  // Identifiers that select per-thread default stream variants when defined,
  // e.g. __CUDA_API_PTDS; a macro `#define X PTDS(Y)` marks X as having one.
  std::vector<std::string> per_thread_macros;
  // Typedefs of other libraries' headers that the owned declarations use and
  // the bindings name (EGLImageKHR, GLenum, VdpDevice): recorded as if owned.
  std::vector<std::string> foreign_types;
  Python python;
};

// A parsed library: its descriptor, then what the headers declare.
struct Library : LibraryDescriptor {
  std::vector<std::string> type_headers;  // owned files beyond `headers` whose declarations belong here
  int cuda_version = 0;       // CUDA_VERSION of the headers: 13000
  std::vector<Function> functions;
  std::vector<Enum> enums;
  std::vector<Record> records;
  std::vector<Typedef> typedefs;
  std::vector<Macro> macros;
  std::vector<Rename> renames;
  std::map<std::string, std::string> type_aliases;  // #define cudaStreamAttrID cudaLaunchAttributeID
  // Declarations seen in the headers that are not bound, with the reason
  // (from the annotations); the coverage table lists them.
  std::map<std::string, std::string> skipped;
  // For void * parameters typed by an attribute enum: enum -> member -> C type.
  std::map<std::string, std::map<std::string, std::string>> attribute_types;
  // What the front end noticed but could not settle, e.g. a driver function
  // with no PFN typedef; check prints them.
  std::vector<std::string> notes;

  const Function* find_function(const std::string& name) const;
  const Record* find_record(const std::string& name) const;
  const Typedef* find_typedef(const std::string& name) const;
  const Enum* find_enum(const std::string& name) const;
};

// A handle type whose live handles the raw layer records: the function that
// makes them and the one that destroys them, each with its parameter.
struct LiveHandle {
  std::string type;  // nvrtcProgram
  const Function* made_by = nullptr;
  const Function* destroyed_by = nullptr;
};
// Those of a library, in the order of their make functions.
std::vector<LiveHandle> live_handles(const Library& lib);

const char* to_string(Type::Kind kind);
const char* to_string(Typedef::Kind kind);
const char* to_string(Macro::Kind kind);
const char* to_string(PerThread per_thread);
const char* to_string(LibraryDescriptor::Resolution resolution);  // as the YAML spells it: proc_address
const char* to_string(LibraryDescriptor::Errors errors);          // status_tuple, raise

}  // namespace codegen

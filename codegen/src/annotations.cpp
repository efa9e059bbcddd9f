// Annotation files and the classification of parameters.
//
// File format (schema enforced below; any other key is an error):
//
//   library:                             # required: the descriptor of the library
//     name: nvrtc                        # required, the file's stem: [a-z][a-z0-9_]*
//     headers: [nvrtc.h]                 # required: included, in order, by the parsed unit
//     owned_files: [nvrtc.h]             # whose declarations are bound (default: headers)
//     extra_headers: [cudaTypedefs.h]    # included after headers, not owned (default: none)
//     soname: libnvrtc.so.13             # required
//     display_name: NVRTC                # required: how the loader's messages name it
//     env_override: CUBIND_NVRTC_LIBRARY # a full path tried first (default: none)
//     wheel_dirs: [nvidia/cu13/lib]      # under site-packages (default: none)
//     toolkit_dirs: [nvvm/lib64]         # under a toolkit's root (default: lib64, lib)
//     system_loader_only: false          # true: dlopen(soname) only; no env_override, no wheel_dirs
//     resolution: symbol                 # symbol | proc_address | symbol_per_thread_variants
//     per_thread_macros: [__CUDA_API_PTDS]  # select per-thread default stream variants
//     foreign_types: [EGLint]            # other libraries' typedefs bound as if owned
//     python:                            # required
//       title: "NVRTC, the runtime compiler (nvrtc.h)"  # required: the module's docstring
//       errors: status_tuple             # status_tuple (default) | raise
//       error_class: nvJitLinkError      # with errors: raise, required: the exception raised
//       prefix: nvJitLink                # with errors: raise: dropped from Python names (default: none)
//       aliases:                         # Python helpers that call a bound function (default: none)
//         getLocalRuntimeVersion: cudaRuntimeGetVersion
//       define_enums:                    # with errors: raise: enums built from groups of constants
//         BusType: NVML_BUS_TYPE_        # every constant named NVML_BUS_TYPE_*, less the prefix
//         EventType:                     # CamelCase rests in UPPER_SNAKE: SINGLE_BIT_ECC_ERROR
//           prefix: nvmlEventType
//           exclude: [nvmlEventTypeAll]  # constants left out (those marked @deprecated always are)
//           members: {MIG_CONFIG_CHANGE: nvmlEventMigConfigChange}   # named here, any constant
//         PcieLinkMaxSpeed:
//           prefix: NVML_PCIE_LINK_MAX_SPEED_
//           strip: NVML_PCIE_LINK_MAX_   # dropped from the names instead of the prefix: SPEED_2500MBPS
//       member_names:                    # more names of a header enum's members, where no rule gives them
//         nvmlCoolerTarget_t: {THERMAL_GPU: NVML_THERMAL_COOLER_TARGET_GPU}
//       status_field: err                # a status that is a struct (CUfileError_t): its code's field,
//       status_detail: cu_err            # and the CUresult it carries (the error's .cuda_error)
//       status_text: cufileop_status_error   # a function describing a status: the error's message has it
//       reexports: {pyCUresult: driver.CUresult}   # names of other modules offered too, imported on use
//       struct_field_names: {bar1Size: bar1size}   # struct fields' Python names no rule gives (C name)
//       shared_count_lists:              # pointer fields of a value type that one count sizes: lists
//         CUDA_MEMCPY_BATCH_NODE_PARAMS_V1_st: [count, dsts, srcs]   # the count, then the fields;
//                                        # set together by set_dsts_srcs(dsts, srcs)
//   functions:                           # required, may be empty ({})
//     cuDeviceGetName:
//       params:
//         name: {direction: out, size: len}
//     cuModuleLoadDataEx:
//       params:
//         options: {direction: in, count: numOptions}
//     cuTexRefGetBorderColor:
//       params:
//         pBorderColor: {direction: out, count: 4}   # a fixed length
//     nvmlDeviceGetGspFirmwareVersion:
//       params:
//         version: {direction: out, count: NVML_GSP_FIRMWARE_VERSION_BUF_SIZE}   # one a header #defines
//     cuTensorMapEncodeTiled:
//       params:
//         globalStrides: {direction: in, count: tensorRank - 1}   # a parameter minus a constant
//     cuSomethingWindowsOnly:
//       skip: "why it cannot be bound on Linux"
//     cuLogsDumpToMemory:
//       params:
//         buffer: {direction: inout, size: size}     # char *: the caller's buffer, which the call fills
//     nvrtcGetProgramLog:
//       params:
//         log: {direction: out, size_from: nvrtcGetProgramLogSize}
//     nvrtcGetPCHHeapSize:
//       introduced: "12.8"
//     nvJitLinkCreate:
//       release_on_error: nvJitLinkDestroy   # frees the handle a failed call still made
//       makes_handle: handle                 # the raw layer records the handles it makes...
//     nvJitLinkDestroy:
//       destroys_handle: handle              # ...until this destroys them; bindings refuse others
//     nvmlDeviceGetClockOffsets:
//       params:
//         info:                          # a struct the binding builds, its version set from nvml.h's
//           direction: out               # NVML_STRUCT_VERSION macro; these fields are arguments
//           fields: [type, pstate]       # (clock_type, pstate), in this order, and it is returned
//           field_names: {type: clock_type}   # Python names where not the snake_case field name
//     nvmlDeviceGetTemperatureV:
//       params:
//         temperature: {direction: out, fields: [sensorType], returns: temperature}   # one field returned
//     nvmlSystemEventSetWait:
//       params:
//         request:
//           direction: inout
//           fields: [set, timeoutms, dataSize]
//           buffers: {data: dataSize}    # the pointer field `data` gets an array of dataSize elements
//           returns: data                # ...which comes back, numEvent elements of it
//           returns_count: numEvent
//     nvmlDeviceGetRunningProcessDetailList:
//       params:
//         plist:
//           direction: inout
//           fields: [mode]
//           queried: {procArray: numProcArrayEntries}   # asked with the count at 0, then with an
//                                                       # array of as many structs as it reported
//     nvmlDeviceGetHandleByUUIDV:
//       params:
//         uuid:
//           direction: in
//           fields: [type, value]
//           field_names: {value: uuid}
//           bytes_fields: [value]        # given as bytes or str, copied into the field (a union)
//     nvmlDeviceReadWritePRM_v1:
//       params:
//         buffer:
//           direction: inout
//           fields: [inData]
//           bytes_fields: [inData]
//           sizes: {inData: dataSize, outData: dataSize}   # the bytes' length goes into dataSize;
//           returns: [status, outData]                      # outData comes back as dataSize bytes
//     nvmlDeviceReadPRMCounters_v1:
//       params:
//         counterList:                   # the caller's PRMCounter_v1 array, filled in place: its
//           direction: inout             # address and length go into the struct, and it is returned
//           fields: [counters]
//           arrays: {counters: numCounters}
//           returns: counters
//     nvmlEventSetGetContextData_v1:
//       params:
//         params: {direction: inout, fields: [index], queried: {data: dataSize}, returns: data}
//                                        # a void * field: as many bytes as it reported, returned as bytes
//     nvmlDeviceGetSupportedPerformanceStates:
//       params:
//         pstates: {direction: out, count: 16}
//         size: {direction: in, bytes_of: pstates}   # not an argument: the array's size in bytes
//     nvmlDeviceGetGpuInstances:
//       params:
//         gpuInstances: {direction: out, count: 64, filled: count}   # room for 64; the call says in
//                                                                    # count how many it wrote, and
//                                                                    # that many are returned
//     nvmlDeviceGetFieldValues:
//       params:
//         values:                        # a sequence of structs, or of ints / tuples that set these
//           direction: inout             # fields; the count is its length; returned as a list and
//           count: valuesCount           # written back to the structs given
//           item_fields: [fieldId, scopeId]
//     nvFatbinDestroy:
//       params:
//         handle_indirect: {direction: in, python_name: handle}   # the Python name, where cuda.bindings
//                                                                 # does not snake_case the C name
#include "codegen/annotations.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace codegen {
namespace {

// ---------------------------------------------------------------------------
// Schema

struct Reader {
  std::string file;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
    const YAML::Mark mark = node.Mark();
    throw AnnotationError(file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) +
                          ": " + what);
  }

  unsigned line(const YAML::Node& node) const { return static_cast<unsigned>(node.Mark().line + 1); }

  void expect_map(const YAML::Node& node, const std::string& what) const {
    if (!node.IsMap()) fail(node, what + " must be a mapping");
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar() || node.Scalar().empty()) fail(node, what + " must be a non-empty string");
    return node.Scalar();
  }

  void only_keys(const YAML::Node& node, const std::set<std::string>& allowed, const std::string& where) const {
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(kv.first, "unknown key '" + key + "' in " + where + " (allowed: " + list + ")");
      }
    }
  }
};

const std::set<std::string> kDirections = {"in", "out", "inout"};

std::vector<std::string> string_list(const Reader& r, const YAML::Node& node, const std::string& where) {
  if (!node.IsSequence()) r.fail(node, where + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : node) {
    std::string value = r.scalar(item, "each entry of " + where);
    if (std::find(out.begin(), out.end(), value) != out.end()) r.fail(item, where + " names " + value + " twice");
    out.push_back(std::move(value));
  }
  return out;
}

bool boolean(const Reader& r, const YAML::Node& node, const std::string& where) {
  const std::string v = r.scalar(node, where);
  if (v != "true" && v != "false") r.fail(node, where + " is '" + v + "'; expected true or false");
  return v == "true";
}

// The `library:` block: everything the generator knows of a library beyond
// what its headers declare.
LibraryDescriptor read_descriptor(const Reader& r, const YAML::Node& node) {
  if (node.IsScalar()) {
    r.fail(node, "library must be a mapping (name, headers, soname, display_name, python, ...), not a name");
  }
  r.expect_map(node, "library");
  r.only_keys(node,
              {"name", "headers", "owned_files", "extra_headers", "defines", "soname", "display_name", "env_override",
               "wheel_dirs", "toolkit_dirs", "system_loader_only", "resolution", "per_thread_macros", "foreign_types",
               "python"},
              "library");
  for (const char* key : {"name", "headers", "soname", "display_name", "python"}) {
    if (!node[key]) r.fail(node, std::string("library needs '") + key + "'");
  }
  LibraryDescriptor d;
  d.name = r.scalar(node["name"], "library.name");
  static const std::regex name_re("[a-z][a-z0-9_]*");
  if (!std::regex_match(d.name, name_re)) {
    r.fail(node["name"], "library.name is '" + d.name +
                             "'; expected lower-case letters, digits and _ (it names files and functions)");
  }
  d.headers = string_list(r, node["headers"], "library.headers");
  if (d.headers.empty()) r.fail(node["headers"], "library.headers is empty; a library has at least one header");
  d.owned_files = node["owned_files"] ? string_list(r, node["owned_files"], "library.owned_files") : d.headers;
  if (node["extra_headers"]) d.extra_headers = string_list(r, node["extra_headers"], "library.extra_headers");
  if (node["defines"]) d.defines = string_list(r, node["defines"], "library.defines");
  d.soname = r.scalar(node["soname"], "library.soname");
  d.display_name = r.scalar(node["display_name"], "library.display_name");
  if (node["env_override"]) {
    d.env_override = r.scalar(node["env_override"], "library.env_override");
    static const std::regex env_re("[A-Z_][A-Z0-9_]*");
    if (!std::regex_match(d.env_override, env_re)) {
      r.fail(node["env_override"],
             "library.env_override is '" + d.env_override + "'; expected an environment variable name");
    }
  }
  if (node["wheel_dirs"]) d.wheel_dirs = string_list(r, node["wheel_dirs"], "library.wheel_dirs");
  if (node["toolkit_dirs"]) d.toolkit_dirs = string_list(r, node["toolkit_dirs"], "library.toolkit_dirs");
  if (node["system_loader_only"]) {
    d.system_loader_only = boolean(r, node["system_loader_only"], "library.system_loader_only");
  }
  // A library of the driver (NVML) may still take an override, tried first.
  if (d.system_loader_only && (!d.wheel_dirs.empty() || !d.toolkit_dirs.empty())) {
    r.fail(node["system_loader_only"], "library.system_loader_only is true, so wheel_dirs and toolkit_dirs would "
                                       "never be searched; drop them");
  }
  if (node["resolution"]) {
    const std::string v = r.scalar(node["resolution"], "library.resolution");
    using R = LibraryDescriptor::Resolution;
    if (v == "symbol") {
      d.resolution = R::Symbol;
    } else if (v == "proc_address") {
      d.resolution = R::ProcAddress;
    } else if (v == "symbol_per_thread_variants") {
      d.resolution = R::SymbolPerThreadVariants;
    } else {
      r.fail(node["resolution"],
             "library.resolution is '" + v + "'; expected symbol, proc_address or symbol_per_thread_variants");
    }
  }
  if (node["per_thread_macros"]) {
    d.per_thread_macros = string_list(r, node["per_thread_macros"], "library.per_thread_macros");
  }
  if (d.resolution == LibraryDescriptor::Resolution::SymbolPerThreadVariants && d.per_thread_macros.empty()) {
    r.fail(node["resolution"],
           "library.resolution is symbol_per_thread_variants, which needs per_thread_macros to find the variants");
  }
  if (node["foreign_types"]) d.foreign_types = string_list(r, node["foreign_types"], "library.foreign_types");
  const YAML::Node python = node["python"];
  r.expect_map(python, "library.python");
  r.only_keys(python, {"title", "errors", "error_class", "prefix", "aliases", "names", "handles", "text", "constants",
                       "error_subclasses", "structs", "struct_arrays", "counted_fields", "define_enums",
                       "member_names", "status_field", "status_detail", "check_status", "member_aliases",
                       "shared_count_lists", "status_text", "reexports", "struct_field_names"},
              "library.python");
  if (!python["title"]) r.fail(python, "library.python needs 'title'");
  d.python.title = r.scalar(python["title"], "library.python.title");
  if (python["errors"]) {
    const std::string v = r.scalar(python["errors"], "library.python.errors");
    if (v == "status_tuple") {
      d.python.errors = LibraryDescriptor::Errors::StatusTuple;
    } else if (v == "raise") {
      d.python.errors = LibraryDescriptor::Errors::Raise;
    } else {
      r.fail(python["errors"], "library.python.errors is '" + v + "'; expected status_tuple or raise");
    }
  }
  const bool raising = d.python.errors == LibraryDescriptor::Errors::Raise;
  for (const char* key : {"error_class", "prefix"}) {
    if (python[key] && !raising) r.fail(python[key], std::string("library.python.") + key + " needs errors: raise");
  }
  if (raising && !python["error_class"]) r.fail(python, "library.python has errors: raise, which needs 'error_class'");
  if (python["error_class"]) d.python.error_class = r.scalar(python["error_class"], "library.python.error_class");
  if (python["prefix"]) d.python.prefix = r.scalar(python["prefix"], "library.python.prefix");
  if (const YAML::Node names = python["names"]) {
    r.expect_map(names, "library.python.names");
    for (const auto& entry : names) {
      const std::string name = r.scalar(entry.first, "a name of library.python.names");
      d.python.names[name] = r.scalar(entry.second, "library.python.names." + name);
    }
  }
  if (python["constants"]) d.python.constants = string_list(r, python["constants"], "library.python.constants");
  if (python["handles"]) {
    const std::string v = r.scalar(python["handles"], "library.python.handles");
    if (v != "int" && v != "class") r.fail(python["handles"], "library.python.handles is '" + v + "'; expected int or class");
    d.python.int_handles = v == "int";
  }
  if (python["text"]) {
    const std::string v = r.scalar(python["text"], "library.python.text");
    if (v != "str" && v != "bytes") r.fail(python["text"], "library.python.text is '" + v + "'; expected str or bytes");
    d.python.text_as_str = v == "str";
  }
  if (python["error_subclasses"]) {
    d.python.error_subclasses = boolean(r, python["error_subclasses"], "library.python.error_subclasses");
    if (d.python.error_subclasses && !raising) {
      r.fail(python["error_subclasses"], "library.python.error_subclasses needs errors: raise");
    }
  }
  for (const char* key : {"status_field", "status_detail"}) {
    if (python[key] && !raising) r.fail(python[key], std::string("library.python.") + key + " needs errors: raise");
  }
  if (python["status_detail"] && !python["status_field"]) {
    r.fail(python["status_detail"], "library.python.status_detail needs status_field");
  }
  if (python["member_aliases"]) {
    d.python.member_aliases = boolean(r, python["member_aliases"], "library.python.member_aliases");
  }
  if (python["check_status"]) d.python.check_status = boolean(r, python["check_status"], "library.python.check_status");
  if (python["status_field"]) d.python.status_field = r.scalar(python["status_field"], "library.python.status_field");
  if (python["status_detail"]) d.python.status_detail = r.scalar(python["status_detail"], "library.python.status_detail");
  if (python["status_text"]) {
    if (!python["status_field"]) r.fail(python["status_text"], "library.python.status_text needs status_field");
    d.python.status_text = r.scalar(python["status_text"], "library.python.status_text");
  }
  if (const YAML::Node names = python["struct_field_names"]) {
    r.expect_map(names, "library.python.struct_field_names");
    for (const auto& entry : names) {
      const std::string field = r.scalar(entry.first, "a name of library.python.struct_field_names");
      d.python.struct_field_names[field] = r.scalar(entry.second, "library.python.struct_field_names." + field);
    }
  }
  if (const YAML::Node reexports = python["reexports"]) {
    r.expect_map(reexports, "library.python.reexports");
    for (const auto& entry : reexports) {
      const std::string name = r.scalar(entry.first, "a name of library.python.reexports");
      const std::string target = r.scalar(entry.second, "library.python.reexports." + name);
      if (!std::regex_match(target, std::regex("[a-z][a-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*"))) {
        r.fail(entry.second, "library.python.reexports." + name + " is '" + target +
                                 "'; expected module.Name of cubind.bindings (driver.CUresult)");
      }
      d.python.reexports[name] = target;
    }
  }
  if (python["structs"]) {
    const std::string v = r.scalar(python["structs"], "library.python.structs");
    if (v != "numpy" && v != "plain") r.fail(python["structs"], "library.python.structs is '" + v + "'; expected numpy or plain");
    d.python.numpy_structs = v == "numpy";
  }
  for (const char* key : {"struct_arrays", "counted_fields"}) {
    if (python[key] && !d.python.numpy_structs) {
      r.fail(python[key], std::string("library.python.") + key + " needs structs: numpy");
    }
  }
  if (python["struct_arrays"]) {
    d.python.struct_arrays = string_list(r, python["struct_arrays"], "library.python.struct_arrays");
  }
  if (const YAML::Node counted = python["counted_fields"]) {
    r.expect_map(counted, "library.python.counted_fields");
    for (const auto& entry : counted) {
      const std::string name = r.scalar(entry.first, "a name of library.python.counted_fields");
      if (name.find('.') == std::string::npos) {
        r.fail(entry.first, "library.python.counted_fields: '" + name + "' is not Type.field");
      }
      d.python.counted_fields[name] = r.scalar(entry.second, "library.python.counted_fields." + name);
    }
  }
  if (const YAML::Node shared = python["shared_count_lists"]) {
    r.expect_map(shared, "library.python.shared_count_lists");
    for (const auto& entry : shared) {
      const std::string type = r.scalar(entry.first, "a name of library.python.shared_count_lists");
      const std::vector<std::string> names =
          string_list(r, entry.second, "library.python.shared_count_lists." + type);
      if (names.size() < 3) {
        r.fail(entry.second, "library.python.shared_count_lists." + type +
                                 " needs the count field, then two or more pointer fields it sizes");
      }
      d.python.shared_count_lists[type] = {names.front(), {names.begin() + 1, names.end()}};
    }
  }
  if (const YAML::Node groups = python["define_enums"]) {
    if (!raising) r.fail(groups, "library.python.define_enums needs errors: raise");
    r.expect_map(groups, "library.python.define_enums");
    for (const auto& entry : groups) {
      LibraryDescriptor::Python::DefineEnum e;
      e.name = r.scalar(entry.first, "a name of library.python.define_enums");
      const std::string where = "library.python.define_enums." + e.name;
      const YAML::Node spec = entry.second;
      if (spec.IsScalar()) {
        e.prefix = r.scalar(spec, where);
      } else {
        r.expect_map(spec, where);
        r.only_keys(spec, {"prefix", "strip", "exclude", "members"}, where);
        if (!spec["prefix"]) r.fail(spec, where + " needs 'prefix'");
        e.prefix = r.scalar(spec["prefix"], where + ".prefix");
        if (spec["strip"]) e.strip = r.scalar(spec["strip"], where + ".strip");
        if (spec["exclude"]) e.exclude = string_list(r, spec["exclude"], where + ".exclude");
        if (const YAML::Node members = spec["members"]) {
          r.expect_map(members, where + ".members");
          for (const auto& m : members) {
            const std::string name = r.scalar(m.first, "a member of " + where + ".members");
            e.members.emplace_back(name, r.scalar(m.second, where + ".members." + name));
          }
        }
      }
      if (e.strip.empty()) e.strip = e.prefix;
      if (e.prefix.rfind(e.strip, 0) != 0) {
        r.fail(spec, where + ".strip is '" + e.strip + "', which does not begin the prefix '" + e.prefix + "'");
      }
      d.python.define_enums.push_back(std::move(e));
    }
  }
  if (const YAML::Node enums = python["member_names"]) {
    if (!raising) r.fail(enums, "library.python.member_names needs errors: raise");
    r.expect_map(enums, "library.python.member_names");
    for (const auto& entry : enums) {
      const std::string name = r.scalar(entry.first, "an enum of library.python.member_names");
      const std::string where = "library.python.member_names." + name;
      r.expect_map(entry.second, where);
      auto& list = d.python.member_names[name];
      for (const auto& m : entry.second) {
        const std::string member = r.scalar(m.first, "a member of " + where);
        list.emplace_back(member, r.scalar(m.second, where + "." + member));
      }
    }
  }
  if (const YAML::Node aliases = python["aliases"]) {
    r.expect_map(aliases, "library.python.aliases");
    for (const auto& entry : aliases) {
      const std::string name = r.scalar(entry.first, "a name of library.python.aliases");
      d.python.aliases[name] = r.scalar(entry.second, "library.python.aliases." + name);
    }
  }
  return d;
}

ParamAnnotation read_param(const Reader& r, const YAML::Node& key, const YAML::Node& node, const std::string& where) {
  r.expect_map(node, where);
  r.only_keys(node,
              {"direction", "count", "size", "size_from", "typed_by", "nullable", "python_name", "value", "fields",
               "field_names", "returns", "returns_count", "buffers", "queried", "bytes_of", "item_fields",
               "bytes_fields", "sizes", "arrays", "address", "default", "filled"},
              where);
  ParamAnnotation p;
  p.line = r.line(key);  // where the entry's name is, whatever its style
  if (!node["direction"]) r.fail(node, where + " needs a direction (in, out or inout)");
  p.direction = r.scalar(node["direction"], where + ".direction");
  if (!kDirections.count(p.direction)) {
    r.fail(node["direction"], where + ".direction is '" + p.direction + "'; expected in, out or inout");
  }
  if (node["count"]) p.count = r.scalar(node["count"], where + ".count");
  if (node["size"]) p.size = r.scalar(node["size"], where + ".size");
  if (node["typed_by"]) p.typed_by = r.scalar(node["typed_by"], where + ".typed_by");
  if (node["size_from"]) p.size_from = r.scalar(node["size_from"], where + ".size_from");
  if (node["value"]) p.value = r.scalar(node["value"], where + ".value");
  if (node["python_name"]) {
    p.python_name = r.scalar(node["python_name"], where + ".python_name");
    static const std::regex identifier("[a-z_][a-z0-9_]*");
    if (!std::regex_match(p.python_name, identifier)) {
      r.fail(node["python_name"], where + ".python_name is '" + p.python_name + "'; expected a snake_case identifier");
    }
  }
  if (node["nullable"]) {
    const std::string v = r.scalar(node["nullable"], where + ".nullable");
    if (v != "true" && v != "false") r.fail(node["nullable"], where + ".nullable is '" + v + "'; expected true or false");
    p.nullable = v == "true" ? 1 : -1;
  }
  if (node["fields"]) p.fields = string_list(r, node["fields"], where + ".fields");
  if (node["item_fields"]) p.item_fields = string_list(r, node["item_fields"], where + ".item_fields");
  if (node["bytes_fields"]) p.bytes_fields = string_list(r, node["bytes_fields"], where + ".bytes_fields");
  for (const auto& field : p.bytes_fields) {
    if (std::find(p.fields.begin(), p.fields.end(), field) == p.fields.end()) {
      r.fail(node["bytes_fields"], where + ".bytes_fields names '" + field + "', which fields does not list");
    }
  }
  const std::map<std::string, std::map<std::string, std::string>*> field_maps = {
      {"field_names", &p.field_names}, {"buffers", &p.buffers}, {"queried", &p.queried},
      {"sizes", &p.sizes},             {"arrays", &p.arrays}};
  for (const auto& [key, target] : field_maps) {
    if (!node[key]) continue;
    r.expect_map(node[key], where + "." + key);
    auto& out = *target;
    for (const auto& kv : node[key]) {
      const std::string field = r.scalar(kv.first, "a field of " + where + "." + key);
      out[field] = r.scalar(kv.second, where + "." + key + "." + field);
    }
  }
  for (const auto& [field, name] : p.field_names) {
    static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(name, identifier)) {
      r.fail(node["field_names"], where + ".field_names." + field + " is '" + name + "'; expected an identifier");
    }
    if (std::find(p.fields.begin(), p.fields.end(), field) == p.fields.end()) {
      r.fail(node["field_names"], where + ".field_names names '" + field + "', which fields does not list");
    }
  }
  if (node["returns"]) {
    // One field, or a list of them returned as a tuple (status, outData).
    p.returns = node["returns"].IsSequence() ? string_list(r, node["returns"], where + ".returns")
                                             : std::vector<std::string>{r.scalar(node["returns"], where + ".returns")};
  }
  if (node["returns_count"]) p.returns_count = r.scalar(node["returns_count"], where + ".returns_count");
  if (!p.returns_count.empty() && (p.returns.size() != 1 || !p.buffers.count(p.returns.front()))) {
    r.fail(node["returns_count"], where + ".returns_count is for one returned pointer field that buffers names");
  }
  for (const auto& [field, size] : p.sizes) {
    const bool given = std::find(p.bytes_fields.begin(), p.bytes_fields.end(), field) != p.bytes_fields.end();
    const bool returned = std::find(p.returns.begin(), p.returns.end(), field) != p.returns.end();
    if (!given && !returned) {
      r.fail(node["sizes"], where + ".sizes names '" + field + "', which is neither in bytes_fields nor returned");
    }
    if (std::find(p.fields.begin(), p.fields.end(), size) != p.fields.end()) {
      r.fail(node["sizes"], where + ".sizes." + field + " is '" + size + "', an argument; the length comes from the bytes");
    }
  }
  for (const auto& [field, count] : p.arrays) {
    if (std::find(p.fields.begin(), p.fields.end(), field) == p.fields.end()) {
      r.fail(node["arrays"], where + ".arrays names '" + field + "', which fields does not list");
    }
    if (std::find(p.fields.begin(), p.fields.end(), count) != p.fields.end()) {
      r.fail(node["arrays"], where + ".arrays." + field + " is '" + count + "', an argument; the count is the array's length");
    }
  }
  if (node["bytes_of"]) p.bytes_of = r.scalar(node["bytes_of"], where + ".bytes_of");
  if (node["filled"]) p.filled = r.scalar(node["filled"], where + ".filled");
  if (node["address"]) p.address = boolean(r, node["address"], where + ".address");
  if (node["default"]) {
    p.default_value = r.scalar(node["default"], where + ".default");
    static const std::regex default_re(R"(^-?\d+$|^None$|^True$|^False$)");
    if (!std::regex_match(p.default_value, default_re)) {
      r.fail(node["default"], where + ".default is '" + p.default_value + "'; expected an integer, None, True or False");
    }
  }
  if (!p.bytes_of.empty() && !p.value.empty()) r.fail(node, where + " gives both value and bytes_of");
  if ((!p.count.empty()) + (!p.size.empty()) + (!p.size_from.empty()) > 1) {
    r.fail(node, where + " gives more than one of count, size and size_from; a buffer has one length");
  }
  return p;
}

FunctionAnnotation read_function(const Reader& r, const YAML::Node& key, const YAML::Node& node,
                                 const std::string& name) {
  r.expect_map(node, "function " + name);
  r.only_keys(node, {"params", "skip", "introduced", "release_on_error", "makes_handle", "destroys_handle", "status_value"},
              "function " + name);
  FunctionAnnotation f;
  f.line = r.line(key);
  if (node["skip"]) f.skip = r.scalar(node["skip"], name + ".skip");
  if (node["introduced"]) {
    f.introduced = r.scalar(node["introduced"], name + ".introduced");
    static const std::regex version_re(R"(\d+\.\d+)");
    if (!std::regex_match(f.introduced, version_re)) {
      r.fail(node["introduced"], name + ".introduced is '" + f.introduced + "'; expected MAJOR.MINOR");
    }
  }
  if (node["release_on_error"]) f.release_on_error = r.scalar(node["release_on_error"], name + ".release_on_error");
  if (node["makes_handle"]) f.makes_handle = r.scalar(node["makes_handle"], name + ".makes_handle");
  if (node["destroys_handle"]) f.destroys_handle = r.scalar(node["destroys_handle"], name + ".destroys_handle");
  if (node["status_value"]) f.status_value = boolean(r, node["status_value"], name + ".status_value");
  if (node["params"]) {
    const YAML::Node params = node["params"];
    r.expect_map(params, name + ".params");
    for (const auto& kv : params) {
      const std::string pname = r.scalar(kv.first, "a parameter name");
      f.params[pname] = read_param(r, kv.first, kv.second, name + ".params." + pname);
    }
  }
  if (!f.skip.empty() && !f.params.empty()) r.fail(node, name + " is skipped and also annotates parameters");
  if (f.skip.empty() && f.params.empty() && f.introduced.empty() && f.release_on_error.empty() &&
      f.makes_handle.empty() && f.destroys_handle.empty() && !f.status_value) {
    r.fail(node, name + " annotates nothing (give params, skip, introduced, release_on_error, makes_handle, "
                        "destroys_handle or status_value)");
  }
  return f;
}

// The handle type a `Handle *` parameter points to.
std::string pointee_of(const Function& f, const std::string& param) {
  for (const Param& p : f.params) {
    if (p.name == param) return p.type.pointee;
  }
  return "";
}

// ---------------------------------------------------------------------------
// Rules, in order; the first that applies classifies the parameter.

bool is_count_like(const Param& p) {
  static const std::regex count_re(R"(^(num|count|n[A-Z]|len$|length$|size$).*|.*(Count|Num|Size|Len)$)");
  const bool integral = p.type.kind == Type::Kind::Builtin ||
                        (p.type.kind == Type::Kind::Pointer && p.type.pointer_depth == 1 &&
                         p.type.pointee_kind == Type::Kind::Builtin);
  return integral && std::regex_match(p.name, count_re);
}

bool names_user_data(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("user") != std::string::npos || lower == "data" || lower == "arg";
}

// Returns the rule's name and sets the direction, or "" when no rule applies.
std::string apply_rules(const Function& f, Param& p) {
  const Type& t = p.type;
  if (t.kind != Type::Kind::Pointer) {
    p.direction = "in";
    return "by_value";
  }
  if (t.pointee_const) {
    p.direction = "in";
    return t.pointee == "char" && t.pointer_depth == 1 ? "string" : "const_pointer";
  }
  const bool has_callback = std::any_of(f.params.begin(), f.params.end(), [](const Param& q) {
    return q.type.kind == Type::Kind::FunctionPointer;
  });
  if (t.pointer_depth == 1 && t.pointee == "void") {
    if (has_callback && names_user_data(p.name)) {
      p.direction = "in";
      return "callback_user_data";
    }
    // A bare address (host or device memory the call reads or writes), unless
    // the documentation says the call returns something through it.
    if (p.doc_direction.empty() || p.doc_direction == "in") {
      p.direction = "in";
      return "address";
    }
    return "";
  }
  // Non-const pointers to a value the call returns: CUcontext *, int *, size_t *.
  const bool scalar_pointee = t.pointer_depth == 1 && t.pointee != "char" &&
                              (t.pointee_kind == Type::Kind::Builtin || t.pointee_kind == Type::Kind::Enum ||
                               t.pointee_kind == Type::Kind::Handle);
  if (scalar_pointee) {
    // In a function with a count, the pointer may be an array: an annotation must say.
    const bool has_count = std::any_of(f.params.begin(), f.params.end(), [&](const Param& q) {
      return &q != &p && is_count_like(q);
    });
    if (has_count && !is_count_like(p)) return "";
    if (!p.doc_direction.empty() && p.doc_direction != "out") return "";
    p.direction = "out";
    return "scalar_out";
  }
  // Non-const struct pointers (input struct or output struct), char * buffers,
  // void ** and deeper pointers need an annotation.
  return "";
}

bool known_type(const Library& lib, std::string type) {
  static const std::set<std::string> builtins = {
      "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int", "long",
      "unsigned long", "long long", "unsigned long long", "float", "double", "size_t", "void *",
      "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t"};
  // `T as bool`: an integer the library reads and writes as a boolean.
  static const std::string as_bool = " as bool";
  if (type.size() > as_bool.size() && type.compare(type.size() - as_bool.size(), as_bool.size(), as_bool) == 0) {
    type.resize(type.size() - as_bool.size());
    return builtins.count(type) && type != "float" && type != "double" && type != "void *";
  }
  if (const auto bracket = type.find('['); bracket != std::string::npos) {
    static const std::regex extent_re(R"(\[\d*\])");  // T[4], or T[] sized by the call
    if (!std::regex_match(type.substr(bracket), extent_re)) return false;
    type = type.substr(0, bracket);
    while (!type.empty() && type.back() == ' ') type.pop_back();
  }
  return builtins.count(type) || lib.find_typedef(type) || lib.find_record(type) || lib.find_enum(type);
}

// attribute_types names real enums, members and types.
void check_attribute_types(Library& lib, const Annotations& a, std::vector<std::string>& problems) {
  for (const auto& [enum_name, members] : a.attribute_types) {
    const Enum* e = lib.find_enum(enum_name);
    if (e == nullptr) {
      for (const auto& en : lib.enums) {
        if (en.tag == enum_name) e = &en;
      }
    }
    if (e == nullptr) {
      problems.push_back(a.file + ":" + std::to_string(members.begin()->second.line) + ": attribute_types names '" +
                         enum_name + "', which is no enum of " + lib.name);
      continue;
    }
    for (const auto& [member, type] : members) {
      const bool exists = std::any_of(e->enumerators.begin(), e->enumerators.end(),
                                      [&](const Enumerator& v) { return v.name == member; });
      if (!exists) {
        problems.push_back(a.file + ":" + std::to_string(type.line) + ": " + member + " is no member of " + enum_name);
      } else if (!known_type(lib, type.type)) {
        problems.push_back(a.file + ":" + std::to_string(type.line) + ": " + enum_name + "." + member + ": unknown type '" +
                           type.type + "'");
      }
      lib.attribute_types[e->name][member] = type.type;
    }
  }
}

std::string describe(const Function& f, const Param& p) {
  return f.name + ": parameter '" + p.name + "' (" + p.type.spelling + ")";
}

}  // namespace

std::string count_parameter(const std::string& count) {
  static const std::regex minus_re(R"(^\s*(\w+)\s*-\s*\d+\s*$)");
  std::smatch m;
  return std::regex_match(count, m, minus_re) ? m[1].str() : count;
}

Annotations parse_annotations(const std::string& text, const std::string& file) {
  Reader r{file};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw AnnotationError(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                          ": " + e.msg);
  }
  if (!root.IsMap()) throw AnnotationError(file + ":1:1: the file must be a mapping with 'library' and 'functions'");
  r.only_keys(root, {"library", "functions", "attribute_types"}, "the file");
  Annotations a;
  a.file = file;
  if (!root["library"]) throw AnnotationError(file + ":1:1: missing 'library'");
  a.library = read_descriptor(r, root["library"]);
  if (!root["functions"]) throw AnnotationError(file + ":1:1: missing 'functions' (use {} for none)");
  const YAML::Node functions = root["functions"];
  r.expect_map(functions, "functions");
  for (const auto& kv : functions) {
    const std::string name = r.scalar(kv.first, "a function name");
    if (a.functions.count(name)) r.fail(kv.first, "function " + name + " is annotated twice");
    a.functions[name] = read_function(r, kv.first, kv.second, name);
  }
  if (const YAML::Node types = root["attribute_types"]) {
    r.expect_map(types, "attribute_types");
    for (const auto& e : types) {
      const std::string enum_name = r.scalar(e.first, "an enum name");
      r.expect_map(e.second, "attribute_types." + enum_name);
      for (const auto& m : e.second) {
        const std::string member = r.scalar(m.first, "an enum member");
        a.attribute_types[enum_name][member] =
            AttributeType{r.scalar(m.second, "attribute_types." + enum_name + "." + member), r.line(m.first)};
      }
    }
  }
  return a;
}

Annotations load_annotations(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw AnnotationError(path + ": cannot read the annotation file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_annotations(ss.str(), path);
}

std::vector<std::string> classify(Library& lib, const Annotations& annotations) {
  std::vector<std::string> problems;
  const auto where = [&](unsigned line) { return annotations.file + ":" + std::to_string(line) + ": "; };

  // Stale annotations: names that match nothing.
  const auto record_named = [&](const std::string& name) -> const Record* {
    if (const Record* r = lib.find_record(name)) return r;
    const Typedef* td = lib.find_typedef(name);
    return td != nullptr && !td->record.empty() ? lib.find_record(td->record) : nullptr;
  };
  for (const auto& type : annotations.library.python.struct_arrays) {
    if (record_named(type) == nullptr) {
      problems.push_back(annotations.file + ": library.python.struct_arrays: " + type + " names no struct of " + lib.name);
    }
  }
  for (const auto& [key, count] : annotations.library.python.counted_fields) {
    const std::string type = key.substr(0, key.find('.'));
    const std::string field = key.substr(key.find('.') + 1);
    const Record* r = record_named(type);
    const auto has = [&](const std::string& n) {
      return r != nullptr && std::any_of(r->fields.begin(), r->fields.end(), [&](const Field& f) { return f.name == n; });
    };
    if (!has(field) || !has(count)) {
      problems.push_back(annotations.file + ": library.python.counted_fields: " + key + " -> " + count +
                         " names no array and count fields of one struct of " + lib.name);
    }
  }
  for (const auto& [field, name] : annotations.library.python.struct_field_names) {
    const bool found = std::any_of(lib.records.begin(), lib.records.end(), [&](const Record& rec) {
      return std::any_of(rec.fields.begin(), rec.fields.end(), [&](const Field& f) { return f.name == field; });
    });
    if (!found) {
      problems.push_back(annotations.file + ": library.python.struct_field_names: " + field + " names no field of " +
                         lib.name);
    }
  }
  if (const std::string& text = annotations.library.python.status_text; !text.empty() && !lib.find_function(text)) {
    problems.push_back(annotations.file + ": library.python.status_text: " + text + " names no function of " + lib.name);
  }
  for (const auto& [type, shared] : annotations.library.python.shared_count_lists) {
    const Record* r = record_named(type);
    for (const std::string& field : shared.lists) {
      const Field* f = nullptr;
      if (r != nullptr) {
        for (const Field& x : r->fields) {
          if (x.name == field) f = &x;
        }
      }
      if (f == nullptr || f->type.kind != Type::Kind::Pointer || f->type.pointer_depth != 1) {
        problems.push_back(annotations.file + ": library.python.shared_count_lists: " + type + "." + field +
                           " names no pointer field of one struct of " + lib.name);
      }
    }
    const bool has_count = r != nullptr && std::any_of(r->fields.begin(), r->fields.end(), [&](const Field& f) {
                             return f.name == shared.count && f.type.kind == Type::Kind::Builtin;
                           });
    if (!has_count) {
      problems.push_back(annotations.file + ": library.python.shared_count_lists: " + type + "." + shared.count +
                         " names no integer field of " + lib.name);
    }
  }
  for (const auto& [name, fa] : annotations.functions) {
    const Function* f = lib.find_function(name);
    if (f == nullptr) {
      problems.push_back(where(fa.line) + name + " names no function of " + lib.name);
      continue;
    }
    for (const auto& [pname, pa] : fa.params) {
      const auto has = [&](const std::string& n) {
        return std::any_of(f->params.begin(), f->params.end(), [&](const Param& q) { return q.name == n; });
      };
      if (!has(pname)) {
        problems.push_back(where(pa.line) + name + " has no parameter '" + pname + "'");
        continue;
      }
      if (!pa.size_from.empty() && lib.find_function(pa.size_from) == nullptr) {
        problems.push_back(where(pa.line) + name + "." + pname + ".size_from names '" + pa.size_from +
                           "', which is no function of " + lib.name);
      }
      if (!pa.filled.empty() && !has(pa.filled)) {
        problems.push_back(where(pa.line) + name + "." + pname + ".filled names '" + pa.filled +
                           "', which is no parameter of " + name);
      }
      if (!pa.bytes_of.empty() && !has(pa.bytes_of)) {
        problems.push_back(where(pa.line) + name + "." + pname + ".bytes_of names '" + pa.bytes_of +
                           "', which is no parameter of " + name);
      }
      for (const auto* ref : {&pa.count, &pa.size, &pa.typed_by}) {
        // A fixed length: a number, or an integer #define of the headers (NVML_GSP_FIRMWARE_VERSION_BUF_SIZE).
        const bool fixed_length =
            ref != &pa.typed_by && !ref->empty() &&
            (std::all_of(ref->begin(), ref->end(), [](unsigned char c) { return std::isdigit(c); }) ||
             std::any_of(lib.macros.begin(), lib.macros.end(),
                         [&](const Macro& m) { return m.name == *ref && m.kind == Macro::Kind::Integer; }));
        if (!ref->empty() && !fixed_length && !has(ref == &pa.count ? count_parameter(*ref) : *ref)) {
          problems.push_back(where(pa.line) + name + "." + pname + " refers to '" + *ref +
                             "', which is no parameter of " + name);
        }
      }
    }
  }

  check_attribute_types(lib, annotations, problems);

  for (Function& f : lib.functions) {
    const auto fa = annotations.functions.find(f.name);
    if (fa != annotations.functions.end() && !fa->second.skip.empty()) {
      lib.skipped[f.name] = fa->second.skip;
      continue;
    }
    if (fa != annotations.functions.end() && !fa->second.introduced.empty()) f.introduced = fa->second.introduced;
    if (fa != annotations.functions.end()) f.status_value = fa->second.status_value;
    if (fa != annotations.functions.end() && !fa->second.release_on_error.empty()) {
      f.release_on_error = fa->second.release_on_error;
      if (lib.find_function(f.release_on_error) == nullptr) {
        problems.push_back(where(fa->second.line) + f.name + ".release_on_error names '" + f.release_on_error +
                           "', which is no function of " + lib.name);
      }
    }
    if (fa != annotations.functions.end()) {
      // makes_handle / destroys_handle name a `Handle *` parameter.
      for (auto [key, value, field] : {std::tuple{"makes_handle", fa->second.makes_handle, &f.makes_handle},
                                       std::tuple{"destroys_handle", fa->second.destroys_handle, &f.destroys_handle}}) {
        if (value.empty()) continue;
        const auto p = std::find_if(f.params.begin(), f.params.end(), [&](const Param& q) { return q.name == value; });
        if (p == f.params.end() || p->type.pointer_depth != 1 || p->type.pointee_kind != Type::Kind::Handle ||
            p->type.pointee_const) {
          problems.push_back(where(fa->second.line) + f.name + "." + key + " names '" + value +
                             "', which is no parameter of " + f.name + " of type `handle *`");
          continue;
        }
        *field = value;
      }
    }
    for (Param& p : f.params) {
      const std::string rule = apply_rules(f, p);
      p.classified_by = rule;
      if (fa != annotations.functions.end()) {
        if (auto pa = fa->second.params.find(p.name); pa != fa->second.params.end()) {
          p.direction = pa->second.direction;
          p.count_param = pa->second.count;
          p.size_param = pa->second.size;
          p.typed_by = pa->second.typed_by;
          p.size_from = pa->second.size_from;
          p.nullable = pa->second.nullable;
          p.fixed_value = pa->second.value;
          p.python_name = pa->second.python_name;
          p.struct_fields = pa->second.fields;
          p.field_names = pa->second.field_names;
          p.returns_fields = pa->second.returns;
          p.returns_count = pa->second.returns_count;
          p.field_buffers = pa->second.buffers;
          p.field_queried = pa->second.queried;
          p.bytes_of = pa->second.bytes_of;
          p.filled = pa->second.filled;
          p.item_fields = pa->second.item_fields;
          p.bytes_fields = pa->second.bytes_fields;
          p.field_sizes = pa->second.sizes;
          p.field_arrays = pa->second.arrays;
          p.as_address = pa->second.address;
          p.default_value = pa->second.default_value;
          if (p.as_address && p.type.kind != Type::Kind::Pointer) {
            problems.push_back(where(pa->second.line) + describe(f, p) + " has address: true but is no pointer");
          }
          p.classified_by = "annotation";
        }
      }
      if (p.classified_by.empty()) {
        std::string why = "classified by no rule and no annotation";
        if (!p.doc_direction.empty()) why += " (documented as [" + p.doc_direction + "])";
        problems.push_back(annotations.file + ": " + describe(f, p) + " is " + why);
      }
    }
  }
  // A recorded handle type has one function that makes it and one that destroys it.
  std::map<std::string, std::pair<int, int>> made_destroyed;
  for (const Function& f : lib.functions) {
    if (!f.makes_handle.empty()) made_destroyed[pointee_of(f, f.makes_handle)].first++;
    if (!f.destroys_handle.empty()) made_destroyed[pointee_of(f, f.destroys_handle)].second++;
  }
  for (const auto& [type, counts] : made_destroyed) {
    if (counts.first != 1 || counts.second != 1) {
      problems.push_back(annotations.file + ": handle type " + type + " has " + std::to_string(counts.first) +
                         " makes_handle and " + std::to_string(counts.second) +
                         " destroys_handle functions; a recorded handle needs one of each");
    }
  }
  return problems;
}

}  // namespace codegen

// What differs between the Python modules of the libraries: cuda.bindings'
// driver, runtime and nvrtc modules return (status, *outputs) and keep the C
// names; its nvjitlink module raises on failure and names functions and enums
// the Python way. Private to the Python emitter.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/ir.hpp"

namespace codegen::python {

class Conventions {
 public:
  explicit Conventions(const Library& lib);

  // The module's docstring names the library: "the CUDA Driver API (cuda.h)".
  const std::string& title() const { return lib_.python.title; }

  // Functions raise error_class() (nvJitLinkError) and return their outputs alone.
  bool raising() const { return raising_; }
  const std::string& error_class() const { return lib_.python.error_class; }

  // Python-visible name of a function: nvJitLinkAddData -> add_data when raising.
  std::string function_name(const std::string& c_name) const;

  // Python name of a function parameter, as cuda.bindings spells it: its
  // replacements for the builtins a parameter would shadow (type -> typename,
  // len -> length, ...), and snake_case where functions are (numOptions ->
  // num_options when raising). Every reference to a parameter goes through it.
  std::string parameter_name(const std::string& c_name) const;

  // Python-visible name of an enum: nvJitLinkInputType -> InputType when raising.
  std::string enum_name(const std::string& c_name) const;

  // Python name of an enum or struct class when raising: the prefix and a
  // trailing _t dropped (nvmlMemory_v2_t -> Memory_v2); else the C name.
  std::string type_name(const std::string& c_name) const;

  // Python name of a struct field: snake_case when raising (pciDeviceId ->
  // pci_device_id), as cuda.bindings.nvml spells them; else the C name. With
  // structs: numpy, a name of numpy.ndarray's attributes takes a trailing
  // underscore (size -> size_, min -> min_), as there.
  std::string field_name(const std::string& c_name) const;

  // The #define constants the module exports (all when python.constants is
  // not given), and the Python name of one, or of an enum member: without the
  // library's upper-case prefix when python.constants is given
  // (NVML_NVLINK_MAX_LINKS -> NVLINK_MAX_LINKS, NVML_P2P_STATUS_OK -> P2P_STATUS_OK).
  bool exports_constant(const std::string& c_name) const;
  std::string constant_name(const std::string& c_name) const;

  // structs: numpy -- the struct classes carry cuda.bindings' NumPy layer.
  bool numpy_structs() const { return lib_.python.numpy_structs; }
  // The module-level numpy.dtype of a struct class, as cuda.bindings names it:
  // snake_case where a capital follows a small letter or starts a word after
  // capitals (PciInfoExt_v1 -> pci_info_ext_v1_dtype, BAR1Memory ->
  // ba_r1memory_dtype, VgpuTypeBar1Info_v1 -> vgpu_type_bar1info_v1_dtype).
  std::string dtype_name(const std::string& py_class) const;

  // Handles are plain ints (cuda.bindings.nvml), not classes.
  bool int_handles() const { return lib_.python.int_handles; }
  // C strings the call fills come back as str.
  bool text_as_str() const { return lib_.python.text_as_str; }
  // The status code of a buffer or array too small (NVML_ERROR_INSUFFICIENT_SIZE), or -1.
  long long insufficient_size_status() const;
  // The error subclass of a failing status (NVML_ERROR_GPU_IS_LOST of
  // nvmlReturn_t -> GpuIsLostError), as cuda.bindings names them. A name that
  // would shadow a builtin exception (MemoryError) becomes NvmlMemoryError,
  // and `alias` is set to the builtin's name, which the module binds to it too.
  std::string error_subclass(const Enum& status, const Enumerator& v, std::string& alias) const;
  bool error_subclasses() const { return lib_.python.error_subclasses; }

  // The prefix common to an enum's members, cut back a word at a time until
  // no member's rest begins with a digit (NVML_NVLINK_VERSION_1_0 -> NVML_NVLINK_),
  // or "".
  std::string member_prefix(const Enum& e) const;
  // A member's first name, as cuda.bindings spells it: NVML_ and, where the
  // prefix ends with the enum's own name (NVML_CLOCK_ID_ of ClockId), the
  // prefix dropped (CURRENT); else the header name less NVML_, the short name
  // then a second name (short_prefix).
  std::string member_name(const Enum& e, const Enumerator& v) const;
  // The prefix a member is also reachable without (NVJITLINK_INPUT_), or "".
  std::string short_prefix(const Enum& e) const;
  // More names of members (python.member_names): name -> value.
  std::vector<std::pair<std::string, std::int64_t>> extra_members(const Enum& e) const;
  // A member's value as the module writes it (an unsigned constant's bits as unsigned).
  static std::string member_value(const Enum& e, std::int64_t value);

  // The enums built from groups of constants (python.define_enums). Throws
  // std::runtime_error naming a group that gathers nothing or a constant that is not there.
  static std::vector<Enum> define_enums(const Library& lib);

  // Header documentation as the stub shows it: enum names as Python spells them.
  std::string stub_text(const std::string& doc) const;

  // numOptions -> num_options, ErrorIncompatibleDlaSWVersion -> error_incompatible_dla_sw_version.
  static std::string snake_case(const std::string& name);

 private:
  std::string drop_prefix(const std::string& c_name) const;

  const Library& lib_;
  bool raising_;
};

}  // namespace codegen::python

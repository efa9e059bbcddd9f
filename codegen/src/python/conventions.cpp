#include "python/conventions.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "codegen/emit_common.hpp"

namespace codegen::python {

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

Conventions::Conventions(const Library& lib)
    : lib_(lib),
      raising_(lib.python.errors == LibraryDescriptor::Errors::Raise) {}

std::string Conventions::drop_prefix(const std::string& c_name) const {
  const std::string& prefix = lib_.python.prefix;
  return !prefix.empty() && c_name.rfind(prefix, 0) == 0 ? c_name.substr(prefix.size()) : c_name;
}

std::string Conventions::snake_case(const std::string& base) {
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

std::string Conventions::function_name(const std::string& c_name) const {
  if (!raising_) return c_name;
  if (auto it = lib_.python.names.find(c_name); it != lib_.python.names.end()) return it->second;
  // nvJitLinkAddData -> add_data, as cuda.bindings.nvjitlink spells it.
  return snake_case(drop_prefix(c_name));
}

std::string Conventions::type_name(const std::string& c_name) const {
  if (!raising_) return c_name;
  // nvmlMemory_v2_t -> Memory_v2, as cuda.bindings.nvml spells its classes; the prefix in
  // any case (cufile.h's CUfileDescr_t, CUFileSizeTConfigParameter_t, cufileRDMAInfo_t).
  std::string name = drop_prefix(c_name);
  const std::string& prefix = lib_.python.prefix;
  if (name == c_name && !prefix.empty() && c_name.size() > prefix.size()) {
    bool same = true;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
      same = same && std::tolower(static_cast<unsigned char>(c_name[i])) == std::tolower(static_cast<unsigned char>(prefix[i]));
    }
    if (same) name = c_name.substr(prefix.size());
  }
  if (name.size() > 2 && name.compare(name.size() - 2, 2, "_t") == 0) name.resize(name.size() - 2);
  return name;
}

std::string Conventions::field_name(const std::string& c_name) const {
  if (!raising_) return python_identifier(c_name);
  // nvmlPciInfo_t.device is device_ in cuda.bindings.nvml, whose struct
  // classes stand beside numpy arrays: every name of numpy.ndarray's
  // attributes (numpy 2) takes the underscore there.
  static const std::set<std::string> ndarray_attributes = {
      "T", "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "base", "byteswap", "choose",
      "clip", "compress", "conj", "conjugate", "copy", "ctypes", "cumprod", "cumsum", "data", "device",
      "diagonal", "dot", "dtype", "dump", "dumps", "fill", "flags", "flat", "flatten", "getfield", "imag", "item",
      "itemsize", "mT", "max", "mean", "min", "nbytes", "ndim", "nonzero", "partition", "prod", "put", "ravel",
      "real", "repeat", "reshape", "resize", "round", "searchsorted", "setfield", "setflags", "shape", "size",
      "sort", "squeeze", "std", "strides", "sum", "swapaxes", "take", "to_device", "tobytes", "tofile", "tolist",
      "trace", "transpose", "var", "view"};
  const std::string name = snake_case(c_name);
  if (name == "device" || (numpy_structs() && ndarray_attributes.count(name))) return name + "_";
  return python_identifier(name);
}

std::string Conventions::dtype_name(const std::string& py_class) const {
  const auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  const auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < py_class.size(); ++i) {
    const char c = py_class[i];
    if (upper(c) && i > 0) {
      const char prev = py_class[i - 1];
      const bool next_small = i + 1 < py_class.size() && !upper(py_class[i + 1]) && py_class[i + 1] != '_';
      if (lower(prev) || (upper(prev) && next_small)) out += '_';
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out + "_dtype";
}

long long Conventions::insufficient_size_status() const {
  static const std::string suffix = "ERROR_INSUFFICIENT_SIZE";
  for (const auto& e : lib_.enums) {
    for (const auto& v : e.enumerators) {
      if (v.name.size() >= suffix.size() && v.name.compare(v.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return v.value;
      }
    }
  }
  return -1;
}

std::string Conventions::error_subclass(const Enum& status, const Enumerator& v, std::string& alias) const {
  std::string member = v.name.substr(member_prefix(status).size());
  if (member.rfind("ERROR_", 0) == 0) member = member.substr(6);
  std::string camel;
  bool upper = true;
  for (char c : member) {
    if (c == '_') {
      upper = true;
      continue;
    }
    camel += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                   : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    upper = false;
  }
  const std::string name = camel + "Error";
  alias.clear();
  if (name == "MemoryError" || name == "TimeoutError") {
    alias = name;
    const std::string& base = error_class();
    return base.substr(0, base.size() - 5) + name;
  }
  return name;
}

bool Conventions::exports_constant(const std::string& c_name) const {
  const auto& list = lib_.python.constants;
  return list.empty() || std::find(list.begin(), list.end(), c_name) != list.end();
}

std::string Conventions::constant_name(const std::string& c_name) const {
  if (!raising_ || lib_.python.constants.empty()) return c_name;
  std::string upper = lib_.python.prefix;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  upper += "_";
  return c_name.rfind(upper, 0) == 0 ? c_name.substr(upper.size()) : c_name;
}

std::string Conventions::parameter_name(const std::string& c_name) const {
  // cuda.bindings' names for parameters that would shadow a builtin. A
  // parameter named `type` would also hide type() from the function's own
  // body. `object` stays: Cython takes it as a parameter's name, and
  // cuda.bindings keeps it.
  static const std::map<std::string, std::string> renamed = {
      {"type", "typename"}, {"len", "length"},    {"format", "pformat"},
      {"bytes", "numbytes"}, {"input", "input_"}, {"object", "object"},
  };
  const std::string name = raising_ ? snake_case(c_name) : c_name;
  // cuda.bindings.nvml keeps `type` (device_get_clock_info(device, type)).
  if (raising_ && name == "type") return name;
  const auto it = renamed.find(name);
  return it != renamed.end() ? it->second : python_identifier(name);
}

std::string Conventions::enum_name(const std::string& c_name) const {
  if (!raising_) return c_name;
  return type_name(c_name);  // nvJitLinkInputType -> InputType
}

// nvJitLinkInputType's members share NVJITLINK_INPUT_; cuda.bindings drops it.
std::string Conventions::member_prefix(const Enum& e) const {
  if (!raising_ || e.enumerators.size() < 2) return "";
  std::string prefix = e.enumerators.front().name;
  for (const auto& v : e.enumerators) {
    std::size_t i = 0;
    while (i < prefix.size() && i < v.name.size() && prefix[i] == v.name[i]) ++i;
    prefix.resize(i);
  }
  const auto underscore = prefix.rfind('_');
  return underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
}

std::string Conventions::stub_text(const std::string& doc) const {
  if (!raising_) return doc;
  // Word by word: a renamed enum's C name becomes its Python name.
  std::string out;
  std::size_t i = 0;
  while (i < doc.size()) {
    if (!is_word_char(doc[i])) {
      out += doc[i++];
      continue;
    }
    std::size_t end = i;
    while (end < doc.size() && is_word_char(doc[end])) ++end;
    const std::string word = doc.substr(i, end - i);
    out += lib_.find_enum(word) != nullptr ? enum_name(word) : word;
    i = end;
  }
  return out;
}

}  // namespace codegen::python

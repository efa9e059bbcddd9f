#include "python/conventions.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>

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
  if (auto it = lib_.python.struct_field_names.find(c_name); it != lib_.python.struct_field_names.end()) {
    return it->second;
  }
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
  if (!raising_ || e.python_named || e.enumerators.size() < 2) return "";
  std::string prefix = e.enumerators.front().name;
  for (const auto& v : e.enumerators) {
    std::size_t i = 0;
    while (i < prefix.size() && i < v.name.size() && prefix[i] == v.name[i]) ++i;
    prefix.resize(i);
  }
  auto underscore = prefix.rfind('_');
  prefix = underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
  // NVML_PSTATE_0 keeps its prefix: a name cannot begin with a digit.
  const auto rest_is_name = [&](const Enumerator& v) {
    return v.name.size() > prefix.size() && !std::isdigit(static_cast<unsigned char>(v.name[prefix.size()]));
  };
  while (!prefix.empty() && !std::all_of(e.enumerators.begin(), e.enumerators.end(), rest_is_name)) {
    underscore = prefix.rfind('_', prefix.size() - 2);
    prefix = underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
  }
  return prefix;
}

namespace {

// ClockId -> CLOCK_ID_, as the prefix of the members named after their enum.
std::string upper_snake_prefix(const std::string& snake) {
  std::string out;
  for (char c : snake) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out + "_";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string Conventions::member_name(const Enum& e, const Enumerator& v) const {
  if (e.python_named) return v.name;
  const std::string prefix = member_prefix(e);
  // Members named after their enum (NVML_CLOCK_ID_CURRENT of ClockId) go by the short name alone.
  if (!prefix.empty() && ends_with(prefix, upper_snake_prefix(snake_case(enum_name(e.name))))) {
    return v.name.substr(prefix.size());
  }
  return constant_name(v.name);
}

std::string Conventions::short_prefix(const Enum& e) const {
  const std::string prefix = member_prefix(e);
  if (prefix.empty() || e.enumerators.empty() || member_name(e, e.enumerators.front()) != constant_name(e.enumerators.front().name)) {
    return "";
  }
  return constant_name(prefix);
}

std::vector<std::pair<std::string, std::int64_t>> Conventions::extra_members(const Enum& e) const {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const auto it = lib_.python.member_names.find(e.name);
  if (it == lib_.python.member_names.end()) return out;
  for (const auto& [name, constant] : it->second) {
    const auto v = std::find_if(e.enumerators.begin(), e.enumerators.end(),
                                [&](const Enumerator& x) { return x.name == constant; });
    if (v == e.enumerators.end()) {
      throw std::runtime_error(lib_.name + ": python.member_names." + e.name + "." + name + " names " + constant +
                               ", which is no member of " + e.name);
    }
    out.emplace_back(name, v->value);
  }
  return out;
}

std::string Conventions::member_value(const Enum& e, std::int64_t value) {
  return e.unsigned_values && value < 0 ? std::to_string(static_cast<std::uint64_t>(value)) : std::to_string(value);
}

namespace {

// SingleBitEccError -> SINGLE_BIT_ECC_ERROR, PState -> PSTATE; an upper-case rest stays.
std::string constant_member(const std::string& rest) {
  const bool camel = std::any_of(rest.begin(), rest.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
  std::string out;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(rest[i]);
    if (camel && i > 0 && std::isupper(c) && std::islower(static_cast<unsigned char>(rest[i - 1]))) out += '_';
    out += static_cast<char>(std::toupper(c));
  }
  return out;
}

bool deprecated(const std::string& doc) {
  const auto start = doc.find_first_not_of(" \t\n");
  return start != std::string::npos && doc.compare(start, 11, "@deprecated") == 0;
}

}  // namespace

std::vector<Enum> Conventions::define_enums(const Library& lib) {
  struct Constant {
    std::string name;
    std::int64_t value;
    bool is_unsigned;
    std::string doc;
  };
  std::vector<Constant> constants;
  for (const auto& m : lib.macros) {
    if (m.kind != Macro::Kind::Integer || deprecated(m.doc)) continue;
    constants.push_back({m.name, m.int_value, m.c_type.find("unsigned") != std::string::npos, m.doc});
  }
  for (const auto& e : lib.enums) {
    for (const auto& v : e.enumerators) constants.push_back({v.name, v.value, false, v.doc});
  }
  std::vector<Enum> out;
  for (const auto& group : lib.python.define_enums) {
    Enum e;
    e.name = group.name;
    e.python_named = true;
    e.doc = "The constants " + group.prefix + "* of " + (lib.headers.empty() ? lib.name : lib.headers.front()) + ".";
    const auto add = [&](const std::string& name, const Constant& c) {
      e.enumerators.push_back({name, c.value, c.doc});
      e.unsigned_values = e.unsigned_values || c.is_unsigned;
    };
    const auto renamed = [&](const std::string& constant) {
      return std::any_of(group.members.begin(), group.members.end(), [&](const auto& m) { return m.second == constant; });
    };
    for (const auto& c : constants) {
      if (c.name.rfind(group.prefix, 0) != 0 || c.name.size() == group.prefix.size()) continue;
      if (std::find(group.exclude.begin(), group.exclude.end(), c.name) != group.exclude.end() || renamed(c.name)) continue;
      add(constant_member(c.name.substr(group.strip.size())), c);
    }
    for (const auto& [member, constant] : group.members) {
      const auto c = std::find_if(constants.begin(), constants.end(), [&](const Constant& x) { return x.name == constant; });
      if (c == constants.end()) {
        throw std::runtime_error(lib.name + ": python.define_enums." + group.name + ".members." + member + " names " +
                                 constant + ", which is no integer constant of the headers");
      }
      add(member, *c);
    }
    if (e.enumerators.empty()) {
      throw std::runtime_error(lib.name + ": python.define_enums." + group.name + " gathers no constant (prefix " +
                               group.prefix + ")");
    }
    out.push_back(std::move(e));
  }
  return out;
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

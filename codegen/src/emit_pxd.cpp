// cy<library>.pxd: the raw layer for `cimport`. Types come from the CUDA
// header itself; functions from cubind/raw/<library>.hpp, so a Cython module
// that calls them links libcubind_raw.so, never the CUDA library. Modules that
// cimport it compile as C++ (the functions live in namespace cubind::raw and
// turn a library that cannot be loaded into RuntimeError through `except +`).
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "codegen/emit_common.hpp"
#include "codegen/emitters.hpp"

namespace codegen {
namespace {

// A C spelling as Cython writes it: no struct/union/enum keywords, _Bool as bint.
std::string cy(const std::string& spelling) {
  static const std::regex keyword_re(R"(\b(struct|union|enum)\s+)");
  static const std::regex bool_re(R"(\b_Bool\b)");
  std::string s = std::regex_replace(spelling, keyword_re, "");
  s = std::regex_replace(s, bool_re, "bint");
  return s;
}

std::string cy_declarator(const Type& type, const std::string& name) { return declarator(cy(type.spelling), name); }

std::string member_name(const std::string& name) {
  const std::string safe = cython_member(name);
  return safe == name ? name : safe + " \"" + name + "\"";
}


std::string cy_params(const std::vector<Param>& params) {
  std::string s;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) s += ", ";
    s += cy_declarator(params[i].type, cython_member(params[i].name));
  }
  return s;
}

class PxdWriter {
 public:
  explicit PxdWriter(const Library& lib) : lib_(lib) {}

  std::string run(const EmitOptions& options) {
    o_ << stamp(lib_, options, "#");
    o_ << "#\n# The raw " << lib_.name << " layer: every type and function of ";
    for (std::size_t i = 0; i < lib_.headers.size(); ++i) o_ << (i ? ", " : "") << lib_.headers[i];
    o_ << ".\n#   from cubind.bindings cimport cy" << lib_.name << "\n"
       << "# Modules that cimport it are compiled as C++ and linked with libcubind_raw.so, the raw\n"
       << "# layer whose loader resolves these functions.\n\n";
    o_ << "from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, "
          "intptr_t, uintptr_t\n";
    const std::string head = o_.str();
    o_.str("");
    types();
    functions();
    // POSIX and C++ types a header uses (cufile.h: off_t, struct timespec, bool), from Cython's own declarations.
    const std::string body = o_.str();
    const auto uses = [&](const std::string& word) {
      return std::regex_search(body, std::regex("(^|[^\\w])" + word + "([^\\w]|$)"));
    };
    std::string extra;
    if (uses("off_t")) extra += "from posix.types cimport off_t\n";
    if (uses("timespec")) extra += "from posix.time cimport timespec\n";
    if (uses("bool")) extra += "from libcpp cimport bool\n";
    if (uses("loff_t")) extra += "cdef extern from \"<sys/types.h>\" nogil:\n    ctypedef long long loff_t\n";
    return head + extra + "\n" + body;
  }

 private:
  void types() {
    // The raw header includes every header of the library (cuda_runtime_api.h, library_types.h, ...).
    o_ << "cdef extern from \"cubind/raw/" << lib_.name << ".hpp\" nogil:\n\n";
    // Forward declarations first, so any order of use below is fine.
    bool any = false;
    for (const Record& r : lib_.records) {
      if (r.tag.empty() || r.synthesized_name || r.tag != r.name) continue;
      if (forward_.insert(r.tag).second) {
        o_ << "    cdef " << (r.is_union ? "union " : "struct ") << r.tag << cname(r) << "\n";
        any = true;
      }
    }
    for (const Record& r : lib_.records) {
      if (r.tag.empty() || r.tag == r.name) continue;
      if (forward_.insert(r.tag).second) {
        o_ << "    cdef " << (r.is_union ? "union " : "struct ") << r.tag << "\n";
        any = true;
      }
    }
    if (any) o_ << "\n";

    struct Item {
      unsigned order;
      int kind;  // 0 enum, 1 record, 2 typedef
      std::size_t index;
    };
    std::vector<Item> items;
    for (std::size_t i = 0; i < lib_.enums.size(); ++i) items.push_back({lib_.enums[i].order, 0, i});
    for (std::size_t i = 0; i < lib_.records.size(); ++i) items.push_back({lib_.records[i].order, 1, i});
    for (std::size_t i = 0; i < lib_.typedefs.size(); ++i) items.push_back({lib_.typedefs[i].order, 2, i});
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.order < b.order; });
    for (const Item& item : items) {
      switch (item.kind) {
        case 0: enum_decl(lib_.enums[item.index]); break;
        case 1: record_decl(lib_.records[item.index]); break;
        case 2: typedef_decl(lib_.typedefs[item.index]); break;
      }
    }
    macros();
    if (!lib_.type_aliases.empty()) {
      o_ << "    # Other names for types (#define)\n";
      for (const auto& [alias, target] : lib_.type_aliases) o_ << "    ctypedef " << target << " " << alias << "\n";
      o_ << "\n";
    }
  }

  void enum_decl(const Enum& e) {
    const bool tagged = !e.tag.empty();
    if (tagged) {
      o_ << "    cdef enum " << e.tag << ":\n";
    } else {
      o_ << "    ctypedef enum " << e.name << ":\n";
    }
    if (e.enumerators.empty()) o_ << "        pass\n";
    for (const auto& v : e.enumerators) o_ << "        " << v.name << " = " << v.value << "\n";
    if (tagged && e.name != e.tag) o_ << "    ctypedef " << e.tag << " " << e.name << "\n";
    o_ << "\n";
  }

  void fields_of(const Record& r, const std::string& prefix, bool& wrote) {
    for (const Field& f : r.fields) {
      if (f.anonymous_member) {
        // C11 anonymous struct or union: its members are reached directly.
        if (const Record* inner = lib_.find_record(f.type.record)) fields_of(*inner, prefix, wrote);
        continue;
      }
      std::string type = cy(f.type.spelling);
      if (f.type.kind == Type::Kind::Record && !f.type.record.empty()) type = f.type.record;
      if (f.type.kind == Type::Kind::Array) {
        std::string decl = (f.type.record.empty() ? cy(f.type.element) : f.type.record) + " " + member_name(f.name);
        for (auto n : f.type.extents) decl += "[" + std::to_string(n) + "]";
        o_ << prefix << decl << "\n";
      } else {
        o_ << prefix << declarator(type, member_name(f.name)) << "\n";
      }
      wrote = true;
    }
  }

  // Nested named structs are members of their parent in C++.
  static std::string cname(const Record& r) {
    return r.cpp_name.empty() || r.cpp_name == r.name ? "" : " \"" + r.cpp_name + "\"";
  }

  void record_decl(const Record& r) {
    if (!r.is_complete) return;  // forward-declared above; only used through handles
    const char* kind = r.is_union ? "union" : "struct";
    if (r.synthesized_name) {
      // Unnamed in C: C++ names it decltype(Parent::member). A C11 anonymous
      // member has no name at all; its fields are declared in the parent.
      if (r.cpp_name.empty()) return;
      o_ << "    ctypedef " << kind << " " << r.name << " \"" << r.cpp_name << "\":\n";
    } else if (r.tag.empty() || r.tag != r.name) {
      if (!r.tag.empty()) {
        // typedef struct tag {...} name;
        o_ << "    cdef " << kind << " " << r.tag << ":\n";
      } else {
        o_ << "    ctypedef " << kind << " " << r.name << ":\n";
      }
    } else {
      o_ << "    cdef " << kind << " " << r.tag << cname(r) << ":\n";
    }
    bool wrote = false;
    fields_of(r, "        ", wrote);
    if (!wrote) o_ << "        pass\n";
    if (!r.tag.empty() && r.tag != r.name && !r.synthesized_name) o_ << "    ctypedef " << r.tag << " " << r.name << "\n";
    o_ << "\n";
  }

  void typedef_decl(const Typedef& t) {
    switch (t.kind) {
      case Typedef::Kind::Handle:
        // Another library's handle (cufile.h's CUstream): its struct declared here.
        if (lib_.find_record(t.record) == nullptr && forward_.insert(t.record).second) {
          o_ << "    cdef struct " << t.record << "\n";
        }
        o_ << "    ctypedef " << t.record << "* " << t.name << "\n";
        break;
      case Typedef::Kind::FunctionPointer:
        o_ << "    ctypedef " << cy(t.fn_result.spelling) << " (*" << t.name << ")(" << cy_params(t.fn_params) << ")\n";
        break;
      case Typedef::Kind::RecordAlias:
        if (lib_.find_record(t.record) != nullptr && lib_.find_record(t.record)->name == t.name) return;
        // A struct of another header (cufile.h's sockaddr_t, struct sockaddr): declared, not defined.
        if (!t.record.empty() && lib_.find_record(t.record) == nullptr && forward_.insert(t.record).second) {
          o_ << "    cdef struct " << t.record << "\n";
        }
        o_ << "    ctypedef " << (t.record.empty() ? cy(t.target.spelling) : t.record) << " " << t.name << "\n";
        break;
      case Typedef::Kind::EnumAlias:
      case Typedef::Kind::Alias:
        if (lib_.find_enum(t.name) != nullptr) return;  // the enum carries this name already
        if (t.kind == Typedef::Kind::EnumAlias && t.foreign) {
          // Another library's enum (cufile.h's CUresult): an int here.
          o_ << "    ctypedef int " << t.name << "\n";
          break;
        }
        o_ << "    ctypedef " << cy_declarator(t.target, t.name) << "\n";
        break;
    }
  }

  void macros() {
    if (lib_.macros.empty()) return;
    o_ << "\n    # Constants (#define)\n";
    for (const Macro& m : lib_.macros) {
      switch (m.kind) {
        case Macro::Kind::Integer:
        case Macro::Kind::Float:
          o_ << "    const " << cy(m.c_type) << " " << m.name << "\n";
          break;
        case Macro::Kind::Pointer:
          o_ << "    " << declarator(cy(m.c_type), m.name) << "\n";
          break;
        case Macro::Kind::String:
          o_ << "    const char* " << m.name << "\n";
          break;
      }
    }
    o_ << "\n";
  }

  void functions() {
    o_ << "cdef extern from \"cubind/raw/" << lib_.name << ".hpp\" namespace \"cubind::raw\" nogil:\n\n";
    o_ << "    # Loads " << lib_.soname << " now; raises RuntimeError naming every place tried.\n";
    o_ << "    void " << lib_.name << "_load() except +\n\n";
    for (const LiveHandle& h : live_handles(lib_)) {
      o_ << "    # Whether the handle is one " << h.made_by->name << " made and " << h.destroyed_by->name
         << " has not destroyed.\n";
      o_ << "    bint " << h.type << "_is_live(" << h.type << " handle) noexcept\n\n";
    }
    for (const Function& f : lib_.functions) {
      if (lib_.skipped.count(f.name)) continue;
      std::vector<std::string> names = {f.name};
      names.insert(names.end(), f.aliases.begin(), f.aliases.end());
      for (const auto& name : names) {
        // Helpers defined in the header (make_cudaExtent) cannot fail.
        o_ << "    " << cy(f.result.spelling) << " " << name << "(" << cy_params(f.params) << ")"
           << (f.header_inline ? "" : " except +") << "\n";
      }
    }
  }

  const Library& lib_;
  std::ostringstream o_;
  std::set<std::string> forward_;
};

}  // namespace

GeneratedFile emit_pxd(const Library& lib, const EmitOptions& options) {
  return {"python/cubind/bindings/cy" + lib.name + ".pxd", PxdWriter(lib).run(options)};
}

std::string coverage_table(const std::vector<Library>& libraries) {
  std::ostringstream o;
  o << "| library | headers | declared | bound | skipped | deprecated | aliases |\n";
  o << "|---|---|---:|---:|---:|---:|---:|\n";
  std::ostringstream skips;
  for (const Library& lib : libraries) {
    std::size_t deprecated = 0, aliases = 0;
    for (const auto& f : lib.functions) {
      if (f.deprecated) ++deprecated;
      aliases += f.aliases.size();
    }
    const std::size_t declared = lib.functions.size();
    std::string headers;
    for (const auto& h : lib.headers) headers += (headers.empty() ? "" : ", ") + h;
    o << "| " << lib.name << " | " << headers << " | " << declared << " | "
      << declared - lib.skipped.size() << " | " << lib.skipped.size() << " | " << deprecated << " | " << aliases
      << " |\n";
    for (const auto& [name, reason] : lib.skipped) skips << "- " << lib.name << ": " << name << ": " << reason << "\n";
  }
  if (skips.str().empty()) {
    o << "\nNo function is skipped.\n";
  } else {
    o << "\nSkipped:\n" << skips.str();
  }
  return o.str();
}

}  // namespace codegen

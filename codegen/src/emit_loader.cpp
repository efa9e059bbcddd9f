// The loader: for each library a header declaring every function in
// namespace cubind::raw with the C name and signature, and a source holding
// the table of entry points, filled once by the first call.
//
// The wrappers are declared with the public names (cuCtxCreate). Where the
// CUDA header renames a function (#define cuCtxCreate cuCtxCreate_v4) the
// preprocessor renames the wrapper the same way in every translation unit
// that includes the header, so calls, declarations and the definition agree.
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "codegen/emit_common.hpp"
#include "codegen/emitters.hpp"

namespace codegen {
namespace {

struct LoadRule {
  const char* display_name;
  const char* env_override;  // nullptr: none
  std::vector<std::string> wheel_subdirs;
  bool system_loader_only;
};

const LoadRule& load_rule(const std::string& library) {
  static const std::map<std::string, LoadRule> rules = {
      {"driver", {"the CUDA driver", nullptr, {}, true}},
      {"runtime", {"the CUDA runtime", "CUBIND_CUDART_LIBRARY", {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}, false}},
      {"nvrtc", {"NVRTC", "CUBIND_NVRTC_LIBRARY", {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}, false}},
      {"nvjitlink", {"nvJitLink", "CUBIND_NVJITLINK_LIBRARY", {"nvidia/cu13/lib", "nvidia/nvjitlink/lib"}, false}},
  };
  auto it = rules.find(library);
  if (it == rules.end()) throw std::runtime_error("no loading rule for library '" + library + "'");
  return it->second;
}

std::string params_decl(const std::vector<Param>& params) {
  if (params.empty()) return "void";
  std::string s;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) s += ", ";
    s += declarator(params[i].type.spelling, params[i].name);
  }
  return s;
}

std::string args(const std::vector<Param>& params) {
  std::string s;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) s += ", ";
    s += params[i].name;
  }
  return s;
}

std::string introduced_in(const Function& f) {
  if (!f.introduced.empty()) return f.introduced;
  if (f.abi_version != 0) return cuda_version_string(f.abi_version);
  static const std::regex suffix_re(R"(.*_(\d+)_(\d+)$)");
  std::smatch m;
  if (std::regex_match(f.versioned_symbol, m, suffix_re)) return std::string(m[1]) + "." + std::string(m[2]);
  return "";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The enum most functions return (CUresult, nvJitLinkResult), or nullptr.
const Enum* status_enum(const Library& lib) {
  for (const auto& f : lib.functions) {
    if (const Enum* e = lib.find_enum(f.result.spelling)) return e;
  }
  return nullptr;
}

std::vector<const Function*> bound_functions(const Library& lib) {
  std::vector<const Function*> out;
  for (const auto& f : lib.functions) {
    if (!lib.skipped.count(f.name) && !f.header_inline) out.push_back(&f);
  }
  return out;
}

}  // namespace

GeneratedFile emit_loader_header(const Library& lib, const EmitOptions& options) {
  std::ostringstream o;
  o << stamp(lib, options, "//");
  o << "//\n// Every function of " << lib.headers.front()
    << ", in namespace cubind::raw, with its C name and signature.\n"
       "// Each call goes through a table filled on first use from "
    << lib.soname
    << ";\n// a library that cannot be loaded, or lacks the entry point, raises\n"
       "// cubind::LoaderError (RuntimeError in Python).\n";
  o << "#pragma once\n\n";
  // driver_functions.h is reached through cuda_runtime.h, the public header
  // that includes it: included alone, it warns that it is internal.
  std::set<std::string> included;
  for (const auto& h : lib.headers) {
    const std::string public_header = h == "driver_functions.h" ? "cuda_runtime.h" : h;
    if (included.insert(public_header).second) o << "#include <" << public_header << ">\n";
  }
  o << "\n#include \"cubind/detail/loader_support.hpp\"\n\n";
  if (lib.name == "driver" || lib.name == "runtime") {
    o << "#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)\n"
         "#error \"cubind selects the per-thread default stream at run time (CUBIND_PER_THREAD_DEFAULT_STREAM=1); "
         "do not define CUDA_API_PER_THREAD_DEFAULT_STREAM\"\n"
         "#endif\n\n";
  }
  o << "#ifndef CUBIND_DEPRECATED\n"
       "#if defined(CUBIND_NO_DEPRECATION_WARNINGS)\n"
       "#define CUBIND_DEPRECATED(message)\n"
       "#else\n"
       "#define CUBIND_DEPRECATED(message) [[deprecated(message)]]\n"
       "#endif\n"
       "#endif\n\n";
  o << "namespace cubind::raw {\n\n";
  o << "// Opens " << lib.soname << " and resolves every entry point now, rather than at\n"
    << "// the first call. Throws cubind::LoaderError.\n";
  o << "void " << lib.name << "_load();\n\n";
  o << "// Whether " << lib.soname << " is loaded, from where, or why it could not be. Loads nothing.\n";
  o << "cubind::detail::LibraryStatus " << lib.name << "_status() noexcept;\n\n";
  if (const Enum* st = status_enum(lib)) {
    o << "// The enumerator's name of a " << st->name << " (\"" << st->enumerators.back().name
      << "\"), or nullptr for a value\n// these headers do not know. Loads nothing.\n";
    o << "const char* " << lib.name << "_status_name(" << st->name << " status) noexcept;\n\n";
  }
  for (const Function* f : bound_functions(lib)) {
    const std::string brief = first_sentence(f->doc);
    o << "// " << f->name;
    if (!brief.empty()) o << ": " << brief;
    o << " (" << f->location.file << ":" << f->location.line << ")\n";
    if (f->deprecated) o << "CUBIND_DEPRECATED(" << quoted(f->deprecated->empty() ? f->name + " is deprecated" : *f->deprecated) << ")\n";
    o << f->result.spelling << " " << f->name << "(" << params_decl(f->params) << ");\n";
  }
  bool helpers = false;
  for (const auto& f : lib.functions) {
    if (!f.header_inline || lib.skipped.count(f.name)) continue;
    if (!helpers) o << "\n// Helpers the headers define inline: no library call.\n";
    helpers = true;
    o << "using ::" << f.name << ";  // " << f.location.file << ":" << f.location.line << "\n";
  }
  o << "\n}  // namespace cubind::raw\n";
  return {"include/cubind/raw/" + lib.name + ".hpp", o.str()};
}

GeneratedFile emit_loader_source(const Library& lib, const EmitOptions& options) {
  const LoadRule& rule = load_rule(lib.name);
  const auto functions = bound_functions(lib);
  const bool driver = lib.name == "driver";
  std::ostringstream o;
  o << stamp(lib, options, "//");
  o << "#define CUBIND_NO_DEPRECATION_WARNINGS\n";
  o << "#include \"cubind/raw/" << lib.name << ".hpp\"\n\n";
  o << "namespace cubind::raw {\nnamespace {\n\n";
  o << "using cubind::detail::EntryPoint;\n\n";
  o << "// {public name, symbol, introduced in, ABI version, has per-thread variants}\n";
  o << "constexpr EntryPoint kEntries[] = {\n";
  for (const Function* f : functions) {
    o << "    {" << quoted(f->name) << ", ";
    if (driver) {
      // cuGetProcAddress wants the public name and the ABI version.
      o << quoted(f->proc_name.empty() ? f->name : f->proc_name) << ", " << quoted(introduced_in(*f)) << ", "
        << f->abi_version << ", false";
    } else {
      o << quoted(f->abi_symbol) << ", " << quoted(introduced_in(*f)) << ", 0, "
        << (f->per_thread != PerThread::None ? "true" : "false");
    }
    o << "},\n";
  }
  o << "};\n";
  o << "constexpr int kEntryCount = sizeof(kEntries) / sizeof(kEntries[0]);\n\n";
  o << "enum EntryIndex : int {\n";
  for (std::size_t i = 0; i < functions.size(); ++i) o << "  k_" << functions[i]->name << " = " << i << ",\n";
  o << "};\n\n";
  const char* resolution = driver ? "ProcAddress" : lib.name == "runtime" ? "SymbolPerThreadVariants" : "Symbol";
  o << "constexpr const char* kWheelDirs[] = {";
  for (std::size_t i = 0; i < rule.wheel_subdirs.size(); ++i) o << (i ? ", " : "") << quoted(rule.wheel_subdirs[i]);
  if (rule.wheel_subdirs.empty()) o << "nullptr";
  o << "};\n";
  o << "void* g_slots[kEntryCount];\n";
  o << "// Constant-initialised: nothing runs before main, and it outlives every other object.\n";
  o << "cubind::detail::LibraryTable g_table({" << quoted(rule.display_name) << ", " << quoted(lib.soname) << ", "
    << (rule.env_override ? quoted(rule.env_override) : "nullptr") << ", kWheelDirs, "
    << rule.wheel_subdirs.size() << ", " << (rule.system_loader_only ? "true" : "false") << "},\n"
    << "                                       cubind::detail::Resolution::" << resolution
    << ", kEntries, kEntryCount, g_slots, " << lib.cuda_version << ");\n\n";
  o << "}  // namespace\n\n";
  o << "void " << lib.name << "_load() { g_table.ensure_loaded(); }\n\n";
  o << "cubind::detail::LibraryStatus " << lib.name << "_status() noexcept { return g_table.status(); }\n\n";
  if (const Enum* st = status_enum(lib)) {
    // A table rather than a switch: enumerators may share a value.
    o << "const char* " << lib.name << "_status_name(" << st->name << " status) noexcept {\n";
    o << "  static constexpr struct {\n    long long value;\n    const char* name;\n  } kNames[] = {\n";
    for (const auto& e : st->enumerators) o << "      {" << e.value << ", " << quoted(e.name) << "},\n";
    o << "  };\n";
    o << "  for (const auto& entry : kNames) {\n"
         "    if (entry.value == static_cast<long long>(status)) return entry.name;\n"
         "  }\n"
         "  return nullptr;\n}\n\n";
  }
  for (const Function* f : functions) {
    o << f->result.spelling << " " << f->name << "(" << params_decl(f->params) << ") {\n";
    o << "  using Fn = " << function_type(f->result, f->params) << ";\n";
    o << "  return reinterpret_cast<Fn>(g_table.entry(k_" << f->name << "))(" << args(f->params) << ");\n";
    o << "}\n\n";
  }
  o << "}  // namespace cubind::raw\n";
  return {"src/" + lib.name + ".cpp", o.str()};
}

}  // namespace codegen

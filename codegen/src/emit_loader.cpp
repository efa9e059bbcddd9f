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

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
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

std::vector<const Function*> bound_functions(const Library& lib) {
  std::vector<const Function*> out;
  for (const auto& f : lib.functions) {
    if (!lib.skipped.count(f.name)) out.push_back(&f);
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
  for (const auto& h : lib.headers) o << "#include <" << h << ">\n";
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
  for (const Function* f : bound_functions(lib)) {
    const std::string brief = first_sentence(f->doc);
    o << "// " << f->name;
    if (!brief.empty()) o << ": " << brief;
    o << " (" << f->location.file << ":" << f->location.line << ")\n";
    if (f->deprecated) o << "CUBIND_DEPRECATED(" << quoted(f->deprecated->empty() ? f->name + " is deprecated" : *f->deprecated) << ")\n";
    o << f->result.spelling << " " << f->name << "(" << params_decl(f->params) << ");\n";
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
  o << "#include <atomic>\n#include <mutex>\n#include <string>\n\n";
  o << "namespace cubind::raw {\nnamespace {\n\n";
  o << "struct Entry {\n"
       "  const char* name;        // the public name\n"
       "  const char* symbol;      // what to look up\n"
       "  const char* introduced;  // the CUDA version that introduced it, or \"\"\n";
  if (driver) o << "  int version;             // asked of cuGetProcAddress\n";
  else o << "  bool per_thread;         // has a _ptds / _ptsz variant\n";
  o << "};\n\n";
  o << "constexpr Entry kEntries[] = {\n";
  for (const Function* f : functions) {
    o << "    {" << quoted(f->name) << ", ";
    if (driver) {
      // cuGetProcAddress wants the public name and the ABI version.
      o << quoted(f->proc_name.empty() ? f->name : f->proc_name) << ", " << quoted(introduced_in(*f)) << ", " << f->abi_version;
    } else {
      o << quoted(f->abi_symbol) << ", " << quoted(introduced_in(*f)) << ", "
        << (f->per_thread != PerThread::None ? "true" : "false");
    }
    o << "},\n";
  }
  o << "};\n";
  o << "constexpr int kEntryCount = sizeof(kEntries) / sizeof(kEntries[0]);\n\n";
  o << "enum EntryIndex : int {\n";
  for (std::size_t i = 0; i < functions.size(); ++i) o << "  k_" << functions[i]->name << " = " << i << ",\n";
  o << "};\n\n";
  o << "// 0: not tried, 1: loaded, 2: failed. Published with release once the\n"
       "// slots, path and error below are written; read with acquire.\n"
       "std::atomic<int> g_state{0};\n"
       "std::once_flag g_once;\n"
       "void* g_slots[kEntryCount];\n"
       "std::string g_path;\n"
       "std::string g_error;\n\n";
  if (driver) o << "int g_driver_version = 0;\n\n";

  o << "void load_once() {\n";
  o << "  try {\n";
  o << "    const cubind::detail::LibrarySpec spec{" << quoted(rule.display_name) << ", " << quoted(lib.soname) << ", "
    << (rule.env_override ? quoted(rule.env_override) : "nullptr") << ", {";
  for (std::size_t i = 0; i < rule.wheel_subdirs.size(); ++i) o << (i ? ", " : "") << quoted(rule.wheel_subdirs[i]);
  o << "}, " << (rule.system_loader_only ? "true" : "false") << "};\n";
  o << "    const cubind::detail::LoadedLibrary lib = cubind::detail::load_library(spec);\n";
  o << "    g_path = lib.path;\n";
  if (driver) {
    o << "    using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);\n"
         "    auto get_proc = reinterpret_cast<GetProcAddress>(cubind::detail::find_symbol(lib.handle, \"cuGetProcAddress_v2\"));\n"
         "    if (get_proc == nullptr) {\n"
         "      g_error = \"the CUDA driver at \" + lib.path +\n"
         "                \" has no cuGetProcAddress_v2: it is older than CUDA 12.0; install a newer NVIDIA driver\";\n"
         "      g_state.store(2, std::memory_order_release);\n"
         "      return;\n"
         "    }\n"
         "    using DriverGetVersion = CUresult (*)(int*);\n"
         "    if (auto get_version = reinterpret_cast<DriverGetVersion>(cubind::detail::find_symbol(lib.handle, \"cuDriverGetVersion\"))) {\n"
         "      get_version(&g_driver_version);\n"
         "    }\n"
         "    const cuuint64_t flags = cubind::detail::env_flag(\"CUBIND_PER_THREAD_DEFAULT_STREAM\")\n"
         "                                 ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM\n"
         "                                 : CU_GET_PROC_ADDRESS_LEGACY_STREAM;\n"
         "    for (int i = 0; i < kEntryCount; ++i) {\n"
         "      void* fn = nullptr;\n"
         "      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;\n"
         "      if (get_proc(kEntries[i].symbol, &fn, kEntries[i].version, flags, &found) != CUDA_SUCCESS ||\n"
         "          found != CU_GET_PROC_ADDRESS_SUCCESS) {\n"
         "        fn = nullptr;\n"
         "      }\n"
         "      g_slots[i] = fn;\n"
         "    }\n";
  } else {
    if (lib.name == "runtime") {
      o << "    const bool per_thread = cubind::detail::env_flag(\"CUBIND_PER_THREAD_DEFAULT_STREAM\");\n";
    }
    o << "    for (int i = 0; i < kEntryCount; ++i) {\n";
    if (lib.name == "runtime") {
      o << "      // cudart exports the per-thread default stream variants as <name>_ptds / _ptsz.\n"
           "      std::string symbol = kEntries[i].symbol;\n"
           "      if (per_thread && kEntries[i].per_thread) {\n"
           "        const std::string ptds = symbol + \"_ptds\";\n"
           "        const std::string ptsz = symbol + \"_ptsz\";\n"
           "        void* fn = cubind::detail::find_symbol(lib.handle, ptds.c_str());\n"
           "        g_slots[i] = fn != nullptr ? fn : cubind::detail::find_symbol(lib.handle, ptsz.c_str());\n"
           "        continue;\n"
           "      }\n"
           "      g_slots[i] = cubind::detail::find_symbol(lib.handle, symbol.c_str());\n";
    } else {
      o << "      g_slots[i] = cubind::detail::find_symbol(lib.handle, kEntries[i].symbol);\n";
    }
    o << "    }\n";
  }
  o << "    g_state.store(1, std::memory_order_release);\n";
  o << "  } catch (const std::exception& e) {\n"
       "    g_error = e.what();\n"
       "    g_state.store(2, std::memory_order_release);\n"
       "  }\n";
  o << "}\n\n";

  o << "void ensure_loaded() {\n"
       "  std::call_once(g_once, load_once);\n"
       "  if (g_state.load(std::memory_order_acquire) != 1) throw cubind::LoaderError(g_error);\n"
       "}\n\n";
  o << "[[noreturn]] void missing(int i) {\n"
       "  const Entry& e = kEntries[i];\n"
       "  std::string message = std::string(e.name) + \" is not available in \" + " << quoted(rule.display_name)
    << " + \" loaded from \" + g_path;\n";
  if (driver) {
    o << "  if (g_driver_version != 0) {\n"
         "    message += \" (driver API \" + cubind::detail::cuda_version_string(g_driver_version) + \")\";\n"
         "  }\n";
  }
  o << "  if (*e.introduced != '\\0') {\n"
       "    message += std::string(\": it was introduced in CUDA \") + e.introduced;\n"
       "  } else {\n"
       "    message += \": the library is older than the CUDA " << cuda_version_string(lib.cuda_version)
    << " headers cubind was generated from\";\n"
       "  }\n";
  if (driver) {
    o << "  message += \"; install a newer NVIDIA driver\";\n";
  } else if (lib.name == "runtime") {
    o << "  if (cubind::detail::env_flag(\"CUBIND_PER_THREAD_DEFAULT_STREAM\") && e.per_thread) {\n"
         "    message += \" (looked for its per-thread default stream variant)\";\n"
         "  }\n";
  }
  o << "  throw cubind::LoaderError(message);\n"
       "}\n\n";
  o << "// The hot path: one acquire load and one null check after the first call.\n"
       "template <typename Fn>\n"
       "inline Fn entry(int i) {\n"
       "  if (g_state.load(std::memory_order_acquire) != 1) ensure_loaded();\n"
       "  void* fn = g_slots[i];\n"
       "  if (fn == nullptr) missing(i);\n"
       "  return reinterpret_cast<Fn>(fn);\n"
       "}\n\n";
  o << "}  // namespace\n\n";

  o << "void " << lib.name << "_load() { ensure_loaded(); }\n\n";
  o << "cubind::detail::LibraryStatus " << lib.name << "_status() noexcept {\n"
       "  cubind::detail::LibraryStatus status;\n"
       "  const int state = g_state.load(std::memory_order_acquire);\n"
       "  status.attempted = state != 0;\n"
       "  status.loaded = state == 1;\n"
       "  if (state != 0) {\n"
       "    status.path = g_path;\n"
       "    status.error = g_error;\n"
       "  }\n"
       "  return status;\n"
       "}\n\n";

  for (const Function* f : functions) {
    o << f->result.spelling << " " << f->name << "(" << params_decl(f->params) << ") {\n";
    o << "  using Fn = " << function_type(f->result, f->params) << ";\n";
    o << "  return entry<Fn>(k_" << f->name << ")(" << args(f->params) << ");\n";
    o << "}\n\n";
  }
  o << "}  // namespace cubind::raw\n";
  return {"src/" + lib.name + ".cpp", o.str()};
}

}  // namespace codegen

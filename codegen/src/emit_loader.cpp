// The loader: for each library a header declaring every function in
// namespace cubind::raw with the C name and signature, and a source holding
// the table of entry points, filled once by the first call.
//
// The wrappers are declared with the public names (cuCtxCreate). Where the
// CUDA header renames a function (#define cuCtxCreate cuCtxCreate_v4) the
// preprocessor renames the wrapper the same way in every translation unit
// that includes the header, so calls, declarations and the definition agree.
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "codegen/emit_common.hpp"
#include "codegen/emitters.hpp"

namespace codegen {
namespace {

// The loader's cubind::detail::Resolution for the descriptor's choice.
const char* resolution_enumerator(LibraryDescriptor::Resolution resolution) {
  switch (resolution) {
    case LibraryDescriptor::Resolution::Symbol: return "Symbol";
    case LibraryDescriptor::Resolution::ProcAddress: return "ProcAddress";
    case LibraryDescriptor::Resolution::SymbolPerThreadVariants: return "SymbolPerThreadVariants";
  }
  throw std::logic_error("unknown resolution");
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
  // Not a versioned symbol's suffix: nvJitLink's (__nvJitLinkCreate_13_5) name
  // the header's release, not the one that added the function (the loader
  // falls back to older ones). An annotation's `introduced` says that.
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

// The handle type that the parameter `name` (a `Handle *`) points to.
std::string pointee_type(const Function& f, const std::string& name) {
  for (const Param& p : f.params) {
    if (p.name == name) return p.type.pointee;
  }
  throw std::logic_error(f.name + " has no parameter " + name);
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
  // A library whose headers select per-thread variants by macro selects them
  // at run time here, so the compile-time switch would silently disagree.
  if (!lib.per_thread_macros.empty()) {
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
  o << "// The library's own entry point `name` (a function of these headers, by its\n"
       "// C name), as this layer's function of that name reaches it, the library\n"
       "// loaded first, for a caller that calls it directly: without what the layer\n"
       "// adds around some calls (the record of live handles). nullptr for a name\n"
       "// these headers do not have. Throws cubind::LoaderError where the library\n"
       "// cannot be loaded or lacks the entry point.\n";
  o << "void* " << lib.name << "_entry_point(const char* name);\n\n";
  if (const Enum* st = status_enum(lib)) {
    o << "// The enumerator's name of a " << st->name << " (\"" << st->enumerators.back().name
      << "\"), or nullptr for a value\n// these headers do not know. Loads nothing.\n";
    o << "const char* " << lib.name << "_status_name(" << st->name << " status) noexcept;\n\n";
  }
  for (const LiveHandle& h : live_handles(lib)) {
    o << "// Whether `handle` is a " << h.type << " that " << h.made_by->name << " made in this process and\n// "
      << h.destroyed_by->name << " has not destroyed (the two record it); false for nullptr. Loads nothing.\n";
    o << "bool " << h.type << "_is_live(" << h.type << " handle) noexcept;\n\n";
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
  const auto functions = bound_functions(lib);
  const bool proc_address = lib.resolution == LibraryDescriptor::Resolution::ProcAddress;
  std::ostringstream o;
  o << stamp(lib, options, "//");
  o << "#define CUBIND_NO_DEPRECATION_WARNINGS\n";
  o << "#include \"cubind/raw/" << lib.name << ".hpp\"\n\n";
  o << "#include <cstring>\n\n";
  o << "namespace cubind::raw {\nnamespace {\n\n";
  o << "using cubind::detail::EntryPoint;\n\n";
  o << "// {public name, symbol, introduced in, ABI version, has per-thread variants}\n";
  o << "constexpr EntryPoint kEntries[] = {\n";
  for (const Function* f : functions) {
    o << "    {" << quoted(f->name) << ", ";
    if (proc_address) {
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
  o << "constexpr const char* kWheelDirs[] = {";
  for (std::size_t i = 0; i < lib.wheel_dirs.size(); ++i) o << (i ? ", " : "") << quoted(lib.wheel_dirs[i]);
  if (lib.wheel_dirs.empty()) o << "nullptr";
  o << "};\n";
  // Only a library with toolkit folders of its own names them: the others keep the loader's default.
  if (!lib.toolkit_dirs.empty()) {
    o << "constexpr const char* kToolkitDirs[] = {";
    for (std::size_t i = 0; i < lib.toolkit_dirs.size(); ++i) o << (i ? ", " : "") << quoted(lib.toolkit_dirs[i]);
    o << "};\n";
  }
  o << "void* g_slots[kEntryCount];\n";
  o << "// Constant-initialised: nothing runs before main, and it outlives every other object.\n";
  o << "cubind::detail::LibraryTable g_table({" << quoted(lib.display_name) << ", " << quoted(lib.soname) << ", "
    << (lib.env_override.empty() ? "nullptr" : quoted(lib.env_override)) << ", kWheelDirs, "
    << lib.wheel_dirs.size() << ", " << (lib.system_loader_only ? "true" : "false")
    << (lib.toolkit_dirs.empty() ? "" : ", kToolkitDirs, " + std::to_string(lib.toolkit_dirs.size())) << "},\n"
    << "                                       cubind::detail::Resolution::" << resolution_enumerator(lib.resolution)
    << ", kEntries, kEntryCount, g_slots, " << lib.cuda_version << ");\n\n";
  const auto live = live_handles(lib);
  for (const LiveHandle& h : live) o << "cubind::detail::LiveHandles g_live_" << h.type << ";\n";
  if (!live.empty()) o << "\n";
  o << "}  // namespace\n\n";
  o << "void " << lib.name << "_load() { g_table.ensure_loaded(); }\n\n";
  for (const LiveHandle& h : live) {
    o << "bool " << h.type << "_is_live(" << h.type << " handle) noexcept { return g_live_" << h.type
      << ".contains(handle); }\n\n";
  }
  o << "cubind::detail::LibraryStatus " << lib.name << "_status() noexcept { return g_table.status(); }\n\n";
  o << "void* " << lib.name << "_entry_point(const char* name) {\n"
       "  for (int i = 0; i < kEntryCount; ++i) {\n"
       "    if (std::strcmp(kEntries[i].name, name) == 0) return g_table.entry(i);\n"
       "  }\n"
       "  return nullptr;\n}\n\n";
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
    const std::string call = "reinterpret_cast<Fn>(g_table.entry(k_" + f->name + "))(" + args(f->params) + ")";
    const std::string type = f->makes_handle.empty() && f->destroys_handle.empty()
                                 ? ""
                                 : (f->makes_handle.empty() ? pointee_type(*f, f->destroys_handle)
                                                            : pointee_type(*f, f->makes_handle));
    if (!f->makes_handle.empty()) {
      // Recorded on success only: what a failed call leaves in the output is not a handle to trust.
      o << "  const auto result = " << call << ";\n";
      o << "  if (static_cast<long long>(result) == 0 && " << f->makes_handle << " != nullptr) g_live_" << type
        << ".add(*" << f->makes_handle << ");\n";
      o << "  return result;\n";
    } else if (!f->destroys_handle.empty()) {
      // Forgotten before the call, so that a handle another thread makes at the
      // freed address is not forgotten after it; recorded again if the call fails.
      const std::string& p = f->destroys_handle;
      o << "  const void* destroyed = " << p << " != nullptr ? *" << p << " : nullptr;\n";
      o << "  const bool recorded = g_live_" << type << ".remove(destroyed);\n";
      o << "  const auto result = " << call << ";\n";
      o << "  if (static_cast<long long>(result) != 0 && recorded) g_live_" << type << ".add(destroyed);\n";
      o << "  return result;\n";
    } else {
      // The usual path makes no call before the library's: its arguments stay
      // in place and it ends in a jump (the slow path is another function).
      // (A name no parameter has: one of cuLaunchHostFunc's is `fn`.)
      o << "  if (void* cubind_entry = g_table.loaded_entry(k_" << f->name
        << ")) return reinterpret_cast<Fn>(cubind_entry)("
        << args(f->params) << ");\n";
      o << "  return cubind::detail::call_after_loading<Fn>(g_table, k_" << f->name
        << (f->params.empty() ? "" : ", ") << args(f->params) << ");\n";
    }
    o << "}\n\n";
  }
  o << "}  // namespace cubind::raw\n";
  return {"src/" + lib.name + ".cpp", o.str()};
}

GeneratedFile emit_python_libraries(const std::vector<Library>& libraries, const EmitOptions& options) {
  std::ostringstream o;
  o << "# Generated by cubind-codegen " << options.generator_version << ". Do not edit.\n"
    << "# Included by cubind/_libraries.pyx, which declares LibraryStatus and _unknown():\n"
    << "# the loader's functions of each library of codegen/annotations/<library>.yaml.\n\n";
  for (const auto& lib : libraries) {
    o << "cdef extern from \"cubind/raw/" << lib.name << ".hpp\" namespace \"cubind::raw\" nogil:\n"
      << "    LibraryStatus " << lib.name << "_status()\n"
      << "    void " << lib.name << "_load() except +\n";
  }
  o << "\nNAMES = (";
  for (std::size_t i = 0; i < libraries.size(); ++i) o << (i ? ", " : "") << quoted(libraries[i].name);
  o << (libraries.size() == 1 ? ",)\n" : ")\n");
  o << "\n\ncdef LibraryStatus _status_of(str name) except *:\n";
  for (const auto& lib : libraries) {
    o << "    if name == " << quoted(lib.name) << ":\n        return " << lib.name << "_status()\n";
  }
  o << "    _unknown(name)\n";
  o << "\n\ncdef int _load(str name) except -1:\n";
  for (const auto& lib : libraries) {
    o << "    if name == " << quoted(lib.name) << ":\n        with nogil:\n            " << lib.name
      << "_load()\n        return 0\n";
  }
  o << "    _unknown(name)\n";
  return {"python/cubind/_libraries.pxi", o.str()};
}

}  // namespace codegen

// Program: CUDA C++ source compiled by NVRTC to PTX, CUBIN or LTO-IR.
// A failed compile is a CompileResult carrying the log; only a misuse of
// NVRTC (a bad option, a bad name expression) throws NvrtcError.
#pragma once

#include <nvrtc.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cubind/object_code.hpp"

namespace cubind {

struct ProgramOptions {
  struct Define {
    std::string name;
    std::optional<std::string> value;  // -DNAME when absent, -DNAME=VALUE when present
  };

  // "sm_90" (a real GPU: PTX and CUBIN) or "compute_90" (virtual: PTX and LTO-IR);
  // empty for NVRTC's default.
  std::string arch;
  std::string cpp_standard;                // "c++17", "c++20"; empty for NVRTC's default
  std::vector<Define> defines;             // macros, as -D on a compiler command line
  std::vector<std::string> include_paths;  // searched for #include beyond the Program's own headers
  bool debug = false;                      // -G: device debug information, optimisation off
  bool line_info = false;                  // line tables for profilers
  bool relocatable_device_code = false;    // -rdc=true: extern device functions, resolved by a Linker
  bool lto = false;                        // -dlto: LTO-IR for the Linker (implied by compiling to LTO-IR)
  bool fast_math = false;                  // --use_fast_math
  std::optional<int> max_register_count;   // registers per thread
  std::vector<std::string> extra;          // NVRTC options passed as they are, after all others

  // The NVRTC option strings, in the order of the fields above.
  // @throws std::invalid_argument for an arch that is neither sm_N nor compute_N,
  // an empty or '='-holding define name, an empty include path, or a register count below 1
  std::vector<std::string> render() const;
};

// A header the source can #include by name without a file on disk.
struct ProgramHeader {
  std::string name;  // as written in #include "name"
  std::string source;
};

struct CompileResult {
  bool ok = false;
  std::string log;                                   // NVRTC's messages, warnings included; may be non-empty when ok
  ObjectCode code;                                   // null unless ok
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled kernel name

  explicit operator bool() const noexcept { return ok; }
};

class Program {
 public:
  // nvrtcCreateProgram. `name` is the file name in NVRTC's messages.
  // @throws NvrtcError, LoaderError when NVRTC cannot be loaded
  explicit Program(std::string source, std::string name = "program.cu", std::vector<ProgramHeader> headers = {});
  ~Program();
  Program(Program&& other) noexcept;
  Program& operator=(Program&& other) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  // Compiles to target (CodeKind::ptx, cubin or ltoir). Name expressions such
  // as "scale<float>" instantiate templates; their mangled names, for
  // ObjectCode::get_kernel, are in the result. Each call compiles afresh, so one
  // Program can be compiled for several architectures.
  // @throws std::invalid_argument for another target, a CUBIN without a real
  // arch (sm_N), lto with a target other than LTO-IR, or a bad option value
  // @throws NvrtcError when NVRTC rejects an option or a name expression (its log is in the message)
  CompileResult compile(CodeKind target, const ProgramOptions& options = {},
                        const std::vector<std::string>& name_expressions = {});

  // The mangled name of a name expression given to the last compile().
  // @throws NvrtcError when it was not given, or before a compile
  std::string lowered_name(const std::string& name_expression) const;

  const std::string& name() const;
  nvrtcProgram handle() const;

 private:
  struct Source {
    std::string text;
    std::string name;
    std::vector<ProgramHeader> headers;
  };
  void check_not_null(const char* method) const;

  nvrtcProgram handle_ = nullptr;
  Source source_;
  bool compiled_ = false;
};

}  // namespace cubind

// Linker: nvJitLink, linking PTX, CUBIN, LTO-IR, fatbins, host objects and
// static libraries into one CUBIN (or, from LTO-IR, PTX). A failed link is a
// LinkResult carrying the logs; a misuse of nvJitLink throws NvJitLinkError.
#pragma once

#include <nvJitLink.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cubind/object_code.hpp"

namespace cubind {

struct LinkerOptions {
  std::string arch;                        // "sm_90": required
  bool lto = false;                        // -lto: link-time optimisation of LTO-IR inputs
  bool ptx = false;                        // -ptx: produce PTX rather than a CUBIN (needs lto)
  std::optional<int> optimization_level;   // -O0 .. -O3
  bool debug = false;                      // -g
  bool line_info = false;                  // -lineinfo
  std::optional<int> max_register_count;   // registers per thread
  std::vector<std::string> ptxas_options;  // each passed to ptxas as -Xptxas=<option>
  std::vector<std::string> extra;          // nvJitLink options passed as they are, after all others

  // The nvJitLink option strings, in the order of the fields above.
  // @throws std::invalid_argument for an arch that is not sm_N, an optimisation
  // level outside 0..3, or a register count below 1
  std::vector<std::string> render() const;
};

struct LinkResult {
  bool ok = false;
  std::string error_log;  // why the link failed
  std::string info_log;   // what nvJitLink reported besides (ptxas -v output, for example)
  ObjectCode code;        // a CUBIN, or PTX with options.ptx; null unless ok

  explicit operator bool() const noexcept { return ok; }
};

class Linker {
 public:
  // nvJitLinkCreate.
  // @throws std::invalid_argument for bad options, NvJitLinkError when
  // nvJitLink rejects them, LoaderError when it cannot be loaded
  explicit Linker(const LinkerOptions& options);
  ~Linker();
  Linker(Linker&& other) noexcept;
  Linker& operator=(Linker&& other) noexcept;
  Linker(const Linker&) = delete;
  Linker& operator=(const Linker&) = delete;

  // Inputs; `name` appears in the logs. nvJitLink copies the bytes.
  // @throws NvJitLinkError (with nvJitLink's error log) for an input it rejects,
  // std::invalid_argument for null data, std::logic_error after link()
  void add(const ObjectCode& code);
  void add_bytes(CodeKind kind, const void* data, std::size_t size, const std::string& name);
  // The kind is inferred from the extension when not given (see code_kind_from_path).
  void add_file(const std::string& path, std::optional<CodeKind> kind = std::nullopt);

  // nvJitLinkComplete. A Linker links once.
  // @throws std::logic_error when called again
  LinkResult link();

  // The logs so far (nvJitLinkGetErrorLog / nvJitLinkGetInfoLog).
  std::string error_log() const;
  std::string info_log() const;

  nvJitLinkHandle handle() const;

 private:
  void check_not_null(const char* method) const;
  void check_not_linked(const char* method) const;
  [[noreturn]] void throw_with_log(nvJitLinkResult status, const char* api_function) const;

  nvJitLinkHandle handle_ = nullptr;
  bool ptx_ = false;
  bool linked_ = false;  // nvJitLink's handle takes no input and no second link after nvJitLinkComplete
};

}  // namespace cubind

// ObjectCode: device code as bytes (CUBIN, PTX, fatbin, LTO-IR, or a host
// object or static library holding device code), loaded into the driver on
// first use as a context-independent CUlibrary.
#pragma once

#include <cuda.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cubind/kernel.hpp"

namespace cubind {

namespace detail {
struct LibraryOwner;
}  // namespace detail

enum class CodeKind {
  cubin,
  ptx,
  ltoir,
  fatbin,
  object,   // a host object file with embedded device code (.o): a linker input only
  library,  // a static library of such objects (.a): a linker input only
};

// "cubin", "ptx", "ltoir", "fatbin", "object", "library".
const char* code_kind_name(CodeKind kind) noexcept;

// From the file's extension: .cubin, .ptx, .ltoir, .fatbin, .o, .a.
// @throws std::invalid_argument for any other extension, listing these.
CodeKind code_kind_from_path(const std::string& path);

class ObjectCode {
 public:
  // Null, as a moved-from ObjectCode is: every method but the destructor and
  // assignment throws std::logic_error.
  ObjectCode() noexcept;
  ~ObjectCode();
  ObjectCode(ObjectCode&& other) noexcept;
  ObjectCode& operator=(ObjectCode&& other) noexcept;
  ObjectCode(const ObjectCode&) = delete;
  ObjectCode& operator=(const ObjectCode&) = delete;

  // `name` appears in the linker's messages and in errors; PTX needs no
  // terminating NUL (one is added for the driver when missing).
  static ObjectCode from_bytes(CodeKind kind, std::vector<char> bytes, std::string name = {});

  // Reads the whole file now. The kind is inferred from the extension when not given.
  // @throws std::invalid_argument for an extension that names no kind
  // @throws std::system_error when the file cannot be read
  static ObjectCode from_file(const std::string& path, std::optional<CodeKind> kind = std::nullopt);

  CodeKind kind() const;
  const std::string& name() const;
  const std::vector<char>& bytes() const;

  // Loads the code with cuLibraryLoadData on the first call (thread-safe), then
  // cuLibraryGetKernel. The Kernel keeps the library loaded for as long as it lives.
  // @throws std::invalid_argument when no kernel has this name, listing those present
  // @throws std::logic_error for LTO-IR, objects and libraries: link them first (Linker)
  // @throws CudaError when the driver cannot load the code (for example, no cubin for this GPU)
  Kernel get_kernel(const std::string& kernel_name) const;

  // Names of the kernels in the library (cuLibraryEnumerateKernels), loading it first.
  std::vector<std::string> kernel_names() const;

  // The CUlibrary, loading it first; it stays owned by this ObjectCode and its Kernels.
  CUlibrary handle() const;

 private:
  struct State;
  explicit ObjectCode(std::unique_ptr<State> state) noexcept;
  State& state(const char* method) const;
  // The loaded library, loading it on the first call; Kernels share it.
  std::shared_ptr<const detail::LibraryOwner> library(const char* method) const;

  std::unique_ptr<State> state_;
};

}  // namespace cubind

// Run-time loading of the CUDA libraries, shared by the generated loader
// (bindings/src/*.cpp) and the core. Nothing here runs at static-initialisation
// time: a library is opened by the first call that needs it.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cubind {

// Raised when a CUDA library cannot be opened, or lacks an entry point.
// Python sees it as RuntimeError (Cython's `except +`).
class LoaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// How one library is found.
struct LibrarySpec {
  const char* display_name;   // "NVRTC"
  const char* soname;         // "libnvrtc.so.13"
  const char* env_override;   // "CUBIND_NVRTC_LIBRARY": a full path, tried first; nullptr for none
  std::vector<std::string> wheel_subdirs;  // under site-packages: {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}
  bool system_loader_only;    // the driver: dlopen(soname) and nothing else
};

// What a generated loader reports of its library (cubind::raw::<lib>_status()).
struct LibraryStatus {
  bool attempted = false;  // a call has tried to load it
  bool loaded = false;
  std::string path;        // where it was loaded from
  std::string error;       // why it could not be, when attempted and not loaded
};

struct LoadedLibrary {
  void* handle = nullptr;
  std::string path;  // the file actually opened (from dlinfo), or the name given to dlopen
};

// Opens the library following the documented search order (docs/loading.md):
//   1. the environment override, when set (a failure there is final: no fallback);
//   2. already loaded in this process (dlopen RTLD_NOLOAD of the soname);
//   3. NVIDIA wheels in the site-packages that holds libcubind.so;
//   4. $CONDA_PREFIX/lib;
//   5. $CUDA_HOME/lib64, $CUDA_HOME/lib, $CUDA_PATH/lib64, $CUDA_PATH/lib;
//   6. /usr/local/cuda/lib64;
//   7. the system loader (dlopen of the bare soname).
// With system_loader_only, only step 7 is taken. Throws LoaderError listing
// every place tried and why each failed.
LoadedLibrary load_library(const LibrarySpec& spec);

// dlsym; nullptr when absent.
void* find_symbol(void* handle, const char* name) noexcept;

// True when the environment variable is set to 1, true, yes or on.
bool env_flag(const char* name) noexcept;

// "12.5" from 12050.
std::string cuda_version_string(int version);

}  // namespace detail
}  // namespace cubind

// Run-time loading of the CUDA libraries: the hand-written part of the raw
// layer (libcubind_raw), under the generated wrappers of bindings/src/*.cpp.
// It includes nothing of the core. Nothing here runs at static-initialisation
// time: a library is opened by the first call that needs it.
#pragma once

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>  // std::remove_all_extents: the .pxd's name of an unnamed struct array member's type
#include <utility>
#include <vector>

namespace cubind {

// Raised when a CUDA library cannot be opened, or lacks an entry point.
// Python sees it as RuntimeError (Cython's `except +`).
class LoaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

// How one library is found. Constant, so a generated table built from it
// needs no code at static-initialisation time.
struct LibrarySpec {
  const char* display_name;           // "NVRTC"
  const char* soname;                 // "libnvrtc.so.13"
  const char* env_override;           // "CUBIND_NVRTC_LIBRARY": a full path, tried first; nullptr for none
  const char* const* wheel_subdirs;   // under site-packages: {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}
  int wheel_count;                    // entries of wheel_subdirs
  bool system_loader_only;            // the driver: dlopen(soname) and nothing else
  // Under a toolkit's root, in order: {"nvvm/lib64"} for libNVVM. nullptr: lib64, then lib.
  const char* const* toolkit_subdirs = nullptr;
  int toolkit_count = 0;
};

// What a generated loader reports of its library (cubind::raw::<lib>_status()).
struct LibraryStatus {
  bool attempted = false;  // a call has tried to load it
  bool loaded = false;
  std::string path;        // where it was loaded from
  std::string error;       // why it could not be, when attempted and not loaded
  // Once loaded: the entry points the library lacks (older than the headers,
  // or an installation without an optional part), each with the CUDA version
  // that introduced it ("" where unknown), in the table's order.
  std::vector<std::pair<std::string, std::string>> missing;
};

struct LoadedLibrary {
  void* handle = nullptr;
  std::string path;  // the file actually opened (from dlinfo), or the name given to dlopen
};

// Opens the library following the documented search order (docs/loading.md):
//   1. the environment override, when set (a failure there is final: no fallback);
//   2. already loaded in this process (dlopen RTLD_NOLOAD of the soname);
//   3. NVIDIA wheels in the site-packages that holds libcubind_raw.so;
//   4. $CONDA_PREFIX/lib;
//   5. $CUDA_HOME/lib64, $CUDA_HOME/lib, $CUDA_PATH/lib64, $CUDA_PATH/lib
//      (a library with toolkit_subdirs: those folders of each root instead);
//   6. /usr/local/cuda/lib64 (or its toolkit_subdirs);
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

// The handles of one type (nvrtcProgram, nvJitLinkHandle) that the raw
// layer's create function made in this process and its destroy function has
// not destroyed yet, so that a binding can refuse a made-up or destroyed
// handle with an error where the library would read freed or foreign memory.
// Constant-initialised and never destroyed, like LibraryTable: its set is
// allocated at the first handle and outlives every other object.
class LiveHandles {
 public:
  constexpr LiveHandles() noexcept = default;
  LiveHandles(const LiveHandles&) = delete;
  LiveHandles& operator=(const LiveHandles&) = delete;

  // Records a handle the library made (nullptr is ignored). Under memory
  // exhaustion the handle goes unrecorded: contains() then says false for it.
  void add(const void* handle) noexcept;
  // Forgets a handle; returns whether it was recorded.
  bool remove(const void* handle) noexcept;
  bool contains(const void* handle) const noexcept;

 private:
  mutable std::mutex mutex_;
  void* set_ = nullptr;  // std::unordered_set<const void*>*, kept out of the header
};

// One entry point of a library's table (emitted by the generator).
struct EntryPoint {
  const char* name;        // the public name
  const char* symbol;      // what to look up: the driver's name for cuGetProcAddress, else the symbol
  const char* introduced;  // the CUDA version that introduced it, or ""
  int version;             // driver: the ABI version asked of cuGetProcAddress
  bool per_thread;         // cudart: has a _ptds / _ptsz variant
};

// How entry points are looked up once the library is open.
enum class Resolution {
  ProcAddress,  // the driver: cuGetProcAddress_v2 with each entry's ABI version
  Symbol,       // dlsym of each symbol
  SymbolPerThreadVariants,  // dlsym, and <symbol>_ptds/_ptsz with CUBIND_PER_THREAD_DEFAULT_STREAM=1
};

// For a versioned symbol the library lacks (__nvJitLinkCreate_13_5), the newest
// older one of the same major release, else the public name; nullptr when none.
void* find_older_symbol(void* handle, const EntryPoint& e);

// The table of one library's entry points: filled once, by the first call
// that needs it (thread-safe), read lock-free afterwards. Constant-initialised
// and never destroyed, so calls made while the process exits still work.
class LibraryTable {
 public:
  constexpr LibraryTable(LibrarySpec spec, Resolution resolution, const EntryPoint* entries, int count, void** slots,
                         int header_version) noexcept
      : spec_(spec),
        resolution_(resolution),
        entries_(entries),
        count_(count),
        slots_(slots),
        header_version_(header_version) {}
  LibraryTable(const LibraryTable&) = delete;
  LibraryTable& operator=(const LibraryTable&) = delete;

  // The entry point `index`: one acquire load and one null check once loaded.
  // Throws LoaderError when the library cannot be loaded or lacks the entry.
  void* entry(int index) {
    if (state_.load(std::memory_order_acquire) != kLoaded) ensure_loaded();
    void* fn = slots_[index];
    if (fn == nullptr) missing(index);
    return fn;
  }

  // The entry point `index` when the library is loaded and has it, else
  // nullptr (entry() then loads the library or throws). Makes no call, so a
  // trampoline that asks it keeps its arguments where they arrived and jumps
  // on to the library (call_after_loading is its other way).
  void* loaded_entry(int index) const noexcept {
    return state_.load(std::memory_order_acquire) == kLoaded ? slots_[index] : nullptr;
  }

  void ensure_loaded();
  LibraryStatus status() const noexcept;

 private:
  static constexpr int kNotTried = 0;
  static constexpr int kLoaded = 1;
  static constexpr int kFailed = 2;

  // Where the library came from or why it did not: written once by load(),
  // before state_ is published, and deliberately never freed.
  struct Outcome {
    std::string path;
    std::string error;
    int driver_version = 0;
  };

  void load() noexcept;
  [[noreturn]] void missing(int index) const;

  LibrarySpec spec_;
  Resolution resolution_;
  const EntryPoint* entries_;
  int count_;
  void** slots_;
  int header_version_;
  Outcome* outcome_ = nullptr;
  std::atomic<int> state_{kNotTried};
  std::once_flag once_;
};

// A trampoline's call before its library is loaded (or where it lacks the
// entry point): loads it, or throws LoaderError, then calls. Out of line and
// cold, so that the trampoline's usual path saves no register around a call.
template <class Fn, class... Args>
[[gnu::noinline, gnu::cold]] auto call_after_loading(LibraryTable& table, int index, Args... args) {
  return reinterpret_cast<Fn>(table.entry(index))(args...);
}

}  // namespace detail
}  // namespace cubind

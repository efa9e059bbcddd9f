// The search order implemented here is documented in docs/loading.md; keep the two in step.
#include "cubind/detail/loader_support.hpp"

#include <cuda.h>

#include <new>
#include <unordered_set>

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace cubind {
namespace detail {
namespace {

constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL;

// Collects one line per place tried, in the order tried, for the final error.
struct Attempts {
  std::string lines;
  void fail(const std::string& place, const std::string& reason) {
    lines += "  - " + place + ": " + reason + "\n";
  }
};

std::string last_dlerror() {
  const char* text = dlerror();
  return text != nullptr ? text : "not found";
}

const char* env_value(const char* name) {
  const char* value = name != nullptr ? std::getenv(name) : nullptr;
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

// The path the dynamic loader resolved, which for a bare soname differs from the name given.
std::string opened_path(void* handle, const std::string& requested) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return requested;
}

// The DT_SONAME of an opened library, or "" when it has none.
std::string soname_of(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_ld == nullptr) return {};
  ElfW(Addr) strtab = 0;
  ElfW(Xword) offset = 0;
  bool has_soname = false;
  for (const ElfW(Dyn)* dyn = map->l_ld; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
    if (dyn->d_tag == DT_SONAME) {
      offset = dyn->d_un.d_val;
      has_soname = true;
    }
  }
  if (!has_soname || strtab == 0) return {};
  // glibc relocates DT_STRTAB in place where the dynamic section is writable
  // (x86-64, AArch64); elsewhere it is still the file's address.
  if (strtab < map->l_addr) strtab += map->l_addr;
  return reinterpret_cast<const char*>(strtab + offset);
}

// A file of another major version (CUBIND_NVRTC_LIBRARY pointing at libnvrtc.so.12, say)
// has other entry points and other structs behind the same names: refuse it by its soname
// rather than call into it. Only a soname of the same library with another version
// ("libnvrtc.so." then something else) is refused; a file without a soname, or one that
// names itself otherwise (a stand-in, a renamed build), is taken as it is.
bool check_soname(const std::string& place, void* handle, const char* expected, Attempts& attempts) {
  const std::string soname = soname_of(handle);
  const std::string wanted = expected;
  const std::string::size_type so = wanted.find(".so.");
  if (so == std::string::npos || soname == wanted || soname.compare(0, so + 4, wanted, 0, so + 4) != 0) return true;
  dlclose(handle);
  attempts.fail(place, "its soname is " + soname + ", not " + expected +
                           ": another version than the one cubind was built for");
  return false;
}

// Checking the file first makes a missing file read "no such file" rather than dlerror's
// longer text, which would also hide whether the file or one of its dependencies is missing.
bool try_file(const std::string& place, const std::string& path, const char* soname, Attempts& attempts,
              LoadedLibrary& out) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    const bool missing = errno == ENOENT || errno == ENOTDIR;
    attempts.fail(place, missing ? "no such file" : std::strerror(errno));
    return false;
  }
  dlerror();
  void* handle = dlopen(path.c_str(), kOpenFlags);
  if (handle == nullptr) {
    attempts.fail(place, last_dlerror());
    return false;
  }
  if (!check_soname(place, handle, soname, attempts)) return false;
  out.handle = handle;
  out.path = opened_path(handle, path);
  return true;
}

bool try_soname(const std::string& place, const char* soname, int extra_flags,
                Attempts& attempts, LoadedLibrary& out) {
  dlerror();
  void* handle = dlopen(soname, kOpenFlags | extra_flags);
  if (handle == nullptr) {
    // With RTLD_NOLOAD glibc still reports the path search it did not act on; "not found"
    // is what that step actually learned.
    attempts.fail(place, (extra_flags & RTLD_NOLOAD) != 0 ? "not found" : last_dlerror());
    return false;
  }
  if (!check_soname(place, handle, soname, attempts)) return false;
  out.handle = handle;
  out.path = opened_path(handle, soname);
  return true;
}

// libcubind_raw.so, which holds this function, is installed as
// <site-packages>/cubind/libcubind_raw.so. Anywhere else (a build
// tree, a C++ install under /usr/lib) there is no site-packages to search, and the reason
// is returned instead.
bool find_site_packages(std::string& site_packages, std::string& reason) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&find_site_packages), &info) == 0 ||
      info.dli_fname == nullptr) {
    reason = "cannot locate libcubind_raw.so";
    return false;
  }
  // Resolve symlinks and the "/.." an $ORIGIN-relative rpath leaves in the name.
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) {
    reason = std::string("cannot resolve ") + info.dli_fname + ": " + std::strerror(errno);
    return false;
  }
  std::string dir(resolved);
  dir.erase(dir.rfind('/'));
  const std::string::size_type slash = dir.rfind('/');
  if (slash == std::string::npos || dir.compare(slash + 1, std::string::npos, "cubind") != 0) {
    reason = std::string("skipped, ") + resolved + " is not inside a cubind Python package";
    return false;
  }
  site_packages = dir.substr(0, slash);
  return true;
}

[[noreturn]] void throw_not_found(const LibrarySpec& spec, const Attempts& attempts,
                                  bool override_was_set) {
  std::string message = std::string("cubind could not load ") + spec.display_name + " (" +
                        spec.soname + "). Tried:\n" + attempts.lines;
  if (override_was_set) {
    message += std::string(spec.env_override) +
               " is set, so no other place was searched: correct it or unset it.";
  } else if (spec.system_loader_only) {
    message += std::string("The NVIDIA driver is not installed, or ") + spec.soname +
               " is not on the loader path.";
  } else if (spec.env_override != nullptr) {
    message += std::string("Set ") + spec.env_override + " to the full path of " + spec.soname +
               ", or install the CUDA toolkit or the NVIDIA wheel.";
  } else {
    message += "Install the CUDA toolkit or the NVIDIA wheel.";
  }
  throw LoaderError(message);
}

}  // namespace

LoadedLibrary load_library(const LibrarySpec& spec) {
  Attempts attempts;
  LoadedLibrary out;
  const std::string soname = spec.soname;

  if (spec.system_loader_only) {
    // A driver library (NVML) may name its override, tried alone where set.
    if (spec.env_override != nullptr) {
      if (const char* path = env_value(spec.env_override)) {
        if (try_file(std::string(spec.env_override) + "=" + path, path, spec.soname, attempts, out)) return out;
        throw_not_found(spec, attempts, true);
      }
      attempts.fail(spec.env_override, "not set");
    }
    if (try_soname("system loader (" + soname + ")", spec.soname, 0, attempts, out)) return out;
    throw_not_found(spec, attempts, false);
  }

  // 1. An override is a deliberate choice, so silently using some other copy would hide a typo.
  if (spec.env_override != nullptr) {
    if (const char* path = env_value(spec.env_override)) {
      if (try_file(std::string(spec.env_override) + "=" + path, path, spec.soname, attempts, out)) return out;
      throw_not_found(spec, attempts, true);
    }
    attempts.fail(spec.env_override, "not set");
  }

  // 2. Whoever loaded it first (the application, another binding) has already chosen.
  if (try_soname("already loaded in this process", spec.soname, RTLD_NOLOAD, attempts, out)) {
    return out;
  }

  // 3-6: directories, each tried once even when two variables name the same one.
  std::vector<std::string> tried;
  auto try_dir = [&](const std::string& dir) {
    const std::string path = dir + "/" + soname;
    for (const std::string& earlier : tried) {
      if (earlier == path) return false;
    }
    tried.push_back(path);
    return try_file(path, path, spec.soname, attempts, out);
  };

  if (spec.wheel_count > 0) {
    std::string site_packages, reason;
    if (find_site_packages(site_packages, reason)) {
      for (int i = 0; i < spec.wheel_count; ++i) {
        if (try_dir(site_packages + "/" + spec.wheel_subdirs[i])) return out;
      }
    } else {
      attempts.fail("NVIDIA wheels", reason);
    }
  }

  if (const char* conda = env_value("CONDA_PREFIX")) {
    if (try_dir(std::string(conda) + "/lib")) return out;
  } else {
    attempts.fail("$CONDA_PREFIX", "not set");
  }

  // A toolkit keeps most libraries in lib64 (lib on some installs), libNVVM in nvvm/lib64.
  static const char* const kDefaultToolkitDirs[] = {"lib64", "lib"};
  const bool own_dirs = spec.toolkit_subdirs != nullptr;
  const char* const* toolkit_dirs = own_dirs ? spec.toolkit_subdirs : kDefaultToolkitDirs;
  const int toolkit_count = own_dirs ? spec.toolkit_count : 2;
  auto try_toolkit = [&](const std::string& root, int count) {
    for (int i = 0; i < count; ++i) {
      if (try_dir(root + "/" + toolkit_dirs[i])) return true;
    }
    return false;
  };
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = env_value(variable)) {
      if (try_toolkit(root, toolkit_count)) return out;
    } else {
      attempts.fail(std::string("$") + variable, "not set");
    }
  }

  // /usr/local/cuda: lib64 only, unless the library names its own folders.
  if (try_toolkit("/usr/local/cuda", own_dirs ? toolkit_count : 1)) return out;

  // 7. Last, so that a toolkit found above wins over whatever ldconfig happens to list.
  if (try_soname("system loader (" + soname + ")", spec.soname, 0, attempts, out)) return out;
  throw_not_found(spec, attempts, false);
}

using HandleSet = std::unordered_set<const void*>;

void LiveHandles::add(const void* handle) noexcept {
  if (handle == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    if (set_ == nullptr) set_ = new HandleSet();  // never freed: see the class comment
    static_cast<HandleSet*>(set_)->insert(handle);
  } catch (const std::bad_alloc&) {
  }
}

bool LiveHandles::remove(const void* handle) noexcept {
  if (handle == nullptr) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return set_ != nullptr && static_cast<HandleSet*>(set_)->erase(handle) > 0;
}

bool LiveHandles::contains(const void* handle) const noexcept {
  if (handle == nullptr) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  return set_ != nullptr && static_cast<HandleSet*>(set_)->count(handle) > 0;
}

void* find_symbol(void* handle, const char* name) noexcept {
  return handle != nullptr && name != nullptr ? dlsym(handle, name) : nullptr;
}

bool env_flag(const char* name) noexcept {
  const char* value = env_value(name);
  if (value == nullptr) return false;
  for (const char* yes : {"1", "true", "yes", "on"}) {
    if (strcasecmp(value, yes) == 0) return true;
  }
  return false;
}

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// nvJitLink's header calls versioned symbols named for the header's release
// (__nvJitLinkCreate_13_5); a library of an earlier release exports those of its
// own release and the ones before (__nvJitLinkCreate_13_0 ...), and every
// release the public name. So a function a 13.0 library has resolves there to
// its newest versioned symbol, else to its public name; one it lacks stays
// missing, and its first call says so.
void* find_older_symbol(void* handle, const EntryPoint& e) {
  const std::string symbol = e.symbol;
  const auto minor_sep = symbol.rfind('_');
  const auto major_sep = minor_sep == std::string::npos || minor_sep == 0 ? std::string::npos
                                                                          : symbol.rfind('_', minor_sep - 1);
  if (symbol.rfind("__", 0) != 0 || major_sep == std::string::npos) return nullptr;
  const std::string stem = symbol.substr(0, major_sep + 1);
  const std::string major = symbol.substr(major_sep + 1, minor_sep - major_sep - 1);
  int minor = 0;
  try {
    minor = std::stoi(symbol.substr(minor_sep + 1));
  } catch (const std::exception&) {
    return nullptr;
  }
  for (int m = minor - 1; m >= 0; --m) {
    if (void* fn = find_symbol(handle, (stem + major + "_" + std::to_string(m)).c_str())) return fn;
  }
  return find_symbol(handle, e.name);
}

// ---------------------------------------------------------------------------
// LibraryTable

void LibraryTable::ensure_loaded() {
  std::call_once(once_, [this] { load(); });
  if (state_.load(std::memory_order_acquire) != kLoaded) throw LoaderError(outcome_->error);
}

LibraryStatus LibraryTable::status() const noexcept {
  LibraryStatus status;
  const int state = state_.load(std::memory_order_acquire);
  status.attempted = state != kNotTried;
  status.loaded = state == kLoaded;
  if (state != kNotTried) {
    status.path = outcome_->path;
    status.error = outcome_->error;
  }
  if (state == kLoaded) {
    for (int i = 0; i < count_; ++i) {
      if (slots_[i] == nullptr) status.missing.emplace_back(entries_[i].name, entries_[i].introduced);
    }
  }
  return status;
}

void LibraryTable::load() noexcept {
  outcome_ = new (std::nothrow) Outcome();
  if (outcome_ == nullptr) std::abort();  // no memory for a few strings: nothing sensible remains
  std::string& error_ = outcome_->error;
  try {
    const LoadedLibrary lib = load_library(spec_);
    outcome_->path = lib.path;
    switch (resolution_) {
      case Resolution::ProcAddress: {
        using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
        auto get_proc = reinterpret_cast<GetProcAddress>(find_symbol(lib.handle, "cuGetProcAddress_v2"));
        if (get_proc == nullptr) {
          error_ = "the CUDA driver at " + lib.path +
                   " has no cuGetProcAddress_v2: it is older than CUDA 12.0; install a newer NVIDIA driver";
          state_.store(kFailed, std::memory_order_release);
          return;
        }
        using DriverGetVersion = CUresult (*)(int*);
        if (auto get_version = reinterpret_cast<DriverGetVersion>(find_symbol(lib.handle, "cuDriverGetVersion"))) {
          get_version(&outcome_->driver_version);
        }
        const cuuint64_t flags = env_flag("CUBIND_PER_THREAD_DEFAULT_STREAM")
                                     ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                     : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
        for (int i = 0; i < count_; ++i) {
          void* fn = nullptr;
          CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
          if (get_proc(entries_[i].symbol, &fn, entries_[i].version, flags, &found) != CUDA_SUCCESS ||
              found != CU_GET_PROC_ADDRESS_SUCCESS) {
            fn = nullptr;
          }
          slots_[i] = fn;
        }
        break;
      }
      case Resolution::Symbol:
      case Resolution::SymbolPerThreadVariants: {
        // cudart exports the per-thread default stream variants as <symbol>_ptds / _ptsz.
        const bool per_thread =
            resolution_ == Resolution::SymbolPerThreadVariants && env_flag("CUBIND_PER_THREAD_DEFAULT_STREAM");
        for (int i = 0; i < count_; ++i) {
          if (per_thread && entries_[i].per_thread) {
            const std::string symbol = entries_[i].symbol;
            void* fn = find_symbol(lib.handle, (symbol + "_ptds").c_str());
            slots_[i] = fn != nullptr ? fn : find_symbol(lib.handle, (symbol + "_ptsz").c_str());
          } else {
            slots_[i] = find_symbol(lib.handle, entries_[i].symbol);
            if (slots_[i] == nullptr) slots_[i] = find_older_symbol(lib.handle, entries_[i]);
          }
        }
        break;
      }
    }
    state_.store(kLoaded, std::memory_order_release);
  } catch (const std::exception& e) {
    error_ = e.what();
    state_.store(kFailed, std::memory_order_release);
  }
}

void LibraryTable::missing(int index) const {
  const EntryPoint& e = entries_[index];
  std::string message =
      std::string(e.name) + " is not available in " + spec_.display_name + " loaded from " + outcome_->path;
  if (resolution_ == Resolution::ProcAddress && outcome_->driver_version != 0) {
    message += " (driver API " + cuda_version_string(outcome_->driver_version) + ")";
  }
  const bool driver_new_enough = resolution_ == Resolution::ProcAddress && outcome_->driver_version != 0 &&
                                 e.version != 0 && outcome_->driver_version >= e.version;
  if (driver_new_enough) {
    // The version is right, so this build of the driver leaves the function out.
    message += std::string(": the driver is new enough (it came in CUDA ") + (*e.introduced ? e.introduced : "?") +
               ") but does not provide it; some driver installations leave out optional parts, such as "
               "the EGL, OpenGL and VDPAU interop";
  } else if (*e.introduced != '\0') {
    message += std::string(": it was introduced in CUDA ") + e.introduced;
  } else {
    message += ": the library is older than the CUDA " + cuda_version_string(header_version_) +
               " headers cubind was generated from";
  }
  if (resolution_ != Resolution::ProcAddress) {
    // The file behind the soname names the library's release (libnvrtc.so.13.0.88).
    if (char* real = realpath(outcome_->path.c_str(), nullptr)) {
      if (outcome_->path != real) message += std::string(" (the library loaded is ") + real + ")";
      std::free(real);
    }
    message += "; install a newer " + std::string(spec_.display_name) + " or point " +
               (spec_.env_override != nullptr ? spec_.env_override : "the search") + " at one";
  }
  if (resolution_ == Resolution::ProcAddress && !driver_new_enough) {
    message += "; install a newer NVIDIA driver";
  } else if (resolution_ == Resolution::SymbolPerThreadVariants && e.per_thread &&
             env_flag("CUBIND_PER_THREAD_DEFAULT_STREAM")) {
    message += " (looked for its per-thread default stream variant)";
  }
  throw LoaderError(message);
}

}  // namespace detail
}  // namespace cubind

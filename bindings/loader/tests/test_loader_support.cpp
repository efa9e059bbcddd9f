#include "cubind/detail/loader_support.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>

namespace {

using cubind::LoaderError;
using cubind::detail::LibrarySpec;
using cubind::detail::load_library;

const std::string kToolkitLibDir = CUBIND_TEST_CUDA_LIBRARY_DIR;
const std::string kRealNvrtc = kToolkitLibDir + "/libnvrtc.so.13";
constexpr const char* kTestOverride = "CUBIND_TEST_LOADER_LIBRARY";
constexpr const char* kMissingSoname = "libcubind_does_not_exist.so.7";

// Sets or unsets one environment variable for the scope, so that tests run in one
// process (plain ./cubind_cpu_tests rather than ctest) do not leak settings.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) previous_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (previous_) {
      setenv(name_.c_str(), previous_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

// A temporary directory holding <dir>/<subdir>/<name> as a symlink to a real file.
class ScopedLibraryLink {
 public:
  ScopedLibraryLink(const std::string& subdir, const std::string& name, const std::string& target) {
    char pattern[] = "/tmp/cubind_loader_test_XXXXXX";
    root_ = mkdtemp(pattern);
    subdir_ = root_ + "/" + subdir;
    link_ = subdir_ + "/" + name;
    EXPECT_EQ(mkdir(subdir_.c_str(), 0700), 0);
    EXPECT_EQ(symlink(target.c_str(), link_.c_str()), 0);
  }
  ~ScopedLibraryLink() {
    unlink(link_.c_str());
    rmdir(subdir_.c_str());
    rmdir(root_.c_str());
  }
  const std::string& root() const { return root_; }
  const std::string& link() const { return link_; }

 private:
  std::string root_, subdir_, link_;
};

constexpr const char* kWheelDirs[] = {"nvidia/cu13/lib"};

LibrarySpec spec_for(const char* soname, bool system_loader_only = false) {
  return LibrarySpec{"Test library", soname, kTestOverride, kWheelDirs, 1, system_loader_only};
}

// The driver: the system loader alone, no override.
LibrarySpec driver_like_spec(const char* soname) {
  return LibrarySpec{"Test library", soname, nullptr, nullptr, 0, true};
}

std::string load_error(const LibrarySpec& spec) {
  try {
    load_library(spec);
  } catch (const LoaderError& error) {
    return error.what();
  }
  ADD_FAILURE() << "load_library(" << spec.soname << ") did not throw";
  return {};
}

int count_attempts(const std::string& message) {
  int count = 0;
  for (auto pos = message.find("\n  - "); pos != std::string::npos;
       pos = message.find("\n  - ", pos + 1)) {
    ++count;
  }
  return count;
}

TEST(LoadLibrary, EnvOverrideToRealLibraryLoadsThatPath) {
  ScopedEnv override_path(kTestOverride, kRealNvrtc.c_str());
  const auto loaded = load_library(spec_for("libnvrtc.so.13"));
  EXPECT_NE(loaded.handle, nullptr);
  EXPECT_EQ(loaded.path, kRealNvrtc);
  EXPECT_NE(cubind::detail::find_symbol(loaded.handle, "nvrtcVersion"), nullptr);
  EXPECT_EQ(cubind::detail::find_symbol(loaded.handle, "cubindNoSuchFunction"), nullptr);
}

TEST(LoadLibrary, EnvOverrideToMissingPathThrowsWithoutFallback) {
  // NVRTC is installed, so any fallback would have succeeded.
  const std::string missing = "/nonexistent/cubind/libnvrtc.so.13";
  ScopedEnv override_path(kTestOverride, missing.c_str());
  const std::string message = load_error(spec_for("libnvrtc.so.13"));
  EXPECT_NE(message.find(std::string(kTestOverride) + "=" + missing + ": no such file"),
            std::string::npos)
      << message;
  EXPECT_EQ(count_attempts(message), 1) << message;
  EXPECT_EQ(message.find("system loader"), std::string::npos) << message;
  EXPECT_NE(message.find("no other place was searched"), std::string::npos) << message;
}

TEST(LoadLibrary, LibraryOfAnotherMajorVersionIsRefusedBySoname) {
  ScopedEnv override_path(kTestOverride, CUBIND_TEST_NVRTC12);
  const std::string message = load_error(spec_for("libnvrtc.so.13"));
  EXPECT_NE(message.find(std::string(kTestOverride) + "=" + CUBIND_TEST_NVRTC12 +
                         ": its soname is libnvrtc.so.12, not libnvrtc.so.13"),
            std::string::npos)
      << message;
  EXPECT_EQ(count_attempts(message), 1) << message;
  EXPECT_NE(message.find("no other place was searched"), std::string::npos) << message;
  // Refused, so not left open either.
  EXPECT_EQ(dlopen(CUBIND_TEST_NVRTC12, RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(LoadLibrary, LibraryOfAnotherMajorVersionInADirectoryIsSkipped) {
  // Named as the right version in $CUDA_HOME/lib64, but its soname says otherwise:
  // the search goes on to the next place.
  ScopedLibraryLink home("lib64", "libnvrtc.so.13", CUBIND_TEST_NVRTC12);
  ScopedEnv no_override(kTestOverride, nullptr);
  ScopedEnv no_conda("CONDA_PREFIX", nullptr);
  ScopedEnv cuda_home("CUDA_HOME", home.root().c_str());
  ScopedEnv no_path("CUDA_PATH", nullptr);
  try {
    const auto loaded = load_library(spec_for("libnvrtc.so.13"));
    EXPECT_NE(loaded.path, home.link());
    EXPECT_EQ(cubind::detail::find_symbol(loaded.handle, "nvrtcGetCUBIN") != nullptr, true) << loaded.path;
  } catch (const LoaderError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(home.link() + ": its soname is libnvrtc.so.12"), std::string::npos) << message;
  }
}

TEST(LoadLibrary, LibraryAlreadyLoadedIsFoundWithoutSearching) {
  {
    ScopedEnv override_path(kTestOverride, kRealNvrtc.c_str());
    load_library(spec_for("libnvrtc.so.13"));
  }
  // Nothing below step 2 could find it: no toolkit variables, and the override is gone.
  ScopedEnv no_override(kTestOverride, nullptr);
  ScopedEnv no_conda("CONDA_PREFIX", nullptr);
  ScopedEnv no_home("CUDA_HOME", nullptr);
  ScopedEnv no_path("CUDA_PATH", nullptr);
  const auto loaded = load_library(spec_for("libnvrtc.so.13"));
  EXPECT_NE(loaded.handle, nullptr);
  EXPECT_EQ(loaded.path, kRealNvrtc);
}

TEST(LoadLibrary, CudaHomeIsSearchedBeforeUsrLocalCuda) {
  // nvJitLink, because no other test here loads it: a copy already loaded would win, as it
  // does when --gtest_repeat runs this test a second time in the same process.
  if (void* loaded = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(loaded);
    GTEST_SKIP() << "libnvJitLink.so.13 is already loaded in this process";
  }
  ScopedLibraryLink home("lib64", "libnvJitLink.so.13", kToolkitLibDir + "/libnvJitLink.so.13");
  ScopedEnv no_override(kTestOverride, nullptr);
  ScopedEnv no_conda("CONDA_PREFIX", nullptr);
  ScopedEnv cuda_home("CUDA_HOME", home.root().c_str());
  const auto loaded = load_library(spec_for("libnvJitLink.so.13"));
  EXPECT_NE(loaded.handle, nullptr);
  EXPECT_EQ(loaded.path, home.link());
}

TEST(LoadLibrary, MissingLibraryListsEveryStepInOrder) {
  ScopedEnv no_override(kTestOverride, nullptr);
  ScopedEnv conda("CONDA_PREFIX", "/nonexistent/conda");
  ScopedEnv cuda_home("CUDA_HOME", "/nonexistent/cuda_home");
  ScopedEnv no_path("CUDA_PATH", nullptr);
  const std::string message = load_error(spec_for(kMissingSoname));
  const std::string so = kMissingSoname;
  const std::string expected_in_order[] = {
      "cubind could not load Test library (" + so + "). Tried:\n",
      std::string("  - ") + kTestOverride + ": not set\n",
      "  - already loaded in this process: not found\n",
      "  - NVIDIA wheels: ",
      "  - /nonexistent/conda/lib/" + so + ": no such file\n",
      "  - /nonexistent/cuda_home/lib64/" + so + ": no such file\n",
      "  - /nonexistent/cuda_home/lib/" + so + ": no such file\n",
      "  - $CUDA_PATH: not set\n",
      "  - /usr/local/cuda/lib64/" + so + ": no such file\n",
      "  - system loader (" + so + "): ",
      std::string("Set ") + kTestOverride + " to the full path of " + so +
          ", or install the CUDA toolkit or the NVIDIA wheel.",
  };
  std::string::size_type from = 0;
  for (const std::string& expected : expected_in_order) {
    const auto at = message.find(expected, from);
    ASSERT_NE(at, std::string::npos) << "missing or out of order: " << expected << "\nin:\n"
                                     << message;
    from = at + expected.size();
  }
  EXPECT_EQ(count_attempts(message), 9) << message;
}

// libNVVM's descriptor names its own toolkit folders: each root's nvvm/lib64 first,
// then lib64, and /usr/local/cuda's the same; never the default lib64-then-lib alone.
TEST(LoadLibrary, ToolkitSubdirsReplaceTheDefaultFolders) {
  ScopedEnv no_override(kTestOverride, nullptr);
  ScopedEnv no_conda("CONDA_PREFIX", nullptr);
  ScopedEnv cuda_home("CUDA_HOME", "/nonexistent/cuda_home");
  ScopedEnv no_path("CUDA_PATH", nullptr);
  static const char* const kToolkitDirs[] = {"nvvm/lib64", "lib64"};
  LibrarySpec spec = spec_for(kMissingSoname);
  spec.toolkit_subdirs = kToolkitDirs;
  spec.toolkit_count = 2;
  const std::string message = load_error(spec);
  const std::string so = kMissingSoname;
  const std::string expected_in_order[] = {
      "  - /nonexistent/cuda_home/nvvm/lib64/" + so + ": no such file\n",
      "  - /nonexistent/cuda_home/lib64/" + so + ": no such file\n",
      "  - $CUDA_PATH: not set\n",
      "  - /usr/local/cuda/nvvm/lib64/" + so + ": no such file\n",
      "  - /usr/local/cuda/lib64/" + so + ": no such file\n",
      "  - system loader (" + so + "): ",
  };
  std::string::size_type from = 0;
  for (const std::string& expected : expected_in_order) {
    const auto at = message.find(expected, from);
    ASSERT_NE(at, std::string::npos) << "missing or out of order: " << expected << "\nin:\n" << message;
    from = at + expected.size();
  }
  EXPECT_EQ(message.find("/nonexistent/cuda_home/lib/"), std::string::npos) << message;
}

TEST(LoadLibrary, SystemLoaderOnlyTriesNothingElse) {
  // Every other place is set up to succeed or to be listed, and must be ignored.
  ScopedEnv override_path(kTestOverride, kRealNvrtc.c_str());
  ScopedEnv cuda_home("CUDA_HOME", "/usr/local/cuda");
  const std::string message = load_error(driver_like_spec(kMissingSoname));
  EXPECT_EQ(count_attempts(message), 1) << message;
  EXPECT_NE(message.find(std::string("  - system loader (") + kMissingSoname + "): "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("The NVIDIA driver is not installed"), std::string::npos) << message;
  EXPECT_EQ(message.find(kTestOverride), std::string::npos) << message;
}

// A driver library with an override (NVML): the override alone where set,
// else the system loader alone.
TEST(LoadLibrary, SystemLoaderOnlyWithAnOverrideTriesItAlone) {
  {
    ScopedEnv override_path(kTestOverride, "/nonexistent/libtest.so.1");
    const std::string message = load_error(spec_for("libm.so.6", true));
    EXPECT_EQ(count_attempts(message), 1) << message;
    EXPECT_NE(message.find(std::string(kTestOverride) + "=/nonexistent/libtest.so.1: no such file"), std::string::npos)
        << message;
    EXPECT_NE(message.find("is set, so no other place was searched"), std::string::npos) << message;
  }
  ScopedEnv unset(kTestOverride, nullptr);
  const std::string message = load_error(spec_for(kMissingSoname, true));
  EXPECT_EQ(count_attempts(message), 2) << message;
  EXPECT_NE(message.find(std::string("  - ") + kTestOverride + ": not set"), std::string::npos) << message;
  EXPECT_NE(message.find("The NVIDIA driver is not installed"), std::string::npos) << message;
}

TEST(LoadLibrary, SystemLoaderReportsTheResolvedPath) {
  const auto loaded = load_library(spec_for("libm.so.6", true));
  EXPECT_NE(loaded.handle, nullptr);
  ASSERT_FALSE(loaded.path.empty());
  EXPECT_EQ(loaded.path.front(), '/') << loaded.path;
  EXPECT_NE(loaded.path.find("libm.so.6"), std::string::npos) << loaded.path;
}

TEST(FindSymbol, NullHandleGivesNull) {
  EXPECT_EQ(cubind::detail::find_symbol(nullptr, "nvrtcVersion"), nullptr);
}

TEST(EnvFlag, AcceptsOneTrueYesOn) {
  for (const char* value : {"1", "true", "yes", "on", "TRUE", "On"}) {
    ScopedEnv flag("CUBIND_TEST_FLAG", value);
    EXPECT_TRUE(cubind::detail::env_flag("CUBIND_TEST_FLAG")) << value;
  }
}

TEST(EnvFlag, RejectsEverythingElse) {
  for (const char* value : {"0", "", "false", "no", "off", "2", "yes please"}) {
    ScopedEnv flag("CUBIND_TEST_FLAG", value);
    EXPECT_FALSE(cubind::detail::env_flag("CUBIND_TEST_FLAG")) << '"' << value << '"';
  }
  ScopedEnv unset("CUBIND_TEST_FLAG", nullptr);
  EXPECT_FALSE(cubind::detail::env_flag("CUBIND_TEST_FLAG"));
}

TEST(CudaVersionString, FormatsMajorDotMinor) {
  EXPECT_EQ(cubind::detail::cuda_version_string(12050), "12.5");
  EXPECT_EQ(cubind::detail::cuda_version_string(13000), "13.0");
  EXPECT_EQ(cubind::detail::cuda_version_string(11080), "11.8");
  EXPECT_EQ(cubind::detail::cuda_version_string(13010), "13.1");
}

TEST(LiveHandles, RecordsWhatWasAddedUntilRemoved) {
  static cubind::detail::LiveHandles live;  // as the generated wrappers hold it
  int a = 0, b = 0;
  EXPECT_FALSE(live.contains(&a));
  live.add(&a);
  live.add(nullptr);
  EXPECT_TRUE(live.contains(&a));
  EXPECT_FALSE(live.contains(&b));
  EXPECT_FALSE(live.contains(nullptr));
  EXPECT_TRUE(live.remove(&a));
  EXPECT_FALSE(live.remove(&a));
  EXPECT_FALSE(live.contains(&a));
}

}  // namespace

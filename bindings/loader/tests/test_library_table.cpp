// LibraryTable: the table the generated loader fills on first use.
#include <cubind/detail/loader_support.hpp>
#include <cubind/raw/nvrtc.hpp>
#include <dlfcn.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using cubind::LoaderError;
using cubind::detail::EntryPoint;
using cubind::detail::LibraryTable;
using cubind::detail::Resolution;
using cubind::detail::LibrarySpec;

const std::string kNvrtc = std::string(CUBIND_TEST_CUDA_LIBRARY_DIR) + "/libnvrtc.so.13";

constexpr EntryPoint kEntries[] = {
    {"nvrtcVersion", "nvrtcVersion", "", 0, false},
    {"cubindNoSuchFunction", "cubindNoSuchFunction", "12.8", 0, false},
    {"cubindNoSuchEither", "cubindNoSuchEither", "", 0, false},
};

// Each test names its own variable, so tables never share a loaded state.
LibrarySpec spec(const char* env) { return LibrarySpec{"TEST", "libcubind_test_none.so.1", env, nullptr, 0, false}; }

// A table for one test, kept for the rest of the process as the generated tables are:
// a table never frees what its load wrote, so that calls made during exit still work,
// and one destroyed early would leave that behind unreachable.
LibraryTable& new_table(const char* env) {
  struct Kept {
    void* slots[3] = {};
    LibraryTable table;
    explicit Kept(const char* env) : table(spec(env), Resolution::Symbol, kEntries, 3, slots, 13000) {}
  };
  static auto* kept = new std::vector<Kept*>();  // never destroyed, like the tables in it
  kept->push_back(new Kept(env));
  return kept->back()->table;
}

TEST(LibraryTable, ResolvesPresentEntriesAndReportsWhereTheLibraryCameFrom) {
  setenv("CUBIND_TABLE_TEST_A", kNvrtc.c_str(), 1);
  LibraryTable& table = new_table("CUBIND_TABLE_TEST_A");
  EXPECT_FALSE(table.status().attempted);
  using Version = int (*)(int*, int*);
  int major = 0, minor = 0;
  EXPECT_EQ(reinterpret_cast<Version>(table.entry(0))(&major, &minor), 0);
  EXPECT_EQ(major, 13);
  const auto status = table.status();
  EXPECT_TRUE(status.attempted);
  EXPECT_TRUE(status.loaded);
  EXPECT_EQ(status.path, kNvrtc);
  unsetenv("CUBIND_TABLE_TEST_A");
}

TEST(LibraryTable, MissingEntryNamesFunctionLibraryAndVersion) {
  setenv("CUBIND_TABLE_TEST_B", kNvrtc.c_str(), 1);
  LibraryTable& table = new_table("CUBIND_TABLE_TEST_B");
  try {
    table.entry(1);
    FAIL() << "expected LoaderError";
  } catch (const LoaderError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cubindNoSuchFunction is not available in TEST loaded from " + kNvrtc), std::string::npos)
        << message;
    EXPECT_NE(message.find("introduced in CUDA 12.8"), std::string::npos) << message;
  }
  try {
    table.entry(2);
    FAIL() << "expected LoaderError";
  } catch (const LoaderError& e) {
    EXPECT_NE(std::string(e.what()).find("older than the CUDA 13.0 headers"), std::string::npos) << e.what();
  }
  unsetenv("CUBIND_TABLE_TEST_B");
}

TEST(LibraryTable, ALibraryThatCannotBeLoadedFailsEveryCallWithTheSameReason) {
  setenv("CUBIND_TABLE_TEST_C", "/nonexistent/libtest.so", 1);
  LibraryTable& table = new_table("CUBIND_TABLE_TEST_C");
  std::string first;
  try {
    table.entry(0);
    FAIL() << "expected LoaderError";
  } catch (const LoaderError& e) {
    first = e.what();
  }
  EXPECT_NE(first.find("/nonexistent/libtest.so"), std::string::npos) << first;
  EXPECT_THROW(table.ensure_loaded(), LoaderError);
  const auto status = table.status();
  EXPECT_TRUE(status.attempted);
  EXPECT_FALSE(status.loaded);
  EXPECT_EQ(status.error, first);
  unsetenv("CUBIND_TABLE_TEST_C");
}

// The generated loader's <library>_entry_point: the loaded library's own
// function, which a caller may call directly (cubind.core's launch does).
TEST(GeneratedLoader, EntryPointIsTheLoadedLibrarysOwnFunction) {
  setenv("CUBIND_NVRTC_LIBRARY", kNvrtc.c_str(), 0);
  void* version = cubind::raw::nvrtc_entry_point("nvrtcVersion");
  ASSERT_NE(version, nullptr);
  EXPECT_NE(version, reinterpret_cast<void*>(&cubind::raw::nvrtcVersion));
  Dl_info where{};
  ASSERT_NE(dladdr(version, &where), 0);
  EXPECT_NE(std::string(where.dli_fname).find("libnvrtc.so"), std::string::npos) << where.dli_fname;
  int major = 0, minor = 0, layer_major = -1, layer_minor = -1;
  ASSERT_EQ(reinterpret_cast<nvrtcResult (*)(int*, int*)>(version)(&major, &minor), NVRTC_SUCCESS);
  ASSERT_EQ(cubind::raw::nvrtcVersion(&layer_major, &layer_minor), NVRTC_SUCCESS);
  EXPECT_EQ(major, layer_major);
  EXPECT_EQ(minor, layer_minor);
  EXPECT_EQ(cubind::raw::nvrtc_entry_point("nvrtcNoSuchFunction"), nullptr);
  EXPECT_EQ(cubind::raw::nvrtc_entry_point(""), nullptr);
}

}  // namespace

// LibraryTable: the table the generated loader fills on first use.
#include <cubind/detail/loader_support.hpp>

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

}  // namespace

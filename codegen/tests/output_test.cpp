// write_files: all or nothing, and only what changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "codegen/output.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using codegen::GeneratedFile;
using codegen_test::read_text;
using ::testing::IsEmpty;

class WriteFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("cubind_write_files_" + std::to_string(rd()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& relative, const std::string& content) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::binary) << content;
  }

  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(root_)) {
      if (entry.path().string().find(".cubind-tmp") != std::string::npos) out.push_back(entry.path().string());
    }
    return out;
  }

  fs::path root_;
};

TEST_F(WriteFiles, WritesNewFilesCreatingDirectories) {
  const std::vector<GeneratedFile> files = {{"a.txt", "alpha\n"}, {"deep/er/b.txt", "beta\n"}};
  EXPECT_EQ(codegen::write_files(root_.string(), files), 2u);
  EXPECT_EQ(read_text(root_ / "a.txt"), "alpha\n");
  EXPECT_EQ(read_text(root_ / "deep/er/b.txt"), "beta\n");
  EXPECT_THAT(leftovers(), IsEmpty());
}

TEST_F(WriteFiles, CreatesAMissingRoot) {
  const fs::path root = root_ / "not" / "yet";
  EXPECT_EQ(codegen::write_files(root.string(), {{"a.txt", "alpha"}}), 1u);
  EXPECT_EQ(read_text(root / "a.txt"), "alpha");
}

TEST_F(WriteFiles, ContentIsWrittenByteForByte) {
  const std::string binary("line\r\nnul\0end", 13);
  codegen::write_files(root_.string(), {{"bin.dat", binary}});
  EXPECT_EQ(read_text(root_ / "bin.dat"), binary);
}

TEST_F(WriteFiles, UnchangedFilesAreNotTouched) {
  put("same.txt", "same\n");
  put("changed.txt", "old\n");
  const auto past = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(root_ / "same.txt", past);
  fs::last_write_time(root_ / "changed.txt", past);

  const std::vector<GeneratedFile> files = {{"same.txt", "same\n"}, {"changed.txt", "new\n"}, {"added.txt", "+\n"}};
  EXPECT_EQ(codegen::write_files(root_.string(), files), 2u);
  EXPECT_EQ(fs::last_write_time(root_ / "same.txt"), past);
  EXPECT_NE(fs::last_write_time(root_ / "changed.txt"), past);
  EXPECT_EQ(read_text(root_ / "changed.txt"), "new\n");

  EXPECT_EQ(codegen::write_files(root_.string(), files), 0u);
}

TEST_F(WriteFiles, AFileThatDiffersOnlyInLengthIsRewritten) {
  put("a.txt", "abc\n\n");
  EXPECT_EQ(codegen::write_files(root_.string(), {{"a.txt", "abc\n"}}), 1u);
  EXPECT_EQ(read_text(root_ / "a.txt"), "abc\n");
}

// The target's parent is a regular file, so it cannot be written: whichever
// order the files come in, nothing else may change.
class WriteFilesFailure : public WriteFiles, public ::testing::WithParamInterface<bool> {};

TEST_P(WriteFilesFailure, UnwritableTargetLeavesEveryOtherTargetUntouched) {
  put("kept.txt", "previous\n");
  put("blocker", "a regular file\n");
  std::vector<GeneratedFile> files = {{"kept.txt", "next\n"}, {"fresh/new.txt", "new\n"}};
  const GeneratedFile bad{"blocker/inside.txt", "cannot be written\n"};
  if (GetParam()) {
    files.push_back(bad);
  } else {
    files.insert(files.begin(), bad);
  }
  EXPECT_THROW(codegen::write_files(root_.string(), files), std::exception);
  EXPECT_EQ(read_text(root_ / "kept.txt"), "previous\n");
  EXPECT_EQ(read_text(root_ / "blocker"), "a regular file\n");
  EXPECT_FALSE(fs::exists(root_ / "fresh/new.txt"));
  EXPECT_THAT(leftovers(), IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(BadTargetFirstOrLast, WriteFilesFailure, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Last") : std::string("First");
                         });

// A target that is an existing directory passes every check before the
// renames and only fails at its own rename, after earlier files were moved.
TEST_F(WriteFiles, TargetThatIsADirectoryLeavesEveryOtherTargetUntouched) {
  put("kept.txt", "previous\n");
  put("dir/child.txt", "child\n");
  const std::vector<GeneratedFile> files = {{"kept.txt", "next\n"}, {"dir", "a file where a directory is\n"}};
  EXPECT_THROW(codegen::write_files(root_.string(), files), std::exception);
  EXPECT_EQ(read_text(root_ / "kept.txt"), "previous\n");
  EXPECT_EQ(read_text(root_ / "dir/child.txt"), "child\n");
  EXPECT_THAT(leftovers(), IsEmpty());
}

}  // namespace

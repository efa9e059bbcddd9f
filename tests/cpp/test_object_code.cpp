// ObjectCode construction, kind inference and the errors raised before the
// driver is involved; loading and get_kernel are in the GPU tests.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "cubind/object_code.hpp"

namespace {

using cubind::CodeKind;
using cubind::ObjectCode;

// A file holding `contents` for the test's lifetime.
class ScopedFile {
 public:
  ScopedFile(const std::string& extension, const std::string& contents) {
    std::string pattern = "/tmp/cubind_object_code_test_XXXXXX" + extension;
    const int fd = mkstemps(pattern.data(), static_cast<int>(extension.size()));
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = pattern;
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~ScopedFile() { unlink(path_.c_str()); }
  ScopedFile(const ScopedFile&) = delete;
  ScopedFile& operator=(const ScopedFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CodeKindFromPath, EveryKnownExtensionMapsToItsKind) {
  EXPECT_EQ(cubind::code_kind_from_path("k.cubin"), CodeKind::cubin);
  EXPECT_EQ(cubind::code_kind_from_path("/a/b/k.ptx"), CodeKind::ptx);
  EXPECT_EQ(cubind::code_kind_from_path("k.ltoir"), CodeKind::ltoir);
  EXPECT_EQ(cubind::code_kind_from_path("k.fatbin"), CodeKind::fatbin);
  EXPECT_EQ(cubind::code_kind_from_path("k.o"), CodeKind::object);
  EXPECT_EQ(cubind::code_kind_from_path("libk.a"), CodeKind::library);
}

TEST(CodeKindFromPath, UnknownExtensionIsRejectedListingTheKnownOnes) {
  try {
    cubind::code_kind_from_path("kernel.bin");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "cannot tell the kind of code in 'kernel.bin' from its extension (known: .cubin, .ptx, .ltoir, "
                 ".fatbin, .o, .a); give the CodeKind explicitly");
  }
}

TEST(CodeKindName, NamesMatchTheExtensionsWords) {
  EXPECT_STREQ(cubind::code_kind_name(CodeKind::cubin), "cubin");
  EXPECT_STREQ(cubind::code_kind_name(CodeKind::ptx), "ptx");
  EXPECT_STREQ(cubind::code_kind_name(CodeKind::ltoir), "ltoir");
  EXPECT_STREQ(cubind::code_kind_name(CodeKind::fatbin), "fatbin");
  EXPECT_STREQ(cubind::code_kind_name(CodeKind::object), "object");
  EXPECT_STREQ(cubind::code_kind_name(CodeKind::library), "library");
}

TEST(ObjectCodeFromBytes, KeepsKindBytesAndName) {
  const ObjectCode code = ObjectCode::from_bytes(CodeKind::ptx, {'a', 'b'}, "k.ptx");
  EXPECT_EQ(code.kind(), CodeKind::ptx);
  EXPECT_EQ(code.bytes(), (std::vector<char>{'a', 'b'}));
  EXPECT_EQ(code.name(), "k.ptx");
}

TEST(ObjectCodeFromBytes, UnnamedCodeIsNamedAfterItsKind) {
  EXPECT_EQ(ObjectCode::from_bytes(CodeKind::cubin, {}).name(), "<cubin bytes>");
}

TEST(ObjectCodeFromFile, ReadsTheWholeFileAndInfersTheKind) {
  const std::string contents(
      "\x7f"
      "ELF\0\1\2 binary",
      14);
  const ScopedFile file(".cubin", contents);
  const ObjectCode code = ObjectCode::from_file(file.path());
  EXPECT_EQ(code.kind(), CodeKind::cubin);
  EXPECT_EQ(std::string(code.bytes().begin(), code.bytes().end()), contents);
  EXPECT_EQ(code.name(), file.path());
}

TEST(ObjectCodeFromFile, AGivenKindOverridesTheExtension) {
  const ScopedFile file(".bin", ".version 8.0");
  EXPECT_EQ(ObjectCode::from_file(file.path(), CodeKind::ptx).kind(), CodeKind::ptx);
  EXPECT_THROW(ObjectCode::from_file(file.path()), std::invalid_argument);
}

TEST(ObjectCodeFromFile, MissingFileIsASystemErrorNamingThePath) {
  try {
    ObjectCode::from_file("/nonexistent/cubind/kernel.cubin");
    FAIL() << "no exception";
  } catch (const std::system_error& error) {
    EXPECT_EQ(error.code(), std::errc::no_such_file_or_directory);
    EXPECT_NE(std::string(error.what()).find("cannot open '/nonexistent/cubind/kernel.cubin'"), std::string::npos);
  }
}

TEST(ObjectCodeGetKernel, CodeTheDriverCannotLoadAsksForALinkFirst) {
  for (CodeKind kind : {CodeKind::ltoir, CodeKind::object, CodeKind::library}) {
    const ObjectCode code = ObjectCode::from_bytes(kind, {'x'}, "input");
    try {
      code.get_kernel("k");
      FAIL() << "no exception";
    } catch (const std::logic_error& error) {
      EXPECT_NE(std::string(error.what()).find("link it to a cubin first"), std::string::npos) << error.what();
    }
  }
}

TEST(ObjectCodeMove, MovedFromObjectCodeThrowsLogicErrorNamingTheMethod) {
  ObjectCode code = ObjectCode::from_bytes(CodeKind::ptx, {'x'}, "k.ptx");
  ObjectCode moved = std::move(code);
  EXPECT_EQ(moved.name(), "k.ptx");
  try {
    code.get_kernel("k");  // NOLINT(bugprone-use-after-move): the point of the test
    FAIL() << "no exception";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(),
                 "cubind::ObjectCode::get_kernel: this ObjectCode is null (moved from, or default-constructed)");
  }
  EXPECT_THROW(code.kind(), std::logic_error);
  EXPECT_THROW(code.bytes(), std::logic_error);
  EXPECT_THROW(code.handle(), std::logic_error);
  EXPECT_THROW(code.kernel_names(), std::logic_error);

  code = std::move(moved);
  EXPECT_EQ(code.name(), "k.ptx");
  EXPECT_THROW(ObjectCode{}.name(), std::logic_error);
}

}  // namespace

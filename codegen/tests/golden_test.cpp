// Golden tests: small headers under golden/<case>/include go through the whole
// generator (parse, classify, emit) and must match golden/<case>/expected byte
// for byte. CUBIND_UPDATE_GOLDEN=1 rewrites the expectations instead; review
// the difference before keeping it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "codegen/annotations.hpp"
#include "codegen/emit_python.hpp"
#include "codegen/emitters.hpp"
#include "codegen/frontend.hpp"
#include "codegen/ir_json.hpp"
#include "codegen/output.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::IsEmpty;

bool updating() {
  const char* v = std::getenv("CUBIND_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// What `generate` writes for one library, plus the IR so a change in what the
// front end sees is reviewed as data.
std::vector<codegen::GeneratedFile> generate(const std::string& name, std::vector<std::string>& problems) {
  const fs::path dir = fs::path(CUBIND_CODEGEN_GOLDEN_DIR) / name;
  // The annotation file describes the library (its `library:` block), as in `generate`.
  const codegen::Annotations annotations = codegen::load_annotations((dir / "annotations.yaml").string());
  codegen::Library lib =
      codegen::parse_library(annotations.library, codegen_test::frontend_options({(dir / "include").string()}));
  // nvrtc.h states no version: `generate` gives every library the one cuda.h
  // states, parsed in the same run.
  if (lib.cuda_version == 0) lib.cuda_version = 13000;
  problems = codegen::classify(lib, annotations);
  codegen::EmitOptions options;
  // Fixed, so a release of the generator does not rewrite every expectation.
  options.generator_version = "golden";
  std::vector<codegen::GeneratedFile> files = {
      codegen::emit_pxd(lib, options), codegen::emit_loader_header(lib, options),
      codegen::emit_loader_source(lib, options), {"ir.json", codegen::to_json(lib).dump(1) + "\n"}};
  // The Python layer only for nvrtc: the driver case's cuda.h declares structs it
  // never defines (CUctxCreateParams), and the Python layer refuses a function
  // whose argument has no Python form.
  if (name == "nvrtc") {
    for (auto& f : codegen::emit_python_module(lib, options)) files.push_back(std::move(f));
  }
  return files;
}

// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string el, al;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, el));
    const bool more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) return "they differ only in the final newline";
    if (!more_e || !more_a || el != al) {
      return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? el : "(end of file)") +
             "\n  actual:   " + (more_a ? al : "(end of file)");
    }
  }
}

std::set<std::string> files_under(const fs::path& root) {
  std::set<std::string> out;
  if (!fs::exists(root)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) out.insert(fs::relative(entry.path(), root).generic_string());
  }
  return out;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, OutputMatchesTheExpectedFiles) {
  const fs::path expected_dir = fs::path(CUBIND_CODEGEN_GOLDEN_DIR) / GetParam() / "expected";
  std::vector<std::string> problems;
  const auto files = generate(GetParam(), problems);
  EXPECT_THAT(problems, IsEmpty()) << "the golden annotations must classify every parameter";

  std::set<std::string> stale = files_under(expected_dir);
  for (const auto& f : files) stale.erase(f.path);

  if (updating()) {
    codegen::write_files(expected_dir.string(), files);
    for (const auto& path : stale) fs::remove(expected_dir / path);
    GTEST_SKIP() << "CUBIND_UPDATE_GOLDEN is set: the expected files were rewritten, not compared";
  }
  for (const auto& f : files) {
    const fs::path path = expected_dir / f.path;
    ASSERT_TRUE(fs::exists(path)) << path << " is missing; run with CUBIND_UPDATE_GOLDEN=1";
    const std::string expected = codegen_test::read_text(path);
    EXPECT_TRUE(expected == f.content) << f.path << " differs from " << path << " at "
                                       << first_difference(expected, f.content)
                                       << "\n(CUBIND_UPDATE_GOLDEN=1 rewrites the expectations)";
  }
  EXPECT_THAT(stale, IsEmpty()) << "expected files the generator no longer writes";
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::Values("driver", "nvrtc"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace

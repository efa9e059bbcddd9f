// ProgramOptions rendering and NVRTC compiles through cubind::Program. NVRTC
// needs no GPU, so all of this runs on any machine with the toolkit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cubind/error.hpp"
#include "cubind/program.hpp"

namespace {

using cubind::CodeKind;
using cubind::CompileResult;
using cubind::Program;
using cubind::ProgramOptions;

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

std::string text_of(const std::vector<char>& bytes) { return std::string(bytes.begin(), bytes.end()); }

TEST(ProgramOptionsRender, DefaultOptionsRenderNothing) { EXPECT_TRUE(ProgramOptions{}.render().empty()); }

TEST(ProgramOptionsRender, EveryOptionRendersInFieldOrder) {
  ProgramOptions options;
  options.arch = "sm_90";
  options.cpp_standard = "c++17";
  options.defines = {{"WIDTH", "4"}, {"USE_FAST_PATH", std::nullopt}, {"EMPTY", ""}};
  options.include_paths = {"/opt/include", "include dir with spaces"};
  options.debug = true;
  options.line_info = true;
  options.relocatable_device_code = true;
  options.lto = true;
  options.fast_math = true;
  options.max_register_count = 64;
  options.extra = {"--extra-device-vectorization", "-Wno-deprecated-gpu-targets"};

  const std::vector<std::string> expected = {
      "--gpu-architecture=sm_90",
      "--std=c++17",
      "--define-macro=WIDTH=4",
      "--define-macro=USE_FAST_PATH",
      "--define-macro=EMPTY=",
      "--include-path=/opt/include",
      "--include-path=include dir with spaces",
      "--device-debug",
      "--generate-line-info",
      "--relocatable-device-code=true",
      "--dlink-time-opt",
      "--use_fast_math",
      "--maxrregcount=64",
      "--extra-device-vectorization",
      "-Wno-deprecated-gpu-targets",
  };
  EXPECT_EQ(options.render(), expected);
}

TEST(ProgramOptionsRender, VirtualAndSuffixedArchitecturesAreAccepted) {
  for (const char* arch : {"compute_90", "sm_90a", "compute_100f", "sm_120"}) {
    ProgramOptions options;
    options.arch = arch;
    EXPECT_EQ(options.render(), std::vector<std::string>{std::string("--gpu-architecture=") + arch});
  }
}

TEST(ProgramOptionsRender, MalformedValuesAreRejectedNamingTheField) {
  ProgramOptions bad_arch;
  bad_arch.arch = "90";
  try {
    bad_arch.render();
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("ProgramOptions::arch is '90'"), std::string::npos) << error.what();
  }

  ProgramOptions bad_define;
  bad_define.defines = {{"N=3", std::nullopt}};
  EXPECT_THROW(bad_define.render(), std::invalid_argument);
  bad_define.defines = {{"", "3"}};
  EXPECT_THROW(bad_define.render(), std::invalid_argument);

  ProgramOptions bad_include;
  bad_include.include_paths = {""};
  EXPECT_THROW(bad_include.render(), std::invalid_argument);

  ProgramOptions bad_registers;
  bad_registers.max_register_count = 0;
  EXPECT_THROW(bad_registers.render(), std::invalid_argument);
}

// Every option string render() writes must be one NVRTC accepts.
TEST(ProgramCompile, NvrtcAcceptsEveryRenderedOption) {
  ProgramOptions options;
  options.arch = "compute_90";
  options.cpp_standard = "c++17";
  options.defines = {{"SCALE", "2.0f"}, {"UNUSED", std::nullopt}};
  options.include_paths = {"/tmp"};
  options.debug = true;
  options.line_info = true;
  options.relocatable_device_code = true;
  options.lto = true;
  options.fast_math = true;
  options.max_register_count = 32;
  Program program("extern \"C\" __global__ void k(float* p) { p[0] *= SCALE; }", "all_options.cu");
  const CompileResult result = program.compile(CodeKind::ltoir, options);
  EXPECT_TRUE(result.ok) << result.log;
}

class ProgramCompileForArch : public ::testing::TestWithParam<int> {};

TEST_P(ProgramCompileForArch, PtxTargetsTheArchitecture) {
  Program program(kSaxpy, "saxpy.cu");
  ProgramOptions options;
  options.arch = "compute_" + std::to_string(GetParam());
  const CompileResult result = program.compile(CodeKind::ptx, options);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.code.kind(), CodeKind::ptx);
  const std::string ptx = text_of(result.code.bytes());
  EXPECT_NE(ptx.find(".target sm_" + std::to_string(GetParam())), std::string::npos);
  EXPECT_NE(ptx.find(".entry saxpy"), std::string::npos);
}

TEST_P(ProgramCompileForArch, CubinIsAnElfImage) {
  Program program(kSaxpy, "saxpy.cu");
  ProgramOptions options;
  options.arch = "sm_" + std::to_string(GetParam());
  const CompileResult result = program.compile(CodeKind::cubin, options);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.code.kind(), CodeKind::cubin);
  ASSERT_GT(result.code.bytes().size(), 4u);
  EXPECT_EQ(text_of(result.code.bytes()).substr(0, 4),
            "\x7f"
            "ELF");
}

TEST_P(ProgramCompileForArch, LtoIrTargetImpliesDlto) {
  Program program(kSaxpy, "saxpy.cu");
  ProgramOptions options;
  options.arch = "compute_" + std::to_string(GetParam());
  const CompileResult result = program.compile(CodeKind::ltoir, options);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.code.kind(), CodeKind::ltoir);
  EXPECT_FALSE(result.code.bytes().empty());
}

INSTANTIATE_TEST_SUITE_P(Sm80AndSm90, ProgramCompileForArch, ::testing::Values(80, 90),
                         [](const ::testing::TestParamInfo<int>& info) { return "sm_" + std::to_string(info.param); });

TEST(ProgramCompile, OneProgramCompilesForSeveralArchitectures) {
  Program program(kSaxpy, "saxpy.cu");
  ProgramOptions options;
  options.arch = "compute_80";
  const std::string first = text_of(program.compile(CodeKind::ptx, options).code.bytes());
  options.arch = "compute_90";
  const std::string second = text_of(program.compile(CodeKind::ptx, options).code.bytes());
  EXPECT_NE(first.find(".target sm_80"), std::string::npos);
  EXPECT_NE(second.find(".target sm_90"), std::string::npos);
}

TEST(ProgramCompile, FailedCompileIsAResultWithTheLog) {
  Program program("extern \"C\" __global__ void broken(int* p) { *p = ; }", "broken.cu");
  const CompileResult result = program.compile(CodeKind::ptx);
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(static_cast<bool>(result));
  EXPECT_NE(result.log.find("broken.cu(1): error: expected an expression"), std::string::npos) << result.log;
  EXPECT_THROW(result.code.bytes(), std::logic_error);
}

TEST(ProgramCompile, WarningsReachTheLogOfASuccessfulCompile) {
  Program program("extern \"C\" __global__ void k(int* p) { int unused; *p = 1; }", "warn.cu");
  ProgramOptions options;
  options.extra = {"--diag-warn=177"};
  const CompileResult result = program.compile(CodeKind::ptx, options);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_NE(result.log.find("unused"), std::string::npos) << result.log;
}

TEST(ProgramCompile, HeadersAndDefinesReachTheSource) {
  Program program("#include \"factor.h\"\nextern \"C\" __global__ void k(int* p) { *p = FACTOR * OFFSET; }",
                  "with_header.cu", {{"factor.h", "#define FACTOR 7\n"}});
  ProgramOptions options;
  options.defines = {{"OFFSET", "3"}};
  const CompileResult result = program.compile(CodeKind::ptx, options);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_NE(text_of(result.code.bytes()).find("21"), std::string::npos);
}

TEST(ProgramCompile, NameExpressionsGiveLoweredNamesOfTemplateKernels) {
  Program program(R"(
template <typename T, int N>
__global__ void fill(T* out) { out[threadIdx.x] = T(N); }
)",
                  "fill.cu");
  const std::vector<std::string> expressions = {"fill<float, 3>", "fill<int, 5>"};
  const CompileResult result = program.compile(CodeKind::ptx, {}, expressions);
  ASSERT_TRUE(result.ok) << result.log;
  ASSERT_EQ(result.lowered_names.size(), 2u);
  EXPECT_EQ(result.lowered_names.at("fill<float, 3>"), "_Z4fillIfLi3EEvPT_");
  EXPECT_EQ(result.lowered_names.at("fill<int, 5>"), "_Z4fillIiLi5EEvPT_");
  EXPECT_EQ(program.lowered_name("fill<int, 5>"), "_Z4fillIiLi5EEvPT_");
  const std::string ptx = text_of(result.code.bytes());
  EXPECT_NE(ptx.find(".entry _Z4fillIfLi3EEvPT_"), std::string::npos);
  EXPECT_NE(ptx.find(".entry _Z4fillIiLi5EEvPT_"), std::string::npos);
}

TEST(ProgramCompile, LoweredNameOfAnExpressionNotGivenIsAnNvrtcError) {
  Program program("template <typename T> __global__ void k(T* p) { *p = T(); }", "k.cu");
  ASSERT_TRUE(program.compile(CodeKind::ptx, {}, {"k<int>"}).ok);
  EXPECT_THROW(program.lowered_name("k<double>"), cubind::NvrtcError);
}

TEST(ProgramCompile, RejectedOptionIsAnNvrtcErrorQuotingTheLog) {
  Program program(kSaxpy, "saxpy.cu");
  ProgramOptions options;
  options.extra = {"--no-such-option"};
  try {
    program.compile(CodeKind::ptx, options);
    FAIL() << "no exception";
  } catch (const cubind::NvrtcError& error) {
    EXPECT_EQ(error.status(), NVRTC_ERROR_INVALID_OPTION);
    EXPECT_EQ(error.api_function(), "nvrtcCompileProgram");
    EXPECT_EQ(error.error_name(), "NVRTC_ERROR_INVALID_OPTION");
    const std::string what = error.what();
    EXPECT_EQ(what.rfind("nvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION (5): ", 0), 0u) << what;
    EXPECT_NE(what.find("--no-such-option"), std::string::npos) << what;
  }
}

TEST(ProgramCompile, TargetsNvrtcCannotProduceAreRejectedBeforeCompiling) {
  Program program(kSaxpy, "saxpy.cu");
  EXPECT_THROW(program.compile(CodeKind::fatbin), std::invalid_argument);
  EXPECT_THROW(program.compile(CodeKind::object), std::invalid_argument);

  ProgramOptions virtual_arch;
  virtual_arch.arch = "compute_90";
  try {
    program.compile(CodeKind::cubin, virtual_arch);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("not 'compute_90'"), std::string::npos) << error.what();
  }

  ProgramOptions lto;
  lto.arch = "compute_90";
  lto.lto = true;
  EXPECT_THROW(program.compile(CodeKind::ptx, lto), std::invalid_argument);
}

TEST(ProgramMove, MovedFromProgramThrowsLogicErrorNamingTheMethod) {
  Program program(kSaxpy, "saxpy.cu");
  Program moved = std::move(program);
  EXPECT_EQ(moved.name(), "saxpy.cu");
  EXPECT_NE(moved.handle(), nullptr);
  try {
    program.compile(CodeKind::ptx);  // NOLINT(bugprone-use-after-move): the point of the test
    FAIL() << "no exception";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(), "cubind::Program::compile: this Program is null (moved from)");
  }
  EXPECT_THROW(program.handle(), std::logic_error);
  EXPECT_THROW(program.lowered_name("x"), std::logic_error);

  Program assigned("extern \"C\" __global__ void other() {}", "other.cu");
  assigned = std::move(moved);
  EXPECT_EQ(assigned.name(), "saxpy.cu");
  EXPECT_TRUE(assigned.compile(CodeKind::ptx).ok);
}

}  // namespace

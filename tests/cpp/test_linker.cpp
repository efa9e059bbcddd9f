// LinkerOptions rendering and nvJitLink links through cubind::Linker, fed by
// cubind::Program. Neither library needs a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cubind/error.hpp"
#include "cubind/linker.hpp"
#include "cubind/program.hpp"

namespace {

using cubind::CodeKind;
using cubind::Linker;
using cubind::LinkerOptions;
using cubind::LinkResult;
using cubind::ObjectCode;
using cubind::Program;
using cubind::ProgramOptions;

constexpr const char* kCaller = R"(
extern __device__ float twice(float x);
extern "C" __global__ void apply(float* data) { data[threadIdx.x] = twice(data[threadIdx.x]); }
)";
constexpr const char* kCallee = "__device__ float twice(float x) { return 2.0f * x; }";

std::string text_of(const std::vector<char>& bytes) { return std::string(bytes.begin(), bytes.end()); }

ObjectCode compile(const char* source, const char* name, CodeKind target, const std::string& arch) {
  Program program(source, name);
  ProgramOptions options;
  options.arch = arch;
  options.relocatable_device_code = true;
  cubind::CompileResult result = program.compile(target, options);
  EXPECT_TRUE(result.ok) << result.log;
  return std::move(result.code);
}

LinkerOptions lto_options(const char* arch = "sm_90") {
  LinkerOptions options;
  options.arch = arch;
  options.lto = true;
  return options;
}

TEST(LinkerOptionsRender, ArchAloneRendersOneOption) {
  LinkerOptions options;
  options.arch = "sm_90";
  EXPECT_EQ(options.render(), std::vector<std::string>{"-arch=sm_90"});
}

TEST(LinkerOptionsRender, EveryOptionRendersInFieldOrder) {
  LinkerOptions options;
  options.arch = "sm_90a";
  options.lto = true;
  options.ptx = true;
  options.optimization_level = 2;
  options.debug = true;
  options.line_info = true;
  options.max_register_count = 128;
  options.ptxas_options = {"-v", "--warn-on-spills"};
  options.extra = {"-split-compile=0"};
  const std::vector<std::string> expected = {
      "-arch=sm_90a",
      "-lto",
      "-ptx",
      "-O2",
      "-g",
      "-lineinfo",
      "-maxrregcount=128",
      "-Xptxas=-v",
      "-Xptxas=--warn-on-spills",
      "-split-compile=0",
  };
  EXPECT_EQ(options.render(), expected);
}

TEST(LinkerOptionsRender, MalformedValuesAreRejectedNamingTheField) {
  LinkerOptions options;
  try {
    options.render();
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LinkerOptions::arch is ''"), std::string::npos) << error.what();
  }
  options.arch = "compute_90";
  EXPECT_THROW(options.render(), std::invalid_argument);
  options.arch = "sm_90";
  options.optimization_level = 4;
  EXPECT_THROW(options.render(), std::invalid_argument);
  options.optimization_level = 3;
  options.max_register_count = -1;
  EXPECT_THROW(options.render(), std::invalid_argument);
}

// Every option string render() writes must be one nvJitLink accepts. ptxas
// refuses to debug optimised code, so -g is tried with -O0 and the rest with -O3.
LinkResult link_caller_and_callee(const LinkerOptions& options) {
  Linker linker(options);
  linker.add(compile(kCaller, "caller.cu", CodeKind::ltoir, "compute_90"));
  linker.add(compile(kCallee, "callee.cu", CodeKind::ltoir, "compute_90"));
  return linker.link();
}

TEST(LinkerLink, NvJitLinkAcceptsEveryRenderedOption) {
  LinkerOptions debug = lto_options();
  debug.optimization_level = 0;
  debug.debug = true;
  const LinkResult debug_result = link_caller_and_callee(debug);
  EXPECT_TRUE(debug_result.ok) << debug_result.error_log;

  LinkerOptions optimised = lto_options();
  optimised.optimization_level = 3;
  optimised.line_info = true;
  optimised.max_register_count = 64;
  optimised.ptxas_options = {"-v"};
  optimised.extra = {"-split-compile=0"};
  const LinkResult optimised_result = link_caller_and_callee(optimised);
  EXPECT_TRUE(optimised_result.ok) << optimised_result.error_log;
}

class LinkerLtoForArch : public ::testing::TestWithParam<int> {};

TEST_P(LinkerLtoForArch, LtoIrLinksToACubin) {
  const std::string arch = std::to_string(GetParam());
  Linker linker(lto_options(("sm_" + arch).c_str()));
  linker.add(compile(kCaller, "caller.cu", CodeKind::ltoir, "compute_" + arch));
  linker.add(compile(kCallee, "callee.cu", CodeKind::ltoir, "compute_" + arch));
  const LinkResult result = linker.link();
  ASSERT_TRUE(result.ok) << result.error_log;
  EXPECT_EQ(result.code.kind(), CodeKind::cubin);
  EXPECT_EQ(text_of(result.code.bytes()).substr(0, 4),
            "\x7f"
            "ELF");
}

INSTANTIATE_TEST_SUITE_P(Sm80AndSm90, LinkerLtoForArch, ::testing::Values(80, 90),
                         [](const ::testing::TestParamInfo<int>& info) { return "sm_" + std::to_string(info.param); });

TEST(LinkerLink, LtoIrLinksToPtxWithThePtxOption) {
  LinkerOptions options = lto_options();
  options.ptx = true;
  const LinkResult result = link_caller_and_callee(options);
  ASSERT_TRUE(result.ok) << result.error_log;
  EXPECT_EQ(result.code.kind(), CodeKind::ptx);
  EXPECT_NE(text_of(result.code.bytes()).find(".entry apply"), std::string::npos);
}

TEST(LinkerLink, PtxAndCubinInputsLinkWithoutLto) {
  LinkerOptions options;
  options.arch = "sm_90";
  Linker linker(options);
  linker.add(compile(kCaller, "caller.cu", CodeKind::ptx, "compute_90"));
  const ObjectCode callee = compile(kCallee, "callee.cu", CodeKind::cubin, "sm_90");
  linker.add_bytes(CodeKind::cubin, callee.bytes().data(), callee.bytes().size(), "callee.cubin");
  const LinkResult result = linker.link();
  ASSERT_TRUE(result.ok) << result.error_log;
  EXPECT_EQ(result.code.kind(), CodeKind::cubin);
}

// An option ptxas does not know fails the link with ptxas's own message,
// which shows that ptxas_options reach ptxas.
TEST(LinkerLink, PtxasOptionsReachPtxas) {
  LinkerOptions options = lto_options();
  options.ptxas_options = {"--no-such-ptxas-option"};
  const LinkResult result = link_caller_and_callee(options);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error_log.find("ptxas fatal"), std::string::npos) << result.error_log;
  EXPECT_NE(result.error_log.find("no-such-ptxas-option"), std::string::npos) << result.error_log;
}

TEST(LinkerLink, FailedLinkIsAResultWithTheErrorLog) {
  Linker linker(lto_options());
  linker.add(compile(kCaller, "caller.cu", CodeKind::ltoir, "compute_90"));
  const LinkResult result = linker.link();
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(static_cast<bool>(result));
  EXPECT_NE(result.error_log.find("_Z5twicef"), std::string::npos) << result.error_log;
  EXPECT_THROW(result.code.kind(), std::logic_error);
}

TEST(LinkerAdd, GarbageInputIsAnNvJitLinkError) {
  Linker linker(lto_options());
  const char garbage[] = "this is not a cubin";
  try {
    linker.add_bytes(CodeKind::cubin, garbage, sizeof garbage, "garbage.cubin");
    FAIL() << "no exception";
  } catch (const cubind::NvJitLinkError& error) {
    EXPECT_EQ(error.api_function(), "nvJitLinkAddData");
    EXPECT_EQ(std::string(error.what()).rfind("nvJitLinkAddData failed: NVJITLINK_ERROR_", 0), 0u) << error.what();
  }
}

TEST(LinkerAdd, MissingFileIsAnNvJitLinkError) {
  Linker linker(lto_options());
  EXPECT_THROW(linker.add_file("/nonexistent/cubind/input.ltoir"), cubind::NvJitLinkError);
  EXPECT_THROW(linker.add_file("/nonexistent/cubind/input.unknown"), std::invalid_argument);
}

TEST(LinkerCreate, OptionsNvJitLinkRejectsAreAnNvJitLinkError) {
  LinkerOptions options;
  options.arch = "sm_90";
  options.ptx = true;  // -ptx needs -lto
  try {
    Linker linker(options);
    FAIL() << "no exception";
  } catch (const cubind::NvJitLinkError& error) {
    EXPECT_EQ(error.status(), NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS);
    EXPECT_EQ(error.error_name(), "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS");
    // nvJitLink's log says which options clash (its handle is freed: the asan preset checks that).
    EXPECT_NE(std::string(error.what()).find("lto"), std::string::npos) << error.what();
  }
}

TEST(LinkerMove, MovedFromLinkerThrowsLogicErrorNamingTheMethod) {
  Linker linker(lto_options());
  Linker moved = std::move(linker);
  EXPECT_NE(moved.handle(), nullptr);
  try {
    linker.link();  // NOLINT(bugprone-use-after-move): the point of the test
    FAIL() << "no exception";
  } catch (const std::logic_error& error) {
    EXPECT_STREQ(error.what(), "cubind::Linker::link: this Linker is null (moved from)");
  }
  EXPECT_THROW(linker.add_file("x.cubin"), std::logic_error);
  EXPECT_THROW(linker.error_log(), std::logic_error);

  Linker assigned(lto_options("sm_80"));
  assigned = std::move(moved);
  EXPECT_NE(assigned.handle(), nullptr);
  EXPECT_THROW(moved.handle(), std::logic_error);  // NOLINT(bugprone-use-after-move)
}

}  // namespace

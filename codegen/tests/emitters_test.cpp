// The emitters on hand-built IR: no clang involved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "codegen/emit_common.hpp"
#include "codegen/emitters.hpp"
#include "test_support.hpp"

namespace {

using codegen::Enum;
using codegen::Field;
using codegen::Function;
using codegen::Library;
using codegen::Macro;
using codegen::Record;
using codegen::Type;
using codegen::Typedef;
using codegen_test::builtin;
using codegen_test::named;
using codegen_test::param;
using codegen_test::pointer;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

codegen::EmitOptions options() {
  codegen::EmitOptions o;
  o.generator_version = "9.9.9";
  return o;
}

Function function(const std::string& name, std::vector<codegen::Param> params, unsigned order) {
  Function f;
  f.order = order;
  f.name = name;
  f.abi_symbol = name;
  f.result = named(Type::Kind::Enum, "CUresult");
  f.params = std::move(params);
  f.location = {"cuda.h", 100 + order};
  return f;
}

// A small driver: an enum, a struct with a C11 anonymous union and a field
// named like a Cython keyword, an opaque handle, constants, and functions
// that are renamed, aliased, deprecated and skipped.
Library driver_ir() {
  Library lib;
  lib.name = "driver";
  lib.headers = {"cuda.h"};
  lib.soname = "libcuda.so.1";
  lib.display_name = "the CUDA driver";
  lib.system_loader_only = true;
  lib.resolution = codegen::LibraryDescriptor::Resolution::ProcAddress;
  lib.per_thread_macros = {"__CUDA_API_PTDS", "__CUDA_API_PTSZ"};
  lib.cuda_version = 13000;

  Enum result;
  result.order = 0;
  result.name = "CUresult";
  result.tag = "cudaError_enum";
  result.enumerators = {{"CUDA_SUCCESS", 0, ""}, {"CUDA_ERROR_INVALID_VALUE", 1, ""}, {"CUDA_ERROR_UNKNOWN", 999, ""}};
  lib.enums.push_back(result);

  Record anon;
  anon.order = 1;
  anon.name = "anon_S_st_0";
  anon.is_union = true;
  anon.synthesized_name = true;
  anon.fields = {Field{"a", builtin("int")}, Field{"b", builtin("float")}};
  lib.records.push_back(anon);

  Record named_member;
  named_member.order = 1;
  named_member.name = "anon_S_st_named";
  named_member.synthesized_name = true;
  named_member.cpp_name = "decltype(S_st::named)";
  named_member.fields = {Field{"x", builtin("int")}};
  lib.records.push_back(named_member);

  Record inner;
  inner.order = 1;
  inner.name = "Inner_st";
  inner.tag = "Inner_st";
  inner.cpp_name = "S_st::Inner_st";
  inner.fields = {Field{"v", builtin("int")}};
  lib.records.push_back(inner);

  Record s;
  s.order = 2;
  s.name = "S_st";
  s.tag = "S_st";
  s.cpp_name = "S_st";
  Field anon_member{"", named(Type::Kind::Record, "anon_S_st_0", "anon_S_st_0")};
  anon_member.anonymous_member = true;
  Type bytes;
  bytes.kind = Type::Kind::Array;
  bytes.spelling = "char [16]";
  bytes.element = "char";
  bytes.extents = {16};
  s.fields = {Field{"kind", builtin("int")}, anon_member, Field{"from", builtin("unsigned int")},
              Field{"bytes", bytes},
              Field{"named", named(Type::Kind::Record, "anon_S_st_named", "anon_S_st_named")},
              Field{"inner", named(Type::Kind::Record, "struct Inner_st", "Inner_st")}};
  lib.records.push_back(s);

  Typedef s_alias;
  s_alias.order = 3;
  s_alias.name = "S";
  s_alias.kind = Typedef::Kind::RecordAlias;
  s_alias.target = named(Type::Kind::Record, "struct S_st", "S_st");
  s_alias.record = "S_st";
  lib.typedefs.push_back(s_alias);

  Record ctx;
  ctx.order = 4;
  ctx.name = "CUctx_st";
  ctx.tag = "CUctx_st";
  ctx.is_complete = false;
  lib.records.push_back(ctx);

  Typedef handle;
  handle.order = 5;
  handle.name = "CUcontext";
  handle.kind = Typedef::Kind::Handle;
  handle.target = pointer("struct CUctx_st", Type::Kind::Record);
  handle.record = "CUctx_st";
  lib.typedefs.push_back(handle);

  Typedef host_fn;
  host_fn.order = 6;
  host_fn.name = "CUhostFn";
  host_fn.kind = Typedef::Kind::FunctionPointer;
  host_fn.fn_result = Type{Type::Kind::Void, "void"};
  host_fn.fn_params = {param("userData", pointer("void", Type::Kind::Void))};
  lib.typedefs.push_back(host_fn);

  Macro legacy;
  legacy.name = "CU_STREAM_LEGACY";
  legacy.kind = Macro::Kind::Pointer;
  legacy.int_value = 1;
  legacy.c_type = "CUstream";
  Macro version;
  version.name = "CUDA_VERSION";
  version.kind = Macro::Kind::Integer;
  version.int_value = 13000;
  version.c_type = "int";
  Macro name;
  name.name = "CU_NAME";
  name.kind = Macro::Kind::String;
  name.string_value = "cubind";
  lib.macros = {legacy, version, name};

  Function init = function("cuInit", {param("Flags", builtin("unsigned int"))}, 0);
  init.proc_name = "cuInit";
  init.abi_version = 2000;
  init.doc = "\\brief Initialize the CUDA driver API\n\nMore text.";
  lib.functions.push_back(init);

  Function create = function("cuCtxCreate",
                             {param("pctx", pointer("CUcontext", Type::Kind::Handle)),
                              param("flags", builtin("unsigned int"))},
                             1);
  create.abi_symbol = "cuCtxCreate_v4";
  create.proc_name = "cuCtxCreate";
  create.abi_version = 12050;
  lib.functions.push_back(create);

  Function get_device = function("cuCtxGetDevice_v2",
                                 {param("device", pointer("CUdevice", Type::Kind::Builtin)),
                                  param("ctx", named(Type::Kind::Handle, "CUcontext"))},
                                 2);
  get_device.proc_name = "cuCtxGetDevice";
  get_device.abi_version = 13000;
  lib.functions.push_back(get_device);

  Function instantiate = function("cuGraphInstantiateWithFlags",
                                  {param("phGraphExec", pointer("CUgraphExec", Type::Kind::Handle)),
                                   param("hGraph", named(Type::Kind::Handle, "CUgraph")),
                                   param("flags", builtin("unsigned long long"))},
                                  3);
  instantiate.aliases = {"cuGraphInstantiate"};
  instantiate.proc_name = "cuGraphInstantiateWithFlags";
  instantiate.abi_version = 11040;
  lib.functions.push_back(instantiate);

  Function detach = function("cuCtxDetach", {param("ctx", named(Type::Kind::Handle, "CUcontext"))}, 4);
  detach.deprecated = "";
  detach.proc_name = "cuCtxDetach";
  detach.abi_version = 2000;
  lib.functions.push_back(detach);

  Function old = function("cuOld", {}, 5);
  old.deprecated = "use \"cuNew\"";
  old.proc_name = "cuOld";
  old.abi_version = 3000;
  old.introduced = "3.1";
  lib.functions.push_back(old);

  Function keyword = function("cuKeyword", {param("from", builtin("int")), param("in", builtin("int"))}, 6);
  keyword.proc_name = "cuKeyword";
  keyword.abi_version = 13000;
  lib.functions.push_back(keyword);

  Function host = function("cuLaunchHostFunc",
                           {param("fn", named(Type::Kind::FunctionPointer, "CUhostFn")),
                            param("userData", pointer("void", Type::Kind::Void))},
                           7);
  host.proc_name = "cuLaunchHostFunc";
  host.abi_version = 10000;
  lib.functions.push_back(host);

  Function windows = function("cuWindowsOnly", {param("handle", pointer("void", Type::Kind::Void))}, 8);
  windows.proc_name = "cuWindowsOnly";
  windows.abi_version = 10000;
  lib.functions.push_back(windows);
  lib.skipped["cuWindowsOnly"] = "a Windows handle";
  return lib;
}

Library nvrtc_ir() {
  Library lib;
  lib.name = "nvrtc";
  lib.headers = {"nvrtc.h"};
  lib.soname = "libnvrtc.so.13";
  lib.display_name = "NVRTC";
  lib.env_override = "CUBIND_NVRTC_LIBRARY";
  lib.wheel_dirs = {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"};
  lib.cuda_version = 13000;
  Enum result;
  result.name = "nvrtcResult";
  result.enumerators = {{"NVRTC_SUCCESS", 0, ""}};
  lib.enums.push_back(result);
  Function version = function("nvrtcVersion",
                               {param("major", pointer("int", Type::Kind::Builtin)),
                                param("minor", pointer("int", Type::Kind::Builtin))},
                               0);
  version.result = named(Type::Kind::Enum, "nvrtcResult");
  lib.functions.push_back(version);
  Function heap = function("nvrtcGetPCHHeapSize", {param("ret", pointer("size_t", Type::Kind::Builtin))}, 1);
  heap.result = named(Type::Kind::Enum, "nvrtcResult");
  heap.abi_symbol = "nvrtcGetPCHHeapSize_v2";
  heap.introduced = "12.8";
  lib.functions.push_back(heap);
  return lib;
}

std::size_t position(const std::string& text, const std::string& what) {
  const auto pos = text.find(what);
  EXPECT_NE(pos, std::string::npos) << "missing: " << what;
  return pos;
}

TEST(EmitCommon, CudaVersionString) {
  EXPECT_EQ(codegen::cuda_version_string(13000), "13.0");
  EXPECT_EQ(codegen::cuda_version_string(12080), "12.8");
  EXPECT_EQ(codegen::cuda_version_string(3020), "3.2");
}

TEST(EmitCommon, StampNamesTheGeneratorTheCudaVersionAndTheHeaders) {
  Library lib = driver_ir();
  lib.headers = {"cuda.h", "cudaProfiler.h"};
  const std::string s = codegen::stamp(lib, options(), "//");
  EXPECT_THAT(s, StartsWith("// Generated by cubind-codegen 9.9.9 from the CUDA 13.0 headers (cuda.h, cudaProfiler.h).\n"));
  EXPECT_THAT(s, HasSubstr("// Do not edit"));
  EXPECT_THAT(s, HasSubstr("codegen/annotations/driver.yaml"));
}

TEST(EmitCommon, DeclaratorPlacesTheNameInsideFunctionPointersAndBeforeExtents) {
  EXPECT_EQ(codegen::declarator("void (*)(void *)", "fn"), "void (*fn)(void *)");
  EXPECT_EQ(codegen::declarator("char [256]", "name"), "char name[256]");
  EXPECT_EQ(codegen::declarator("int *", "p"), "int *p");
  EXPECT_EQ(codegen::declarator("unsigned int", "n"), "unsigned int n");
}

TEST(EmitCommon, FunctionTypeSpellsVoidForNoParameters) {
  EXPECT_EQ(codegen::function_type(builtin("int"), {}), "int (*)(void)");
  EXPECT_EQ(codegen::function_type(builtin("int"), {param("a", builtin("float")), param("b", pointer("char", Type::Kind::Builtin, true))}),
            "int (*)(float, const char *)");
}

TEST(EmitCommon, FirstSentenceIsTheBriefParagraphOnOneLine) {
  EXPECT_EQ(codegen::first_sentence("\\brief Does X  \n   and more\n\nDetails."), "Does X and more");
  EXPECT_EQ(codegen::first_sentence("\\brief First one. Second one."), "First one.");
  EXPECT_EQ(codegen::first_sentence("Text before.\n\\brief The brief\n\nDetails."), "The brief");
}

TEST(EmitCommon, FirstSentenceWithoutBriefIsTheFirstPlainLine) {
  EXPECT_EQ(codegen::first_sentence("\\ingroup CUDA_INIT\n\n  Plain line\nnext line"), "Plain line");
  EXPECT_EQ(codegen::first_sentence(""), "");
}

TEST(EmitPxd, PathAndStamp) {
  const auto file = codegen::emit_pxd(driver_ir(), options());
  EXPECT_EQ(file.path, "python/cubind/bindings/cydriver.pxd");
  EXPECT_THAT(file.content, StartsWith("# Generated by cubind-codegen 9.9.9 from the CUDA 13.0 headers (cuda.h).\n"));
  // Types come through the raw header, which includes every header of the library.
  EXPECT_THAT(file.content, HasSubstr("cdef extern from \"cubind/raw/driver.hpp\" nogil:\n"));
}

TEST(EmitPxd, EnumWithValuesAndItsTypedef) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    cdef enum cudaError_enum:\n"
                             "        CUDA_SUCCESS = 0\n"
                             "        CUDA_ERROR_INVALID_VALUE = 1\n"
                             "        CUDA_ERROR_UNKNOWN = 999\n"
                             "    ctypedef cudaError_enum CUresult\n"));
}

TEST(EmitPxd, UnnamedEnumIsACtypedef) {
  const auto pxd = codegen::emit_pxd(nvrtc_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    ctypedef enum nvrtcResult:\n        NVRTC_SUCCESS = 0\n"));
}

TEST(EmitPxd, AnonymousUnionFieldsAreFlattenedAndKeywordFieldsKeepTheirCName) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    cdef struct S_st:\n"
                             "        int kind\n"
                             "        int a\n"
                             "        float b\n"
                             "        unsigned int from_ \"from\"\n"
                             "        char bytes[16]\n"
                             "        anon_S_st_named named\n"
                             "        Inner_st inner\n"
                             "\n"));
  EXPECT_THAT(pxd, HasSubstr("    ctypedef S_st S\n"));
  // Declared before use, whatever the order below.
  EXPECT_LT(position(pxd, "    cdef struct S_st\n"), position(pxd, "    cdef struct S_st:\n"));
}

TEST(EmitPxd, UnnamedMemberTypeIsNamedByDecltypeForCpp) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    ctypedef struct anon_S_st_named \"decltype(S_st::named)\":\n        int x\n\n"));
  EXPECT_LT(position(pxd, "anon_S_st_named \"decltype"), position(pxd, "    cdef struct S_st:\n"));
}

TEST(EmitPxd, AnonymousMemberHasNoDeclarationOfItsOwn) {
  // Nothing in C or C++ names a C11 anonymous union: only its fields exist.
  EXPECT_THAT(codegen::emit_pxd(driver_ir(), options()).content, Not(HasSubstr("anon_S_st_0")));
}

TEST(EmitPxd, NestedNamedStructCarriesItsCppName) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    cdef struct Inner_st \"S_st::Inner_st\"\n"));
  EXPECT_THAT(pxd, HasSubstr("    cdef struct Inner_st \"S_st::Inner_st\":\n        int v\n"));
}

TEST(EmitPxd, HandleIsAPointerCtypedefToTheForwardDeclaredStruct) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    cdef struct CUctx_st\n"));
  EXPECT_THAT(pxd, HasSubstr("    ctypedef CUctx_st* CUcontext\n"));
  EXPECT_THAT(pxd, Not(HasSubstr("cdef struct CUctx_st:")));
}

TEST(EmitPxd, FunctionPointerTypedef) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    ctypedef void (*CUhostFn)(void *userData)\n"));
}

TEST(EmitPxd, ConstantsByKind) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    CUstream CU_STREAM_LEGACY\n"));
  EXPECT_THAT(pxd, HasSubstr("    const int CUDA_VERSION\n"));
  EXPECT_THAT(pxd, HasSubstr("    const char* CU_NAME\n"));
}

TEST(EmitPxd, FunctionsAreInTheRawNamespaceWithExceptPlus) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  const auto block = position(pxd, "cdef extern from \"cubind/raw/driver.hpp\" namespace \"cubind::raw\" nogil:\n");
  EXPECT_LT(block, position(pxd, "    void driver_load() except +\n"));
  EXPECT_LT(block, position(pxd, "    CUresult cuInit(unsigned int Flags) except +\n"));
  EXPECT_LT(block, position(pxd, "    CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags) except +\n"));
  EXPECT_LT(block, position(pxd, "    CUresult cuOld() except +\n"));
  EXPECT_LT(block, position(pxd, "    CUresult cuLaunchHostFunc(CUhostFn fn, void *userData) except +\n"));
}

TEST(EmitPxd, AliasesAreDeclaredWithTheTargetsSignature) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, "
                             "unsigned long long flags) except +\n"));
  EXPECT_THAT(pxd, HasSubstr("    CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, "
                             "unsigned long long flags) except +\n"));
}

TEST(EmitPxd, KeywordParametersAreRenamed) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, HasSubstr("    CUresult cuKeyword(int from_, int in_) except +\n"));
}

TEST(EmitPxd, SkippedFunctionsAreAbsent) {
  const auto pxd = codegen::emit_pxd(driver_ir(), options()).content;
  EXPECT_THAT(pxd, Not(HasSubstr("cuWindowsOnly")));
}

TEST(EmitLoaderHeader, DeclaresEveryBoundFunction) {
  const Library lib = driver_ir();
  const auto file = codegen::emit_loader_header(lib, options());
  EXPECT_EQ(file.path, "include/cubind/raw/driver.hpp");
  EXPECT_THAT(file.content, StartsWith("// Generated by cubind-codegen 9.9.9 from the CUDA 13.0 headers (cuda.h).\n"));
  EXPECT_THAT(file.content, HasSubstr("#include <cuda.h>\n"));
  EXPECT_THAT(file.content, HasSubstr("namespace cubind::raw {\n"));
  EXPECT_THAT(file.content, HasSubstr("CUresult cuInit(unsigned int Flags);\n"));
  EXPECT_THAT(file.content, HasSubstr("CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags);\n"));
  EXPECT_THAT(file.content, HasSubstr("CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);\n"));
  EXPECT_THAT(file.content, HasSubstr("CUresult cuOld(void);\n"));
  for (const Function& f : lib.functions) {
    if (lib.skipped.count(f.name)) continue;
    EXPECT_THAT(file.content, HasSubstr("CUresult " + f.name + "(")) << f.name;
  }
  EXPECT_THAT(file.content, Not(HasSubstr("cuWindowsOnly")));
}

TEST(EmitLoader, HeaderHelpersAreReexportedNotLoaded) {
  Library lib = driver_ir();
  Function helper = function("make_thing", {}, 50);
  helper.header_inline = true;
  helper.result = named(Type::Kind::Record, "struct S_st", "S_st");
  lib.functions.push_back(helper);
  const auto hpp = codegen::emit_loader_header(lib, options()).content;
  EXPECT_THAT(hpp, HasSubstr("using ::make_thing;  // cuda.h:150\n"));
  EXPECT_THAT(hpp, Not(HasSubstr(" make_thing(")));
  const auto cpp = codegen::emit_loader_source(lib, options()).content;
  EXPECT_THAT(cpp, Not(HasSubstr("make_thing")));
  // Declared for Cython without except +: it cannot throw.
  const auto pxd = codegen::emit_pxd(lib, options()).content;
  EXPECT_THAT(pxd, HasSubstr(" make_thing()\n"));
}

TEST(EmitLoader, StatusNamesComeFromTheStatusEnum) {
  const Library lib = driver_ir();
  const auto hpp = codegen::emit_loader_header(lib, options()).content;
  EXPECT_THAT(hpp, HasSubstr("const char* driver_status_name(CUresult status) noexcept;\n"));
  const auto cpp = codegen::emit_loader_source(lib, options()).content;
  EXPECT_THAT(cpp, HasSubstr("const char* driver_status_name(CUresult status) noexcept {\n"));
  EXPECT_THAT(cpp, HasSubstr("{0, \"CUDA_SUCCESS\"},\n"));
  EXPECT_THAT(cpp, HasSubstr("{999, \"CUDA_ERROR_UNKNOWN\"},\n"));
  EXPECT_THAT(cpp, HasSubstr("return nullptr;\n"));
}

TEST(EmitLoaderHeader, BriefAndLocationPrecedeTheDeclaration) {
  const auto hpp = codegen::emit_loader_header(driver_ir(), options()).content;
  EXPECT_THAT(hpp, HasSubstr("// cuInit: Initialize the CUDA driver API (cuda.h:100)\nCUresult cuInit("));
}

TEST(EmitLoaderHeader, DeprecatedFunctionsCarryTheMessage) {
  const auto hpp = codegen::emit_loader_header(driver_ir(), options()).content;
  EXPECT_THAT(hpp, HasSubstr("CUBIND_DEPRECATED(\"use \\\"cuNew\\\"\")\nCUresult cuOld(void);\n"));
  EXPECT_THAT(hpp, HasSubstr("CUBIND_DEPRECATED(\"cuCtxDetach is deprecated\")\nCUresult cuCtxDetach(CUcontext ctx);\n"));
  EXPECT_THAT(hpp, Not(HasSubstr("CUBIND_DEPRECATED(\"cuInit")));
  EXPECT_THAT(hpp, HasSubstr("#define CUBIND_DEPRECATED(message) [[deprecated(message)]]\n"));
}

TEST(EmitLoaderHeader, DriverRejectsTheCompileTimePerThreadMacro) {
  EXPECT_THAT(codegen::emit_loader_header(driver_ir(), options()).content,
              HasSubstr("#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)\n#error"));
  EXPECT_THAT(codegen::emit_loader_header(nvrtc_ir(), options()).content,
              Not(HasSubstr("CUDA_API_PER_THREAD_DEFAULT_STREAM")));
}

TEST(EmitLoaderSource, DriverEntriesUseProcNameAndAbiVersion) {
  const auto file = codegen::emit_loader_source(driver_ir(), options());
  EXPECT_EQ(file.path, "src/driver.cpp");
  const auto& cpp = file.content;
  EXPECT_THAT(cpp, StartsWith("// Generated by cubind-codegen 9.9.9 from the CUDA 13.0 headers (cuda.h).\n"));
  EXPECT_THAT(cpp, HasSubstr("    {\"cuInit\", \"cuInit\", \"2.0\", 2000, false},\n"));
  EXPECT_THAT(cpp, HasSubstr("    {\"cuCtxCreate\", \"cuCtxCreate\", \"12.5\", 12050, false},\n"));
  EXPECT_THAT(cpp, HasSubstr("    {\"cuCtxGetDevice_v2\", \"cuCtxGetDevice\", \"13.0\", 13000, false},\n"));
  EXPECT_THAT(cpp, HasSubstr("    {\"cuOld\", \"cuOld\", \"3.1\", 3000, false},\n"));
  EXPECT_THAT(cpp, Not(HasSubstr("cuCtxCreate_v4")));
  // The table asks cuGetProcAddress with each entry's version; the headers' version names what is missing.
  EXPECT_THAT(cpp, HasSubstr("cubind::detail::Resolution::ProcAddress"));
  EXPECT_THAT(cpp, HasSubstr(", kEntries, kEntryCount, g_slots, 13000);"));
}

TEST(EmitLoaderSource, DriverEntryWithoutProcNameFallsBackToTheName) {
  Library lib = driver_ir();
  lib.functions[0].proc_name.clear();
  EXPECT_THAT(codegen::emit_loader_source(lib, options()).content, HasSubstr("    {\"cuInit\", \"cuInit\", \"2.0\", 2000, false},\n"));
}

TEST(EmitLoaderSource, WrappersCallThroughTheirTableSlot) {
  const auto cpp = codegen::emit_loader_source(driver_ir(), options()).content;
  EXPECT_THAT(cpp, HasSubstr("  k_cuInit = 0,\n  k_cuCtxCreate = 1,\n"));
  EXPECT_THAT(cpp, HasSubstr("CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags) {\n"
                             "  using Fn = CUresult (*)(CUcontext *, unsigned int);\n"
                             "  if (void* cubind_entry = g_table.loaded_entry(k_cuCtxCreate)) return "
                             "reinterpret_cast<Fn>(cubind_entry)(pctx, flags);\n"
                             "  return cubind::detail::call_after_loading<Fn>(g_table, k_cuCtxCreate, pctx, flags);\n"
                             "}\n"));
  EXPECT_THAT(cpp, HasSubstr("CUresult cuOld(void) {\n  using Fn = CUresult (*)(void);\n"
                             "  if (void* cubind_entry = g_table.loaded_entry(k_cuOld)) return "
                             "reinterpret_cast<Fn>(cubind_entry)();\n"
                             "  return cubind::detail::call_after_loading<Fn>(g_table, k_cuOld);\n}\n"));
  EXPECT_THAT(cpp, HasSubstr("#define CUBIND_NO_DEPRECATION_WARNINGS\n#include \"cubind/raw/driver.hpp\"\n"));
  EXPECT_THAT(cpp, Not(HasSubstr("cuWindowsOnly")));
}

TEST(EmitLoaderSource, NvrtcEntriesUseTheSymbol) {
  const auto file = codegen::emit_loader_source(nvrtc_ir(), options());
  EXPECT_EQ(file.path, "src/nvrtc.cpp");
  EXPECT_THAT(file.content, HasSubstr("    {\"nvrtcVersion\", \"nvrtcVersion\", \"\", 0, false},\n"));
  EXPECT_THAT(file.content, HasSubstr("    {\"nvrtcGetPCHHeapSize\", \"nvrtcGetPCHHeapSize_v2\", \"12.8\", 0, false},\n"));
  EXPECT_THAT(file.content, HasSubstr("\"CUBIND_NVRTC_LIBRARY\""));
  EXPECT_THAT(file.content, HasSubstr("\"libnvrtc.so.13\""));
  EXPECT_THAT(file.content, HasSubstr("cubind::detail::Resolution::Symbol,"));
}

// The suffix of nvJitLink's versioned symbols names the header's release, not
// the one that added the function: only an annotation's `introduced` says that.
TEST(EmitLoaderSource, NvJitLinkEntriesUseTheVersionedSymbolAndTheAnnotatedRelease) {
  Library lib = nvrtc_ir();
  lib.name = "nvjitlink";
  lib.headers = {"nvJitLink.h"};
  lib.soname = "libnvJitLink.so.13";
  lib.env_override = "CUBIND_NVJITLINK_LIBRARY";
  Function create = function("nvJitLinkCreate", {param("handle", pointer("nvJitLinkHandle", Type::Kind::Handle))}, 0);
  create.versioned_symbol = "__nvJitLinkCreate_13_0";
  create.abi_symbol = create.versioned_symbol;
  Function ltoir = function("nvJitLinkGetLinkedLTOIRSize", {param("handle", named(Type::Kind::Handle, "nvJitLinkHandle"))}, 1);
  ltoir.versioned_symbol = "__nvJitLinkGetLinkedLTOIRSize_13_5";
  ltoir.abi_symbol = ltoir.versioned_symbol;
  ltoir.introduced = "13.3";
  lib.functions = {create, ltoir};
  const auto cpp = codegen::emit_loader_source(lib, options()).content;
  EXPECT_THAT(cpp, HasSubstr("    {\"nvJitLinkCreate\", \"__nvJitLinkCreate_13_0\", \"\", 0, false},\n"));
  EXPECT_THAT(cpp, HasSubstr("    {\"nvJitLinkGetLinkedLTOIRSize\", \"__nvJitLinkGetLinkedLTOIRSize_13_5\", \"13.3\", 0, "
                             "false},\n"));
  EXPECT_THAT(cpp, HasSubstr("\"CUBIND_NVJITLINK_LIBRARY\""));
}

TEST(EmitLoaderSource, RuntimeEntriesMarkPerThreadVariants) {
  Library lib = nvrtc_ir();
  lib.name = "runtime";
  lib.headers = {"cuda_runtime_api.h"};
  lib.soname = "libcudart.so.13";
  lib.env_override = "CUBIND_CUDART_LIBRARY";
  lib.resolution = codegen::LibraryDescriptor::Resolution::SymbolPerThreadVariants;
  lib.per_thread_macros = {"__CUDART_API_PTDS", "__CUDART_API_PTSZ"};
  Function memcpy = function("cudaMemcpy", {param("count", builtin("size_t"))}, 0);
  memcpy.per_thread = codegen::PerThread::Ptds;
  Function version = function("cudaRuntimeGetVersion", {param("v", pointer("int", Type::Kind::Builtin))}, 1);
  lib.functions = {memcpy, version};
  const auto cpp = codegen::emit_loader_source(lib, options()).content;
  EXPECT_THAT(cpp, HasSubstr("    {\"cudaMemcpy\", \"cudaMemcpy\", \"\", 0, true},\n"));
  EXPECT_THAT(cpp, HasSubstr("    {\"cudaRuntimeGetVersion\", \"cudaRuntimeGetVersion\", \"\", 0, false},\n"));
  EXPECT_THAT(cpp, HasSubstr("\"CUBIND_CUDART_LIBRARY\""));
  EXPECT_THAT(cpp, HasSubstr("cubind::detail::Resolution::SymbolPerThreadVariants"));
}

TEST(EmitLoaderSource, DriverIsFoundBySystemLoaderOnly) {
  const auto cpp = codegen::emit_loader_source(driver_ir(), options()).content;
  EXPECT_THAT(cpp, HasSubstr("constexpr const char* kWheelDirs[] = {nullptr};\n"));
  EXPECT_THAT(cpp, HasSubstr("g_table({\"the CUDA driver\", \"libcuda.so.1\", nullptr, kWheelDirs, 0, true},\n"));
}

// A library the generator has never heard of: its descriptor alone decides
// how it is found and resolved.
TEST(EmitLoaderSource, ANewLibraryIsLoadedAsItsDescriptorSays) {
  Library lib = nvrtc_ir();
  lib.name = "cufile";
  lib.headers = {"cufile.h"};
  lib.soname = "libcufile.so.0";
  lib.display_name = "cuFile";
  lib.env_override = "CUBIND_CUFILE_LIBRARY";
  lib.wheel_dirs = {"nvidia/cu13/lib", "nvidia/cufile/lib"};
  const auto file = codegen::emit_loader_source(lib, options());
  EXPECT_EQ(file.path, "src/cufile.cpp");
  EXPECT_THAT(file.content, HasSubstr("constexpr const char* kWheelDirs[] = {\"nvidia/cu13/lib\", \"nvidia/cufile/lib\"};\n"));
  EXPECT_THAT(file.content,
              HasSubstr("g_table({\"cuFile\", \"libcufile.so.0\", \"CUBIND_CUFILE_LIBRARY\", kWheelDirs, 2, false},\n"));
  EXPECT_THAT(file.content, HasSubstr("cubind::detail::Resolution::Symbol,"));
  EXPECT_THAT(file.content, HasSubstr("void cufile_load() { g_table.ensure_loaded(); }\n"));
  EXPECT_THAT(codegen::emit_loader_header(lib, options()).content, Not(HasSubstr("CUDA_API_PER_THREAD_DEFAULT_STREAM")));
  // No toolkit folders of its own: the loader's default, and the spec's last fields left out.
  EXPECT_THAT(file.content, Not(HasSubstr("kToolkitDirs")));
}

TEST(EmitLoaderSource, ToolkitDirsOfTheDescriptorReachTheSpec) {
  Library lib = nvrtc_ir();
  lib.toolkit_dirs = {"nvvm/lib64", "lib64"};
  const auto cpp = codegen::emit_loader_source(lib, options()).content;
  EXPECT_THAT(cpp, HasSubstr("constexpr const char* kToolkitDirs[] = {\"nvvm/lib64\", \"lib64\"};\n"));
  EXPECT_THAT(cpp, HasSubstr(", kWheelDirs, 2, false, kToolkitDirs, 2},\n"));
}

TEST(EmitPythonLibraries, EveryLibraryHasItsStatusAndLoadBranch) {
  const auto file = codegen::emit_python_libraries({driver_ir(), nvrtc_ir()}, options());
  EXPECT_EQ(file.path, "python/cubind/_libraries.pxi");
  const auto& pxi = file.content;
  EXPECT_THAT(pxi, StartsWith("# Generated by cubind-codegen 9.9.9. Do not edit.\n"));
  EXPECT_THAT(pxi, HasSubstr("cdef extern from \"cubind/raw/nvrtc.hpp\" namespace \"cubind::raw\" nogil:\n"
                             "    LibraryStatus nvrtc_status()\n    void nvrtc_load() except +\n"));
  EXPECT_THAT(pxi, HasSubstr("NAMES = (\"driver\", \"nvrtc\")\n"));
  EXPECT_THAT(pxi, HasSubstr("    if name == \"driver\":\n        return driver_status()\n"));
  EXPECT_THAT(pxi, HasSubstr("    if name == \"nvrtc\":\n        with nogil:\n            nvrtc_load()\n        return 0\n"));
  // One library still makes a tuple.
  EXPECT_THAT(codegen::emit_python_libraries({nvrtc_ir()}, options()).content, HasSubstr("NAMES = (\"nvrtc\",)\n"));
}

TEST(EmitPythonVersion, NamesTheNewestCudaVersion) {
  Library older = nvrtc_ir();
  older.cuda_version = 12080;
  const auto file = codegen::emit_python_version({older, driver_ir()}, options());
  EXPECT_EQ(file.path, "python/cubind/bindings/_version.py");
  EXPECT_THAT(file.content, HasSubstr("cuda_version = \"13.0\"\n"));
  EXPECT_THAT(file.content, HasSubstr("9.9.9"));
}

TEST(CoverageTable, CountsDeclaredBoundSkippedDeprecatedAndAliases) {
  const std::string table = codegen::coverage_table({driver_ir(), nvrtc_ir()});
  EXPECT_THAT(table, HasSubstr("| driver | cuda.h | 9 | 8 | 1 | 2 | 1 |\n"));
  EXPECT_THAT(table, HasSubstr("| nvrtc | nvrtc.h | 2 | 2 | 0 | 0 | 0 |\n"));
  EXPECT_THAT(table, HasSubstr("- driver: cuWindowsOnly: a Windows handle\n"));
}

TEST(CoverageTable, SaysWhenNothingIsSkipped) {
  EXPECT_THAT(codegen::coverage_table({nvrtc_ir()}), HasSubstr("No function is skipped."));
}

}  // namespace

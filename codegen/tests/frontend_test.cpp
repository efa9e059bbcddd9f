// The front end on small C snippets shaped like the CUDA headers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "codegen/frontend.hpp"
#include "codegen/ir_json.hpp"
#include "test_support.hpp"

namespace {

using codegen::Library;
using codegen::Macro;
using codegen::PerThread;
using codegen::Type;
using codegen::Typedef;
using codegen_test::frontend_options;
using codegen_test::parse_c;
using codegen_test::snippet_source;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// cuda.h's per-thread default stream machinery, as written there.
constexpr const char* kPerThreadPrologue = R"(
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __CUDA_API_PER_THREAD_DEFAULT_STREAM
#define __CUDA_API_PTDS(api) api ## _ptds
#define __CUDA_API_PTSZ(api) api ## _ptsz
#else
#define __CUDA_API_PTDS(api) api
#define __CUDA_API_PTSZ(api) api
#endif
typedef int CUresult;
)";

const codegen::Function& function(const Library& lib, const std::string& name) {
  const codegen::Function* f = lib.find_function(name);
  if (f == nullptr) throw std::runtime_error("no function " + name);
  return *f;
}

const Macro* macro(const Library& lib, const std::string& name) {
  auto it = std::find_if(lib.macros.begin(), lib.macros.end(), [&](const Macro& m) { return m.name == name; });
  return it == lib.macros.end() ? nullptr : &*it;
}

std::vector<std::string> function_names(const Library& lib) {
  std::vector<std::string> names;
  for (const auto& f : lib.functions) names.push_back(f.name);
  return names;
}

TEST(FrontendRenames, VersionedRenameGivesThePublicNameAndKeepsTheAbiSymbol) {
  const Library lib = parse_c(R"(
typedef int CUresult;
#define cuFoo cuFoo_v2
CUresult cuFoo_v2(int x);
)");
  EXPECT_THAT(function_names(lib), ElementsAre("cuFoo"));
  const auto& f = function(lib, "cuFoo");
  EXPECT_EQ(f.abi_symbol, "cuFoo_v2");
  EXPECT_EQ(f.per_thread, PerThread::None);
  ASSERT_EQ(lib.renames.size(), 1u);
  EXPECT_EQ(lib.renames[0].public_name, "cuFoo");
  EXPECT_EQ(lib.renames[0].target, "cuFoo_v2");
  // A rename is not a constant.
  EXPECT_EQ(macro(lib, "cuFoo"), nullptr);
}

TEST(FrontendRenames, DeclarationThroughTheMacroIsRenamedTheSameWay) {
  const Library lib = parse_c(R"(
typedef int CUresult;
#define cuCtxCreate cuCtxCreate_v4
CUresult cuCtxCreate(int *pctx, unsigned int flags);
)");
  EXPECT_THAT(function_names(lib), ElementsAre("cuCtxCreate"));
  EXPECT_EQ(function(lib, "cuCtxCreate").abi_symbol, "cuCtxCreate_v4");
}

TEST(FrontendRenames, PerThreadWrapperMarksPtdsAndPtsz) {
  const Library lib = parse_c(std::string(kPerThreadPrologue) + R"(
#define cuBar __CUDA_API_PTDS(cuBar_v2)
#define cuBaz __CUDA_API_PTSZ(cuBaz_v2)
CUresult cuBar(int stream);
CUresult cuBaz(int stream);
CUresult cuPlain(int stream);
)");
  EXPECT_THAT(function_names(lib), ElementsAre("cuBar", "cuBaz", "cuPlain"));
  EXPECT_EQ(function(lib, "cuBar").per_thread, PerThread::Ptds);
  EXPECT_EQ(function(lib, "cuBar").abi_symbol, "cuBar_v2");
  EXPECT_EQ(function(lib, "cuBaz").per_thread, PerThread::Ptsz);
  EXPECT_EQ(function(lib, "cuBaz").abi_symbol, "cuBaz_v2");
  EXPECT_EQ(function(lib, "cuPlain").per_thread, PerThread::None);
}

TEST(FrontendRenames, PerThreadWrapperDefinedOnlyUnderThePerThreadMacroIsDetected) {
  // cuda.h defines cuMemcpy's wrapper only when per-thread streams are selected.
  const Library lib = parse_c(std::string(kPerThreadPrologue) + R"(
#if defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemcpy __CUDA_API_PTDS(cuMemcpy)
#endif
CUresult cuMemcpy(unsigned long long dst, unsigned long long src, unsigned long bytes);
)");
  const auto& f = function(lib, "cuMemcpy");
  EXPECT_EQ(f.per_thread, PerThread::Ptds);
  EXPECT_EQ(f.abi_symbol, "cuMemcpy");
}

TEST(FrontendRenames, RenameToAnotherPublicFunctionIsAnAlias) {
  const Library lib = parse_c(R"(
typedef int CUresult;
#define cuGraphInstantiate cuGraphInstantiateWithFlags
CUresult cuGraphInstantiateWithFlags(int *exec, int graph, unsigned long long flags);
)");
  EXPECT_THAT(function_names(lib), ElementsAre("cuGraphInstantiateWithFlags"));
  const auto& f = function(lib, "cuGraphInstantiateWithFlags");
  EXPECT_THAT(f.aliases, ElementsAre("cuGraphInstantiate"));
  EXPECT_EQ(f.abi_symbol, "cuGraphInstantiateWithFlags");
  EXPECT_EQ(lib.find_function("cuGraphInstantiate"), nullptr);
}

TEST(FrontendFunctions, DeprecationMessageIsKeptAndAbsenceIsNullopt) {
  const Library lib = parse_c(R"(
__attribute__((deprecated("use cuNew"))) int cuOld(void);
__attribute__((deprecated)) int cuOlder(void);
int cuNew(void);
)");
  ASSERT_TRUE(function(lib, "cuOld").deprecated.has_value());
  EXPECT_EQ(*function(lib, "cuOld").deprecated, "use cuNew");
  ASSERT_TRUE(function(lib, "cuOlder").deprecated.has_value());
  EXPECT_EQ(*function(lib, "cuOlder").deprecated, "");
  EXPECT_FALSE(function(lib, "cuNew").deprecated.has_value());
}

TEST(FrontendRecords, AnonymousMembersGetSynthesizedRecords) {
  const Library lib = parse_c(R"(
typedef struct S_st {
  int kind;
  union { int a; float b; };
  struct { int x; } named;
} S;
int cuUse(S *s);
)");
  const codegen::Record* anon = lib.find_record("anon_S_st_0");
  ASSERT_NE(anon, nullptr);
  EXPECT_TRUE(anon->is_union);
  EXPECT_TRUE(anon->synthesized_name);
  ASSERT_EQ(anon->fields.size(), 2u);
  EXPECT_EQ(anon->fields[0].name, "a");
  EXPECT_EQ(anon->fields[1].name, "b");

  // No C or C++ name reaches a C11 anonymous member's type.
  EXPECT_EQ(anon->cpp_name, "");

  const codegen::Record* inner = lib.find_record("anon_S_st_named");
  ASSERT_NE(inner, nullptr);
  EXPECT_FALSE(inner->is_union);
  EXPECT_TRUE(inner->synthesized_name);
  EXPECT_EQ(inner->cpp_name, "decltype(S_st::named)");

  const codegen::Record* outer = lib.find_record("S_st");
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->tag, "S_st");
  ASSERT_EQ(outer->fields.size(), 3u);
  EXPECT_EQ(outer->fields[0].name, "kind");
  EXPECT_FALSE(outer->fields[0].anonymous_member);
  EXPECT_EQ(outer->fields[1].name, "");
  EXPECT_TRUE(outer->fields[1].anonymous_member);
  EXPECT_EQ(outer->fields[1].type.kind, Type::Kind::Record);
  EXPECT_EQ(outer->fields[1].type.record, "anon_S_st_0");
  EXPECT_EQ(outer->fields[1].type.spelling, "anon_S_st_0");
  EXPECT_EQ(outer->fields[2].name, "named");
  EXPECT_FALSE(outer->fields[2].anonymous_member);
  EXPECT_EQ(outer->fields[2].type.record, "anon_S_st_named");
  // Emitters declare records in order, so a nested record must come first.
  EXPECT_LT(anon->order, outer->order);
  EXPECT_LT(inner->order, outer->order);

  const Typedef* alias = lib.find_typedef("S");
  ASSERT_NE(alias, nullptr);
  EXPECT_EQ(alias->kind, Typedef::Kind::RecordAlias);
  EXPECT_EQ(alias->record, "S_st");
}

TEST(FrontendRecords, NamedStructDefinedInsideAnotherIsItsMemberInCpp) {
  const Library lib = parse_c(R"(
typedef union Outer_u {
  struct Inner_st { int v; } inner;
  int raw;
} Outer;
int cuUse(Outer *o);
)");
  const codegen::Record* inner = lib.find_record("Inner_st");
  const codegen::Record* outer = lib.find_record("Outer_u");
  ASSERT_NE(inner, nullptr);
  ASSERT_NE(outer, nullptr);
  EXPECT_FALSE(inner->synthesized_name);
  EXPECT_EQ(inner->cpp_name, "Outer_u::Inner_st");
  EXPECT_EQ(outer->cpp_name, "Outer_u");
  EXPECT_LT(inner->order, outer->order);
  EXPECT_EQ(std::count_if(lib.records.begin(), lib.records.end(),
                          [](const codegen::Record& r) { return r.name == "Inner_st"; }),
            1);
}

TEST(FrontendTypedefs, OpaqueStructPointerIsAHandle) {
  const Library lib = parse_c(R"(
typedef struct CUctx_st *CUcontext;
int cuCtxGetCurrent(CUcontext *pctx);
)");
  const Typedef* handle = lib.find_typedef("CUcontext");
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->kind, Typedef::Kind::Handle);
  EXPECT_EQ(handle->record, "CUctx_st");
  const codegen::Record* record = lib.find_record("CUctx_st");
  ASSERT_NE(record, nullptr);
  EXPECT_FALSE(record->is_complete);
  EXPECT_EQ(std::count_if(lib.records.begin(), lib.records.end(),
                          [](const codegen::Record& r) { return r.name == "CUctx_st"; }),
            1);
}

TEST(FrontendTypedefs, FunctionPointerKeepsParameterNamesAndSpelledTypes) {
  const Library lib = parse_c(R"(
typedef struct CUstream_st *CUstream;
typedef int CUresult;
typedef void (*CUhostFn)(void *userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);
typedef void (*CUunnamedFn)(int, float);
int cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
)");
  const Typedef* host = lib.find_typedef("CUhostFn");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->kind, Typedef::Kind::FunctionPointer);
  EXPECT_EQ(host->fn_result.spelling, "void");
  ASSERT_EQ(host->fn_params.size(), 1u);
  EXPECT_EQ(host->fn_params[0].name, "userData");
  EXPECT_EQ(host->fn_params[0].type.spelling, "void *");

  const Typedef* cb = lib.find_typedef("CUstreamCallback");
  ASSERT_NE(cb, nullptr);
  ASSERT_EQ(cb->fn_params.size(), 3u);
  EXPECT_EQ(cb->fn_params[0].name, "hStream");
  EXPECT_EQ(cb->fn_params[0].type.spelling, "CUstream");
  EXPECT_EQ(cb->fn_params[1].name, "status");
  EXPECT_EQ(cb->fn_params[1].type.spelling, "CUresult");
  EXPECT_EQ(cb->fn_params[2].name, "userData");

  const Typedef* unnamed = lib.find_typedef("CUunnamedFn");
  ASSERT_NE(unnamed, nullptr);
  ASSERT_EQ(unnamed->fn_params.size(), 2u);
  EXPECT_EQ(unnamed->fn_params[0].name, "arg0");
  EXPECT_EQ(unnamed->fn_params[1].name, "arg1");

  const auto& launch = function(lib, "cuLaunchHostFunc");
  EXPECT_EQ(launch.params[1].type.kind, Type::Kind::FunctionPointer);
  EXPECT_EQ(launch.params[1].type.spelling, "CUhostFn");
}

TEST(FrontendMacros, ConstantsAreEvaluatedByKind) {
  const Library lib = parse_c(R"(
typedef struct CUstream_st *CUstream;
#define V 13000
#define H ((0x10) << 4)
#define BIG (1ULL << 40)
#define NEG (-5)
#define P ((void*)0x00)
#define S ((CUstream)0x2)
#define F 1.5
#define ATTR __attribute__((x))
#define TYPE unsigned int
int cuUse(void);
)");
  const Macro* v = macro(lib, "V");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->kind, Macro::Kind::Integer);
  EXPECT_EQ(v->int_value, 13000);
  EXPECT_EQ(v->c_type, "int");
  EXPECT_EQ(v->spelling, "13000");

  const Macro* h = macro(lib, "H");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->kind, Macro::Kind::Integer);
  EXPECT_EQ(h->int_value, 256);

  const Macro* big = macro(lib, "BIG");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->int_value, 1LL << 40);
  EXPECT_EQ(big->c_type, "unsigned long long");

  const Macro* neg = macro(lib, "NEG");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->int_value, -5);

  const Macro* p = macro(lib, "P");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, Macro::Kind::Pointer);
  EXPECT_EQ(p->int_value, 0);
  EXPECT_EQ(p->c_type, "void *");

  const Macro* s = macro(lib, "S");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->kind, Macro::Kind::Pointer);
  EXPECT_EQ(s->int_value, 2);
  EXPECT_EQ(s->c_type, "CUstream");

  const Macro* f = macro(lib, "F");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, Macro::Kind::Float);
  EXPECT_DOUBLE_EQ(f->float_value, 1.5);

  EXPECT_EQ(macro(lib, "ATTR"), nullptr);
  EXPECT_EQ(macro(lib, "TYPE"), nullptr);
}

TEST(FrontendMacros, StringMacroIsAString) {
  const Library lib = parse_c("#define CUBIND_TEST_NAME \"hello\"\nint cuUse(void);\n");
  const Macro* str = macro(lib, "CUBIND_TEST_NAME");
  ASSERT_NE(str, nullptr) << "a string literal macro was dropped";
  EXPECT_EQ(str->kind, Macro::Kind::String);
  EXPECT_EQ(str->string_value, "hello");
}

TEST(FrontendMacros, CudaVersionMacroSetsTheLibraryVersion) {
  const Library lib = parse_c("#define CUDA_VERSION 12080\nint cuUse(void);\n");
  EXPECT_EQ(lib.cuda_version, 12080);
}

TEST(FrontendMacros, MacroDocCommentIsAttached) {
  const Library lib = parse_c(R"(
/** The legacy default stream. */
#define CU_STREAM_LEGACY ((void*)0x1)
int cuUse(void);
)");
  const Macro* m = macro(lib, "CU_STREAM_LEGACY");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->doc, HasSubstr("legacy default stream"));
}

TEST(FrontendMacros, DocCommentBelongsOnlyToTheMacroRightAfterIt) {
  const Library lib = parse_c(R"(
/** Documented. */
#define CU_DOCUMENTED 1
#define CU_UNDOCUMENTED 2
int cuUse(void);
)");
  const Macro* documented = macro(lib, "CU_DOCUMENTED");
  const Macro* undocumented = macro(lib, "CU_UNDOCUMENTED");
  ASSERT_NE(documented, nullptr);
  ASSERT_NE(undocumented, nullptr);
  EXPECT_EQ(documented->doc, "Documented.");
  EXPECT_EQ(undocumented->doc, "");
}

TEST(FrontendTypes, ParameterTypesKeepTypedefSpellings) {
  const Library lib = parse_c(R"(
#include <stddef.h>
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef enum CUmode_enum { CU_MODE_A = 0 } CUmode;
int cuCall(CUdeviceptr dptr, size_t bytes, const char *name, CUcontext *pctx, void **pp,
           CUdeviceptr *out, const void *src, CUmode mode, CUcontext ctx);
)");
  const auto& f = function(lib, "cuCall");
  ASSERT_EQ(f.params.size(), 9u);
  const Type& dptr = f.params[0].type;
  EXPECT_EQ(dptr.spelling, "CUdeviceptr");
  EXPECT_EQ(dptr.canonical, "unsigned long long");
  EXPECT_EQ(dptr.kind, Type::Kind::Builtin);
  EXPECT_EQ(f.params[1].type.spelling, "size_t");

  const Type& name = f.params[2].type;
  EXPECT_EQ(name.spelling, "const char *");
  EXPECT_EQ(name.kind, Type::Kind::Pointer);
  EXPECT_EQ(name.pointee, "char");
  EXPECT_TRUE(name.pointee_const);
  EXPECT_EQ(name.pointer_depth, 1);

  const Type& pctx = f.params[3].type;
  EXPECT_EQ(pctx.spelling, "CUcontext *");
  EXPECT_EQ(pctx.pointer_depth, 1);
  EXPECT_EQ(pctx.pointee, "CUcontext");
  EXPECT_EQ(pctx.pointee_kind, Type::Kind::Handle);
  EXPECT_FALSE(pctx.pointee_const);

  const Type& pp = f.params[4].type;
  EXPECT_EQ(pp.spelling, "void **");
  EXPECT_EQ(pp.pointer_depth, 2);
  EXPECT_EQ(pp.pointee, "void *");

  const Type& out = f.params[5].type;
  EXPECT_EQ(out.spelling, "CUdeviceptr *");
  EXPECT_EQ(out.pointee, "CUdeviceptr");
  EXPECT_EQ(out.pointee_kind, Type::Kind::Builtin);

  EXPECT_TRUE(f.params[6].type.pointee_const);
  EXPECT_EQ(f.params[6].type.pointee, "void");
  EXPECT_EQ(f.params[7].type.kind, Type::Kind::Enum);
  EXPECT_EQ(f.params[7].type.spelling, "CUmode");
  EXPECT_EQ(f.params[8].type.kind, Type::Kind::Handle);
  EXPECT_EQ(f.params[8].type.spelling, "CUcontext");
}

TEST(FrontendTypes, ArrayFieldsHaveElementAndExtents) {
  const Library lib = parse_c(R"(
typedef struct CUuuid_st { char bytes[16]; } CUuuid;
typedef struct M_st { float m[2][3]; struct { int v; } parts[4]; } M;
int cuUse(CUuuid *u, M *m);
)");
  const codegen::Record* uuid = lib.find_record("CUuuid_st");
  ASSERT_NE(uuid, nullptr);
  ASSERT_EQ(uuid->fields.size(), 1u);
  EXPECT_EQ(uuid->fields[0].type.kind, Type::Kind::Array);
  EXPECT_EQ(uuid->fields[0].type.element, "char");
  EXPECT_THAT(uuid->fields[0].type.extents, ElementsAre(16u));

  const codegen::Record* m = lib.find_record("M_st");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->fields.size(), 2u);
  EXPECT_THAT(m->fields[0].type.extents, ElementsAre(2u, 3u));
  EXPECT_EQ(m->fields[0].type.element, "float");
  EXPECT_THAT(m->fields[1].type.extents, ElementsAre(4u));
  EXPECT_EQ(m->fields[1].type.element, "anon_M_st_parts");
  EXPECT_NE(lib.find_record("anon_M_st_parts"), nullptr);
}

TEST(FrontendDocs, BriefAndParamDocsWithDirections) {
  const Library lib = parse_c(R"(
/**
 * \brief Does X
 *
 * Longer text.
 *
 * \param[out] p - the result
 * \param[in] n - how many
 * \param flags - no direction given
 * \return 0 on success
 */
int cuDoX(int *p, int n, unsigned int flags);
)");
  const auto& f = function(lib, "cuDoX");
  EXPECT_THAT(f.doc, HasSubstr("Does X"));
  ASSERT_EQ(f.params.size(), 3u);
  EXPECT_EQ(f.params[0].doc, "the result");
  EXPECT_EQ(f.params[0].doc_direction, "out");
  EXPECT_EQ(f.params[1].doc, "how many");
  EXPECT_EQ(f.params[1].doc_direction, "in");
  EXPECT_EQ(f.params[2].doc, "no direction given");
  EXPECT_EQ(f.params[2].doc_direction, "");
}

TEST(FrontendDocs, ParamDocRunsOverInlineCommands) {
  // cuda.h: "\param len - Maximum length of string to store in \p name".
  const Library lib = parse_c(R"(
/**
 * \brief Returns an identifier string for the device
 *
 * \param name - Returned identifier string for the device
 * \param len  - Maximum length of string to store in \p name
 * \param dev  - Device to get identifier string for
 *
 * \return ::CUDA_SUCCESS
 */
int cuDeviceGetName(char *name, int len, int dev);
)");
  const auto& f = function(lib, "cuDeviceGetName");
  EXPECT_THAT(f.params[1].doc, HasSubstr("Maximum length of string to store in"));
  EXPECT_THAT(f.params[1].doc, HasSubstr("name"));
  EXPECT_EQ(f.params[2].doc, "Device to get identifier string for");
}

TEST(FrontendDocs, ParamDirectionInOutIsInout) {
  const Library lib = parse_c(R"(
/**
 * \brief Updates.
 * \param[in,out] v - the value
 */
int cuUpdate(int *v);
)");
  EXPECT_EQ(function(lib, "cuUpdate").params[0].doc_direction, "inout");
}

TEST(FrontendNvJitLink, StaticInlineWrapperBindsTheVersionedSymbol) {
  const Library lib = parse_c(R"(
extern int __fooCreate_13_0(int *h);
/**
 * \brief Creates a foo.
 * \param[out] h - the new foo
 */
#ifndef NO_INLINE
static inline int fooCreate(int *h) { return __fooCreate_13_0(h); }
#endif
)",
                              "foo.h", false);
  EXPECT_THAT(function_names(lib), ElementsAre("fooCreate"));
  const auto& f = function(lib, "fooCreate");
  EXPECT_EQ(f.versioned_symbol, "__fooCreate_13_0");
  EXPECT_EQ(f.abi_symbol, "__fooCreate_13_0");
  EXPECT_THAT(f.doc, HasSubstr("Creates a foo."));
  ASSERT_EQ(f.params.size(), 1u);
  EXPECT_EQ(f.params[0].doc_direction, "out");
  EXPECT_EQ(f.params[0].doc, "the new foo");
  EXPECT_EQ(lib.find_function("__fooCreate_13_0"), nullptr);
}

TEST(FrontendNvJitLink, WrapperWithoutDocTakesTheVersionedDeclarationsDoc) {
  const Library lib = parse_c(R"(
/**
 * \brief Destroys a foo.
 * \param[in] h - the foo
 */
extern int __fooDestroy_13_0(int h);
static inline int fooDestroy(int h) { return __fooDestroy_13_0(h); }
)",
                              "foo.h", false);
  const auto& f = function(lib, "fooDestroy");
  EXPECT_EQ(f.abi_symbol, "__fooDestroy_13_0");
  EXPECT_THAT(f.doc, HasSubstr("Destroys a foo."));
  EXPECT_EQ(f.params[0].doc_direction, "in");
}

TEST(FrontendNvJitLink, NonStaticDefinitionIsNotBound) {
  const Library lib = parse_c(R"(
int helper(int x) { return x; }
int fooVersion(int *major);
)",
                              "foo.h", false);
  EXPECT_THAT(function_names(lib), ElementsAre("fooVersion"));
}

TEST(FrontendHeaderHelpers, InlineHelperThatCallsNothingRunsFromTheHeader) {
  // As make_cudaExtent in driver_functions.h: no entry point to load.
  const Library lib = parse_c(R"(
struct extent { unsigned long w, h; };
static inline struct extent make_extent(unsigned long w, unsigned long h) {
  struct extent e; e.w = w; e.h = h; return e;
}
int fooVersion(int *major);
)",
                              "foo.h", false);
  const auto& helper = function(lib, "make_extent");
  EXPECT_TRUE(helper.header_inline);
  EXPECT_EQ(helper.abi_symbol, "make_extent");
  EXPECT_TRUE(helper.versioned_symbol.empty());
  EXPECT_FALSE(function(lib, "fooVersion").header_inline);
}

class FrontendPfn : public ::testing::Test {
 protected:
  Library parse(const std::string& code) {
    codegen::LibraryDescriptor source = snippet_source("snippet.h");
    source.extra_headers = {"pfn_versions.h"};
    return codegen::parse_snippet(code, "snippet.h", source, frontend_options({CUBIND_CODEGEN_TEST_DATA}));
  }
};

// pfn_versions.h also has PFN_cuFoo_v13000_ptds with two parameters: a
// per-thread variant, not an ABI version, so cuFoo_v2 must stay at 12050.
TEST_F(FrontendPfn, VersionIsTheNewestPfnWithTheSameParameterCount) {
  const Library lib = parse(R"(
#define CUDA_VERSION 13000
int cuFoo(int a);
int cuFoo_v2(int a, int b);
int cuNoPfn(void);
)");
  const auto& foo = function(lib, "cuFoo");
  EXPECT_EQ(foo.abi_version, 3020);
  EXPECT_EQ(foo.proc_name, "cuFoo");
  const auto& foo2 = function(lib, "cuFoo_v2");
  EXPECT_EQ(foo2.abi_version, 12050);
  EXPECT_EQ(foo2.proc_name, "cuFoo");
  const auto& none = function(lib, "cuNoPfn");
  EXPECT_EQ(none.abi_version, 13000);
  EXPECT_EQ(none.proc_name, "cuNoPfn");
  ASSERT_EQ(lib.notes.size(), 1u);
  EXPECT_THAT(lib.notes[0], HasSubstr("cuNoPfn"));
}

// cuBar_v3 takes the newest typedef; cuBar, older, the newest before it, though
// both have one parameter: asking for 13040 would give cuBar the newer ABI.
TEST_F(FrontendPfn, AnOlderDeclarationNeverTakesTheAbiOfANewerOne) {
  const Library lib = parse(R"(
#define CUDA_VERSION 13050
int cuBar(int a);
int cuBar_v3(int a);
)");
  const auto& bar = function(lib, "cuBar");
  EXPECT_EQ(bar.abi_version, 12030);
  const auto& bar3 = function(lib, "cuBar_v3");
  EXPECT_EQ(bar3.abi_version, 13040);
  EXPECT_EQ(bar3.proc_name, "cuBar");
}

TEST_F(FrontendPfn, DeclarationsOfTheExtraHeaderAreNotOwned) {
  const Library lib = parse("int cuFoo(int a);\n");
  EXPECT_THAT(function_names(lib), ElementsAre("cuFoo"));
  EXPECT_EQ(lib.find_function("cuFromPfnHeader"), nullptr);
  EXPECT_TRUE(lib.typedefs.empty());
}

TEST(FrontendForeignTypes, NamedTypesOfAnotherHeaderAreRecordedByWhatTheyAre) {
  codegen::LibraryDescriptor source = snippet_source("snippet.h");
  source.headers = {"foreign_types.h", "snippet.h"};
  source.foreign_types = {"ForeignDevice", "ForeignImage", "ForeignGetProcAddress"};
  const Library lib = codegen::parse_snippet(
      "int cuUse(ForeignDevice d, ForeignImage i, ForeignGetProcAddress *g);\n", "snippet.h", source,
      frontend_options({CUBIND_CODEGEN_TEST_DATA}));
  const auto* device = lib.find_typedef("ForeignDevice");
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(device->foreign);
  EXPECT_EQ(device->target.spelling, "unsigned int");
  const auto* image = lib.find_typedef("ForeignImage");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->target.spelling, "void *");
  // A function type is opaque: it is only ever taken by pointer.
  const auto* get = lib.find_typedef("ForeignGetProcAddress");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->target.kind, codegen::Type::Kind::Void);
  EXPECT_EQ(lib.find_typedef("ForeignUnused"), nullptr);
  EXPECT_EQ(lib.find_typedef("ForeignStatus"), nullptr);
}

TEST(Frontend, TheLibraryCarriesItsDescriptor) {
  codegen::LibraryDescriptor source = snippet_source("snippet.h", false);
  source.owned_files = {"snippet.h", "snippet_types.h"};
  source.display_name = "Snippet";
  source.env_override = "CUBIND_SNIPPET_LIBRARY";
  source.wheel_dirs = {"nvidia/snippet/lib"};
  source.python.title = "a snippet (snippet.h)";
  source.python.errors = codegen::LibraryDescriptor::Errors::Raise;
  const Library lib = codegen::parse_snippet("int snippetVersion(int *v);\n", "snippet.h", source, frontend_options());
  EXPECT_EQ(lib.name, "nvjitlink");
  EXPECT_EQ(lib.display_name, "Snippet");
  EXPECT_EQ(lib.env_override, "CUBIND_SNIPPET_LIBRARY");
  EXPECT_THAT(lib.wheel_dirs, ElementsAre("nvidia/snippet/lib"));
  EXPECT_EQ(lib.python.title, "a snippet (snippet.h)");
  EXPECT_EQ(lib.python.errors, codegen::LibraryDescriptor::Errors::Raise);
  // Owned files beyond the parsed headers are the library's type headers.
  EXPECT_THAT(lib.type_headers, ElementsAre("snippet_types.h"));
  ASSERT_NE(lib.find_function("snippetVersion"), nullptr);
}

TEST(FrontendErrors, MissingIncludeDirectoryIsNamed) {
  codegen::LibraryDescriptor source = snippet_source("cuda.h");
  try {
    codegen::parse_library(source, frontend_options({"/nonexistent/cubind-include"}));
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/cubind-include"));
  }
}

TEST(FrontendErrors, NoIncludeDirectoryIsAnError) {
  EXPECT_THROW(codegen::parse_library(snippet_source("cuda.h"), frontend_options()), std::runtime_error);
}

TEST(FrontendErrors, MissingHeaderIsNamed) {
  codegen::LibraryDescriptor source = snippet_source("no_such_header.h");
  try {
    codegen::parse_library(source, frontend_options({CUBIND_CODEGEN_TEST_DATA}));
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no_such_header.h"));
    EXPECT_THAT(e.what(), HasSubstr(CUBIND_CODEGEN_TEST_DATA));
  }
}

TEST(FrontendErrors, MissingExtraHeaderIsNamed) {
  codegen::LibraryDescriptor source = snippet_source("pfn_versions.h");
  source.extra_headers = {"no_such_typedefs.h"};
  try {
    codegen::parse_library(source, frontend_options({CUBIND_CODEGEN_TEST_DATA}));
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no_such_typedefs.h"));
  }
}

TEST(FrontendErrors, SyntaxErrorReportsClangsMessageWithFileAndLine) {
  try {
    parse_c("int cuGood(void);\nint cuBad(;\n", "broken.h");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken.h:2:"));
    EXPECT_THAT(e.what(), HasSubstr("expected"));
  }
}

TEST(FrontendErrors, HeaderWithoutFunctionsIsAnError) {
  try {
    parse_c("typedef int CUresult;\n");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no function declarations"));
  }
}

TEST(FrontendLibrary, ParseLibraryReadsHeadersFromTheIncludeDirectory) {
  codegen::LibraryDescriptor source = snippet_source("pfn_versions.h");
  const Library lib = codegen::parse_library(source, frontend_options({CUBIND_CODEGEN_TEST_DATA}));
  EXPECT_THAT(function_names(lib), ElementsAre("cuFromPfnHeader"));
  EXPECT_EQ(function(lib, "cuFromPfnHeader").location.file, "pfn_versions.h");
}

TEST(FrontendLibrary, OnlyOwnedFilesContributeDeclarations) {
  codegen::LibraryDescriptor source = snippet_source("snippet.h");
  source.owned_files = {"other.h"};
  try {
    codegen::parse_snippet("int cuFoo(void);\n", "snippet.h", source, frontend_options());
    FAIL() << "a snippet owned by no file should give no functions";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no function declarations"));
  }
}

TEST(FrontendJson, IrJsonNamesRenamesAndPerThreadVariants) {
  const Library lib = parse_c(std::string(kPerThreadPrologue) + R"(
#define cuBar __CUDA_API_PTDS(cuBar_v2)
__attribute__((deprecated("old"))) CUresult cuBar(int stream);
)");
  const auto j = codegen::to_json(lib);
  EXPECT_EQ(j["library"], "driver");
  ASSERT_EQ(j["functions"].size(), 1u);
  const auto& f = j["functions"][0];
  EXPECT_EQ(f["name"], "cuBar");
  EXPECT_EQ(f["abi_symbol"], "cuBar_v2");
  EXPECT_EQ(f["per_thread"], "ptds");
  EXPECT_EQ(f["deprecated"], "old");
  EXPECT_EQ(f["location"], "snippet.h:13");
  ASSERT_EQ(j["renames"].size(), 1u);
  EXPECT_EQ(j["renames"][0]["per_thread"], "ptds");
}

}  // namespace

TEST(FrontendDocs, DocCommentReachesTheCDeclarationAfterACxxVariant) {
  // cuda_runtime_api.h: the doc comment, then a C++ declaration with a default
  // argument under #if defined(__cplusplus), then the C one under #else.
  const Library lib = parse_c(R"(
/**
 * \brief Allocates managed memory
 */
#if defined(__cplusplus)
extern int cudaMallocManagedLike(void **devPtr, unsigned int flags = 1);
#else
extern int cudaMallocManagedLike(void **devPtr, unsigned int flags);
#endif
)");
  ASSERT_EQ(lib.functions.size(), 1u);
  EXPECT_THAT(lib.functions[0].doc, HasSubstr("Allocates managed memory"));
}

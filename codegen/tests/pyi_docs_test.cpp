// The .pyi stubs carry the whole header documentation, on hand-built IR: every
// function's text with its parameters, what it returns and its C function (the
// same text as the .pyx docstring below its signature line), every enum and
// enumerator, every struct and field, every handle.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "codegen/emit_python.hpp"
#include "codegen/emitters.hpp"
#include "test_support.hpp"

namespace {

using codegen::Enum;
using codegen::Field;
using codegen::Function;
using codegen::Library;
using codegen::Record;
using codegen::Type;
using codegen::Typedef;
using codegen_test::builtin;
using codegen_test::named;
using codegen_test::param;
using codegen_test::pointer;
using ::testing::HasSubstr;
using ::testing::Not;

const char* const kQueryDoc =
    "\\brief Returns the size of a widget\n\n"
    "Writes the size of \\p widget into \\p *size. The size is counted in bytes\n"
    "and never changes while the widget lives.\n\n"
    "\\param size   - Returned size of \\p widget\n"
    "\\param widget - Widget to query\n\n"
    "\\return\n CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE\n\n"
    "\\sa cuWidgetCreate";

Library widget_ir() {
  Library lib;
  lib.name = "driver";
  lib.headers = {"widget.h"};
  lib.soname = "libcuda.so.1";
  lib.display_name = "the CUDA driver";
  lib.system_loader_only = true;
  lib.resolution = codegen::LibraryDescriptor::Resolution::ProcAddress;
  lib.cuda_version = 13000;

  Enum result;
  result.name = "CUresult";
  result.tag = "cudaError_enum";
  result.doc = "Error codes.\n\nEvery call returns one of these.";
  result.enumerators = {{"CUDA_SUCCESS", 0, "The call succeeded and returned no error."},
                        {"CUDA_ERROR_INVALID_VALUE", 1, "An argument is outside its range."}};
  lib.enums.push_back(result);

  Record widget_st;
  widget_st.order = 1;
  widget_st.name = "CUwidget_st";
  widget_st.tag = "CUwidget_st";
  widget_st.is_complete = false;
  lib.records.push_back(widget_st);

  Typedef widget;
  widget.order = 2;
  widget.name = "CUwidget";
  widget.kind = Typedef::Kind::Handle;
  widget.target = pointer("struct CUwidget_st", Type::Kind::Record);
  widget.record = "CUwidget_st";
  widget.doc = "A widget handle.\n\nWidgets live until destroyed.";
  lib.typedefs.push_back(widget);

  Record desc;
  desc.order = 3;
  desc.name = "CUwidgetDesc_st";
  desc.tag = "CUwidgetDesc_st";
  desc.cpp_name = "CUwidgetDesc_st";
  desc.doc = "Describes a widget.\n\nPass it to cuWidgetCreate.";
  Field width{"width", builtin("unsigned int")};
  width.doc = "Width in elements.\nZero is not allowed.";
  Field depth{"depth", builtin("unsigned int")};
  desc.fields = {width, depth};
  lib.records.push_back(desc);

  Typedef desc_alias;
  desc_alias.order = 4;
  desc_alias.name = "CUwidgetDesc";
  desc_alias.kind = Typedef::Kind::RecordAlias;
  desc_alias.target = named(Type::Kind::Record, "struct CUwidgetDesc_st", "CUwidgetDesc_st");
  desc_alias.record = "CUwidgetDesc_st";
  lib.typedefs.push_back(desc_alias);

  Record launch;
  launch.order = 5;
  launch.name = "CUwidgetLaunch_st";
  launch.tag = "CUwidgetLaunch_st";
  launch.cpp_name = "CUwidgetLaunch_st";
  launch.fields = {Field{"kernelParams", pointer("void *", Type::Kind::Void, false, 2)},
                   Field{"gridDimX", builtin("unsigned int")}};
  lib.records.push_back(launch);

  Function query;
  query.order = 6;
  query.name = "cuWidgetGetSize";
  query.abi_symbol = "cuWidgetGetSize";
  query.proc_name = "cuWidgetGetSize";
  query.abi_version = 13000;
  query.result = named(Type::Kind::Enum, "CUresult");
  auto size = param("size", pointer("size_t", Type::Kind::Builtin));
  size.direction = "out";
  auto handle = param("widget", named(Type::Kind::Handle, "CUwidget"));
  handle.direction = "in";
  query.params = {size, handle};
  query.doc = kQueryDoc;
  query.deprecated = "use cuWidgetGetExtent";
  query.location = {"widget.h", 42};
  lib.functions.push_back(query);
  return lib;
}

std::string emitted(const Library& lib, const std::string& suffix) {
  codegen::EmitOptions options;
  options.generator_version = "9.9.9";
  for (const auto& f : codegen::emit_python_module(lib, options)) {
    if (f.path.size() > suffix.size() && f.path.compare(f.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return f.content;
    }
  }
  return "";
}

// The text from `begin` up to the next line that starts a definition at the top level.
std::string block(const std::string& text, const std::string& begin) {
  const auto start = text.find(begin);
  if (start == std::string::npos) return "";
  auto end = start + begin.size();
  while (true) {
    end = text.find('\n', end);
    if (end == std::string::npos || end + 1 >= text.size()) return text.substr(start);
    const char next = text[end + 1];
    if (next != ' ' && next != '\n') return text.substr(start, end - start);
    ++end;
  }
}

TEST(PyiDocs, AFunctionCarriesItsWholeTextParametersReturnsAndCFunction) {
  const std::string stub = block(emitted(widget_ir(), ".pyi"), "def cuWidgetGetSize(");
  ASSERT_FALSE(stub.empty());
  EXPECT_THAT(stub, HasSubstr("Returns the size of a widget"));
  EXPECT_THAT(stub, HasSubstr("and never changes while the widget lives."));
  EXPECT_THAT(stub, HasSubstr("- size   - Returned size of widget"));
  EXPECT_THAT(stub, HasSubstr("- widget - Widget to query"));
  EXPECT_THAT(stub, HasSubstr("See also: cuWidgetCreate"));
  EXPECT_THAT(stub, HasSubstr("Returns: (status, size)"));
  EXPECT_THAT(stub, HasSubstr("C function: cuWidgetGetSize (widget.h)"));
  EXPECT_THAT(stub, HasSubstr("Deprecated: use cuWidgetGetExtent"));
  EXPECT_THAT(stub, Not(HasSubstr("\\brief")));
}

TEST(PyiDocs, TheStubSaysWhatTheRuntimeDocstringSaysBelowItsSignature) {
  const Library lib = widget_ir();
  const std::string stub = block(emitted(lib, ".pyi"), "def cuWidgetGetSize(");
  const std::string pyx = block(emitted(lib, ".pyx"), "def cuWidgetGetSize(");
  ASSERT_FALSE(stub.empty());
  ASSERT_FALSE(pyx.empty());
  // The runtime docstring opens with the signature; the rest is the stub's text.
  const auto body = pyx.find(")\n\n", pyx.find("\"\"\"")) + 3;
  std::string runtime_text = pyx.substr(body, pyx.find("\"\"\"", body) - body);
  runtime_text.erase(0, runtime_text.find_first_not_of(' '));
  ASSERT_THAT(runtime_text, HasSubstr("C function: cuWidgetGetSize"));
  EXPECT_THAT(stub, HasSubstr(runtime_text));
}

TEST(PyiDocs, EnumsAndEnumeratorsCarryTheirText) {
  const std::string stub = block(emitted(widget_ir(), ".pyi"), "class CUresult(");
  EXPECT_THAT(stub, HasSubstr("Error codes.\n\n    Every call returns one of these."));
  EXPECT_THAT(stub, HasSubstr("CUDA_SUCCESS: CUresult\n    \"\"\"The call succeeded and returned no error.\n    \"\"\""));
  EXPECT_THAT(stub, HasSubstr("CUDA_ERROR_INVALID_VALUE: CUresult\n    \"\"\"An argument is outside its range.\n    \"\"\""));
}

TEST(PyiDocs, StructsAndFieldsCarryTheirText) {
  const std::string stub = block(emitted(widget_ir(), ".pyi"), "class CUwidgetDesc(");
  EXPECT_THAT(stub, HasSubstr("Describes a widget.\n\n    Pass it to cuWidgetCreate."));
  EXPECT_THAT(stub, HasSubstr("width: int\n    \"\"\"Width in elements.\n    Zero is not allowed.\n    \"\"\""));
  // A field without documentation has none, and no empty docstring.
  EXPECT_THAT(stub, HasSubstr("depth: int\n"));
  EXPECT_THAT(stub, Not(HasSubstr("depth: int\n    \"\"\"")));
}

TEST(PyiFields, KernelParamsFieldsTakeAnyOfTheirForms) {
  // The getter gives an address; the setter takes one, None or (values, types).
  const std::string stub = block(emitted(widget_ir(), ".pyi"), "class CUwidgetLaunch_st(");
  EXPECT_THAT(stub, HasSubstr("kernelParams: Any\n"));
  EXPECT_THAT(stub, HasSubstr("gridDimX: int\n"));
}

TEST(PyiDocs, HandlesCarryTheirTypedefText) {
  const std::string stub = block(emitted(widget_ir(), ".pyi"), "class CUwidget(");
  EXPECT_THAT(stub, HasSubstr("A widget handle.\n\n    Widgets live until destroyed."));
}

}  // namespace

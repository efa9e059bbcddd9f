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

// A module that raises, as cuda.bindings.nvml: enum members named by its rules,
// and enums built from groups of #define constants.
Library gadget_ir() {
  Library lib;
  lib.name = "nvml";
  lib.headers = {"gadget.h"};
  lib.soname = "libgadget.so.1";
  lib.display_name = "gadget";
  lib.python.errors = codegen::LibraryDescriptor::Errors::Raise;
  lib.python.error_class = "NvmlError";
  lib.python.prefix = "nvml";
  lib.python.constants = {"NVML_ANSWER"};
  Enum status;
  status.name = "nvmlReturn_t";
  status.enumerators = {{"NVML_SUCCESS", 0, ""}, {"NVML_ERROR_UNINITIALIZED", 1, ""}};
  Enum clock;  // members named after their enum: the short names alone
  clock.name = "nvmlClockId_t";
  clock.enumerators = {{"NVML_CLOCK_ID_CURRENT", 0, ""}, {"NVML_CLOCK_ID_APP_CLOCK_TARGET", 1, ""}};
  Enum p2p;  // members named otherwise: both names
  p2p.name = "nvmlGpuP2PStatus_t";
  p2p.enumerators = {{"NVML_P2P_STATUS_OK", 0, ""}, {"NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED", 1, ""}};
  Enum version;  // a rest that would begin with a digit: the prefix is cut back a word
  version.name = "nvmlNvlinkVersion_t";
  version.enumerators = {{"NVML_NVLINK_VERSION_INVALID", 0, ""}, {"NVML_NVLINK_VERSION_1_0", 1, ""}};
  lib.enums = {status, clock, p2p, version};
  Function init;
  init.name = "nvmlInit_v2";
  init.abi_symbol = "nvmlInit_v2";
  init.result = named(Type::Kind::Enum, "nvmlReturn_t");
  lib.functions.push_back(init);
  lib.python.member_names["nvmlClockId_t"] = {{"NOW", "NVML_CLOCK_ID_CURRENT"}};
  const auto macro = [](const std::string& name, std::int64_t value, const std::string& c_type,
                        const std::string& doc = "") {
    codegen::Macro m;
    m.name = name;
    m.int_value = value;
    m.c_type = c_type;
    m.doc = doc;
    return m;
  };
  lib.macros = {macro("NVML_BUS_TYPE_UNKNOWN", 0, "int"), macro("NVML_BUS_TYPE_PCIE", 2, "int"),
                macro("nvmlEventTypeSingleBitEccError", 1, "long long"), macro("nvmlEventTypePState", 4, "long long"),
                macro("nvmlEventTypeOld", 8, "long long", "@deprecated Use another"),
                macro("nvmlEventTypeAll", 5, "long long"), macro("nvmlEventMigConfigChange", 256, "long long"),
                macro("NVML_POLL_ALL", -1, "unsigned long")};
  codegen::LibraryDescriptor::Python::DefineEnum bus{"BusType", "NVML_BUS_TYPE_", "NVML_BUS_TYPE_", {}, {}};
  codegen::LibraryDescriptor::Python::DefineEnum events{
      "EventType", "nvmlEventType", "nvmlEventType", {"nvmlEventTypeAll"}, {{"MIG_CONFIG_CHANGE", "nvmlEventMigConfigChange"}}};
  codegen::LibraryDescriptor::Python::DefineEnum poll{"Poll", "NVML_POLL_", "NVML_", {}, {}};
  lib.python.define_enums = {bus, events, poll};
  return lib;
}

TEST(PythonEnums, MembersAreNamedAsCudaBindingsNvmlNamesThem) {
  const std::string pyx = emitted(gadget_ir(), ".pyx");
  const std::string prefixes = block(pyx, "cdef dict _ENUM_PREFIXES");
  EXPECT_THAT(pyx, HasSubstr("CURRENT 0 APP_CLOCK_TARGET 1 NOW 0 \""));
  EXPECT_THAT(prefixes, Not(HasSubstr("\"ClockId\"")));
  EXPECT_THAT(pyx, HasSubstr("P2P_STATUS_OK 0 P2P_STATUS_CHIPSET_NOT_SUPPORED 1 \""));
  EXPECT_THAT(prefixes, HasSubstr("\"GpuP2PStatus\": \"P2P_STATUS_\""));
  EXPECT_THAT(prefixes, HasSubstr("\"NvlinkVersion\": \"NVLINK_\""));
  const std::string stub = block(emitted(gadget_ir(), ".pyi"), "class ClockId(");
  EXPECT_THAT(stub, HasSubstr("CURRENT: ClockId\n"));
  EXPECT_THAT(stub, HasSubstr("NOW: ClockId\n"));
  EXPECT_THAT(stub, Not(HasSubstr("CLOCK_ID_CURRENT")));
}

TEST(PythonEnums, GroupsOfDefinesBecomeEnums) {
  const std::string pyx = emitted(gadget_ir(), ".pyx");
  EXPECT_THAT(pyx, HasSubstr("UNKNOWN 0 PCIE 2 \""));
  // CamelCase in UPPER_SNAKE; deprecated and excluded constants left out; a member named by hand.
  EXPECT_THAT(pyx, HasSubstr("SINGLE_BIT_ECC_ERROR 1 PSTATE 4 MIG_CONFIG_CHANGE 256 \""));
  EXPECT_THAT(pyx, Not(HasSubstr("OLD 8")));
  // An unsigned constant's value is its bits, as an unsigned number; `strip` keeps POLL_.
  EXPECT_THAT(pyx, HasSubstr("POLL_ALL 18446744073709551615 \""));
  EXPECT_THAT(block(emitted(gadget_ir(), ".pyi"), "class EventType("), HasSubstr("PSTATE: EventType\n"));
}

TEST(PythonEnums, AGroupThatGathersNothingIsAnError) {
  Library lib = gadget_ir();
  lib.python.define_enums.push_back({"Nothing", "NVML_NOTHING_", "NVML_NOTHING_", {}, {}});
  EXPECT_THROW(emitted(lib, ".pyx"), std::runtime_error);
  lib = gadget_ir();
  lib.python.member_names["nvmlClockId_t"] = {{"X", "NVML_NO_SUCH"}};
  EXPECT_THROW(emitted(lib, ".pyx"), std::runtime_error);
}

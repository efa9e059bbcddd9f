// Annotation files (schema, error positions) and classification (`check`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "codegen/annotations.hpp"
#include "test_support.hpp"

// The smallest valid `library:` blocks, on one line so that the lines the
// tests expect in messages are those of the text after them.
#define DRIVER_LIBRARY \
  "library: {name: driver, headers: [cuda.h], soname: libcuda.so.1, display_name: the CUDA driver, " \
  "python: {title: Driver}}\n"
#define NVRTC_LIBRARY \
  "library: {name: nvrtc, headers: [nvrtc.h], soname: libnvrtc.so.13, display_name: NVRTC, " \
  "python: {title: NVRTC}}\n"

namespace {

using codegen::AnnotationError;
using codegen::Annotations;
using codegen::Function;
using codegen::Library;
using codegen::Param;
using codegen::Type;
using codegen_test::builtin;
using codegen_test::named;
using codegen_test::param;
using codegen_test::pointer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

Function function(const std::string& name, std::vector<Param> params) {
  Function f;
  f.name = name;
  f.abi_symbol = name;
  f.result = named(Type::Kind::Enum, "CUresult");
  f.params = std::move(params);
  return f;
}

// cuDo(struct X *x, int n): a non-const struct pointer no rule can classify.
Library library_with_struct_input() {
  Library lib;
  lib.name = "driver";
  lib.headers = {"cuda.h"};
  Type x = pointer("struct X", Type::Kind::Record);
  x.record = "X";
  lib.functions.push_back(function("cuDo", {param("x", x), param("n", builtin("int"))}));
  lib.functions.push_back(function("cuReadSize", {param("size", pointer("size_t", Type::Kind::Builtin))}));
  lib.functions.push_back(function("cuRead", {param("buf", pointer("char", Type::Kind::Builtin))}));
  return lib;
}

Annotations parse(const std::string& text) { return codegen::parse_annotations(text, "ann.yaml"); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const AnnotationError& e) {
    return e.what();
  }
  return "(no error)";
}

const Param& param_of(const Library& lib, const std::string& function, const std::string& name) {
  for (const auto& p : lib.find_function(function)->params) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no parameter " + name);
}

TEST(AnnotationSchema, ReadsFunctionsParamsSkipsAndIntroduced) {
  const Annotations a = parse(NVRTC_LIBRARY R"(functions:
  nvrtcGetPTX:
    params:
      ptx: {direction: out, size_from: nvrtcGetPTXSize}
  nvrtcCompileProgram:
    params:
      options: {direction: in, count: numOptions}
  nvrtcWindowsOnly:
    skip: "not on Linux"
  nvrtcGetPCHHeapSize:
    introduced: "12.8"
)");
  EXPECT_EQ(a.file, "ann.yaml");
  EXPECT_EQ(a.library.name, "nvrtc");
  ASSERT_THAT(a.functions, SizeIs(4));
  const auto& ptx = a.functions.at("nvrtcGetPTX").params.at("ptx");
  EXPECT_EQ(ptx.direction, "out");
  EXPECT_EQ(ptx.size_from, "nvrtcGetPTXSize");
  EXPECT_EQ(ptx.line, 5u);
  EXPECT_EQ(a.functions.at("nvrtcCompileProgram").params.at("options").count, "numOptions");
  EXPECT_EQ(a.functions.at("nvrtcWindowsOnly").skip, "not on Linux");
  EXPECT_EQ(a.functions.at("nvrtcGetPCHHeapSize").introduced, "12.8");
}

TEST(AnnotationSchema, ReadsAParametersPythonNameAndToolkitDirs) {
  const Annotations a = parse(R"(library:
  name: nvfatbin
  headers: [nvFatbin.h]
  soname: libnvfatbin.so.13
  display_name: nvFatbin
  toolkit_dirs: [nvvm/lib64, lib64]
  python: {title: t, errors: raise, error_class: nvFatbinError, prefix: nvFatbin}
functions:
  nvFatbinDestroy:
    params:
      handle_indirect: {direction: in, python_name: handle}
)");
  EXPECT_THAT(a.library.toolkit_dirs, ElementsAre("nvvm/lib64", "lib64"));
  EXPECT_EQ(a.functions.at("nvFatbinDestroy").params.at("handle_indirect").python_name, "handle");
  EXPECT_THAT(error_of(NVRTC_LIBRARY R"(functions:
  nvrtcDestroyProgram:
    params:
      prog: {direction: in, python_name: Prog}
)"), HasSubstr("python_name is 'Prog'; expected a snake_case identifier"));
}

TEST(AnnotationSchema, ReadsTheKeysOfAStructTheBindingBuilds) {
  const Annotations a = parse(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      req:
        direction: inout
        fields: [set, timeoutms, dataSize]
        field_names: {set: event_set, dataSize: buffer_size}
        buffers: {data: dataSize}
        queried: {list: count}
        returns: data
        returns_count: numEvent
      values: {direction: inout, count: n, item_fields: [fieldId, scopeId]}
      size: {direction: in, bytes_of: values}
)");
  const codegen::ParamAnnotation& req = a.functions.at("cuFoo").params.at("req");
  EXPECT_THAT(req.fields, ElementsAre("set", "timeoutms", "dataSize"));
  EXPECT_EQ(req.field_names.at("set"), "event_set");
  EXPECT_EQ(req.buffers.at("data"), "dataSize");
  EXPECT_EQ(req.queried.at("list"), "count");
  EXPECT_THAT(req.returns, ElementsAre("data"));
  EXPECT_EQ(req.returns_count, "numEvent");
  EXPECT_THAT(a.functions.at("cuFoo").params.at("values").item_fields, ElementsAre("fieldId", "scopeId"));
  EXPECT_EQ(a.functions.at("cuFoo").params.at("size").bytes_of, "values");
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      req: {direction: out, fields: [a], field_names: {b: c}}
)"), HasSubstr("field_names names 'b', which fields does not list"));
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      req: {direction: out, fields: [a], returns: a, returns_count: n}
)"), HasSubstr("returns_count is for one returned pointer field that buffers names"));
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      size: {direction: in, value: 4, bytes_of: x}
)"), HasSubstr("gives both value and bytes_of"));
  // A field given as bytes: one of the fields.
  EXPECT_THAT(parse(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      uuid: {direction: in, fields: [type, value], bytes_fields: [value]}
)").functions.at("cuFoo").params.at("uuid").bytes_fields,
              ElementsAre("value"));
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      uuid: {direction: in, fields: [type], bytes_fields: [value]}
)"), HasSubstr("bytes_fields names 'value', which fields does not list"));
  // Several returned fields (a tuple); byte fields sized by another field; the caller's array.
  const Annotations prm = parse(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      buffer:
        direction: inout
        fields: [inData]
        bytes_fields: [inData]
        sizes: {inData: dataSize, outData: dataSize}
        returns: [status, outData]
      list: {direction: inout, fields: [items], arrays: {items: n}, returns: items}
)");
  const codegen::ParamAnnotation& buffer = prm.functions.at("cuFoo").params.at("buffer");
  EXPECT_THAT(buffer.returns, ElementsAre("status", "outData"));
  EXPECT_EQ(buffer.sizes.at("inData"), "dataSize");
  EXPECT_EQ(buffer.sizes.at("outData"), "dataSize");
  EXPECT_EQ(prm.functions.at("cuFoo").params.at("list").arrays.at("items"), "n");
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      buffer: {direction: inout, fields: [inData], sizes: {inData: dataSize}}
)"), HasSubstr("sizes names 'inData', which is neither in bytes_fields nor returned"));
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      buffer: {direction: inout, fields: [inData, dataSize], bytes_fields: [inData], sizes: {inData: dataSize}}
)"), HasSubstr("sizes.inData is 'dataSize', an argument; the length comes from the bytes"));
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      list: {direction: inout, fields: [n], arrays: {items: n}}
)"), HasSubstr("arrays names 'items', which fields does not list"));
  EXPECT_THAT(error_of(DRIVER_LIBRARY R"(functions:
  cuFoo:
    params:
      list: {direction: inout, fields: [items, n], arrays: {items: n}}
)"), HasSubstr("arrays.items is 'n', an argument; the count is the array's length"));
}

TEST(AnnotationSchema, EmptyFunctionsMappingIsAllowed) {
  EXPECT_THAT(parse(DRIVER_LIBRARY "functions: {}\n").functions, IsEmpty());
}

TEST(AnnotationSchema, BadIndentationIsReportedAtItsLine) {
  const std::string e = error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    skip: \"a\"\n   introduced: \"12.0\"\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:5:"));
}

TEST(AnnotationSchema, UnknownKeyIsReportedAtTheKey) {
  const std::string e = error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    skipp: \"a\"\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:4:5:"));
  EXPECT_THAT(e, HasSubstr("unknown key 'skipp'"));
}

TEST(AnnotationSchema, UnknownParameterKeyIsReportedAtTheKey) {
  const std::string e =
      error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    params:\n      x: {direction: in, lenght: n}\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:5:"));
  EXPECT_THAT(e, HasSubstr("unknown key 'lenght'"));
}

TEST(AnnotationSchema, UnknownTopLevelKeyIsReported) {
  const std::string e = error_of(DRIVER_LIBRARY "functions: {}\nversion: 2\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:3:1:"));
  EXPECT_THAT(e, HasSubstr("unknown key 'version'"));
}

TEST(AnnotationSchema, BadDirectionIsReportedAtTheValue) {
  const std::string e =
      error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    params:\n      x: {direction: outt}\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:5:"));
  EXPECT_THAT(e, HasSubstr("'outt'"));
}

TEST(AnnotationSchema, MissingDirectionIsAnError) {
  const std::string e = error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    params:\n      x: {count: n}\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:5:"));
  EXPECT_THAT(e, HasSubstr("needs a direction"));
}

TEST(AnnotationSchema, MissingLibraryIsAnError) {
  EXPECT_THAT(error_of("functions: {}\n"), StartsWith("ann.yaml:1:1:"));
  EXPECT_THAT(error_of("functions: {}\n"), HasSubstr("'library'"));
}

TEST(AnnotationSchema, ALibraryNameAloneIsReportedAtTheValue) {
  const std::string e = error_of("library: cufft\nfunctions: {}\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:1:10:"));
  EXPECT_THAT(e, HasSubstr("library must be a mapping"));
}

TEST(LibraryDescriptor, ReadsEveryField) {
  const Annotations a = parse(R"yaml(library:
  name: runtime
  headers: [cuda_runtime_api.h, driver_functions.h]
  owned_files: [cuda_runtime_api.h, driver_types.h]
  extra_headers: [cudaTypedefs.h]
  soname: libcudart.so.13
  display_name: the CUDA runtime
  env_override: CUBIND_CUDART_LIBRARY
  wheel_dirs: [nvidia/cu13/lib, nvidia/cuda_runtime/lib]
  resolution: symbol_per_thread_variants
  per_thread_macros: [__CUDART_API_PTDS, __CUDART_API_PTSZ]
  foreign_types: [EGLint, GLenum]
  python: {title: "the CUDA Runtime API (cuda_runtime_api.h)", errors: raise, error_class: cudaError, prefix: cuda,
           aliases: {getLocalRuntimeVersion: cudaRuntimeGetVersion}}
functions: {}
)yaml");
  const codegen::LibraryDescriptor& d = a.library;
  EXPECT_EQ(d.name, "runtime");
  EXPECT_THAT(d.headers, ElementsAre("cuda_runtime_api.h", "driver_functions.h"));
  EXPECT_THAT(d.owned_files, ElementsAre("cuda_runtime_api.h", "driver_types.h"));
  EXPECT_THAT(d.extra_headers, ElementsAre("cudaTypedefs.h"));
  EXPECT_EQ(d.soname, "libcudart.so.13");
  EXPECT_EQ(d.display_name, "the CUDA runtime");
  EXPECT_EQ(d.env_override, "CUBIND_CUDART_LIBRARY");
  EXPECT_THAT(d.wheel_dirs, ElementsAre("nvidia/cu13/lib", "nvidia/cuda_runtime/lib"));
  EXPECT_FALSE(d.system_loader_only);
  EXPECT_EQ(d.resolution, codegen::LibraryDescriptor::Resolution::SymbolPerThreadVariants);
  EXPECT_THAT(d.per_thread_macros, ElementsAre("__CUDART_API_PTDS", "__CUDART_API_PTSZ"));
  EXPECT_THAT(d.foreign_types, ElementsAre("EGLint", "GLenum"));
  EXPECT_EQ(d.python.title, "the CUDA Runtime API (cuda_runtime_api.h)");
  EXPECT_EQ(d.python.errors, codegen::LibraryDescriptor::Errors::Raise);
  EXPECT_EQ(d.python.error_class, "cudaError");
  EXPECT_EQ(d.python.prefix, "cuda");
  EXPECT_THAT(d.python.aliases, ElementsAre(std::pair<const std::string, std::string>("getLocalRuntimeVersion",
                                                                                     "cudaRuntimeGetVersion")));
}

TEST(LibraryDescriptor, DefaultsOwnTheHeadersAndLoadBySymbol) {
  const Annotations a = parse(NVRTC_LIBRARY "functions: {}\n");
  EXPECT_THAT(a.library.owned_files, ElementsAre("nvrtc.h"));
  EXPECT_THAT(a.library.extra_headers, IsEmpty());
  EXPECT_EQ(a.library.env_override, "");
  EXPECT_THAT(a.library.wheel_dirs, IsEmpty());
  EXPECT_FALSE(a.library.system_loader_only);
  EXPECT_EQ(a.library.resolution, codegen::LibraryDescriptor::Resolution::Symbol);
  EXPECT_EQ(a.library.python.errors, codegen::LibraryDescriptor::Errors::StatusTuple);
  EXPECT_THAT(a.library.python.aliases, IsEmpty());
}

TEST(LibraryDescriptor, EachRequiredKeyIsNamedWhenMissing) {
  for (const std::string key : {"name", "headers", "soname", "display_name", "python"}) {
    std::string block = "library:\n";
    if (key != "name") block += "  name: x\n";
    if (key != "headers") block += "  headers: [x.h]\n";
    if (key != "soname") block += "  soname: libx.so.1\n";
    if (key != "display_name") block += "  display_name: X\n";
    if (key != "python") block += "  python: {title: X}\n";
    const std::string e = error_of(block + "functions: {}\n");
    EXPECT_THAT(e, StartsWith("ann.yaml:2:3:")) << key;
    EXPECT_THAT(e, HasSubstr("library needs '" + key + "'")) << key;
  }
}

TEST(LibraryDescriptor, BadValuesAreReportedAtTheValue) {
  const std::string head = "library:\n  name: x\n  headers: [x.h]\n  soname: libx.so.1\n  display_name: X\n";
  const std::string python = "  python: {title: X}\n";
  struct Case {
    std::string lines;
    std::string expected;
  };
  const Case cases[] = {
      {"  resolution: dlsym\n" + python, "library.resolution is 'dlsym'; expected symbol, proc_address or"},
      {"  python: {title: X, errors: exceptions}\n", "library.python.errors is 'exceptions'; expected status_tuple or raise"},
      {"  python: {title: X, module: x}\n", "unknown key 'module' in library.python"},
      {"  python: {title: X, errors: raise}\n", "library.python has errors: raise, which needs 'error_class'"},
      {"  python: {title: X, prefix: x}\n", "library.python.prefix needs errors: raise"},
      {"  python: {title: X, aliases: [x]}\n", "library.python.aliases must be a mapping"},
      {"  env_override: cubind_x\n" + python, "library.env_override is 'cubind_x'"},
      {"  wheel_dirs: nvidia/cu13/lib\n" + python, "library.wheel_dirs must be a list of strings"},
      {"  foreign_types: [EGLint, EGLint]\n" + python, "library.foreign_types names EGLint twice"},
      {"  system_loader_only: yes\n" + python, "library.system_loader_only is 'yes'; expected true or false"},
      {"  soname_v2: x\n" + python, "unknown key 'soname_v2' in library"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(head + c.lines + "functions: {}\n");
    EXPECT_THAT(e, StartsWith("ann.yaml:6:")) << c.lines;
    EXPECT_THAT(e, HasSubstr(c.expected)) << c.lines;
  }
}

TEST(LibraryDescriptor, ContradictionsAreErrors) {
  const std::string head = "library:\n  name: x\n  headers: [x.h]\n  soname: libx.so.1\n  display_name: X\n"
                           "  python: {title: X}\n";
  EXPECT_THAT(error_of(head + "  system_loader_only: true\n  wheel_dirs: [nvidia/x/lib]\nfunctions: {}\n"),
              HasSubstr("wheel_dirs and toolkit_dirs would never be searched"));
  EXPECT_THAT(error_of(head + "  resolution: symbol_per_thread_variants\nfunctions: {}\n"),
              HasSubstr("needs per_thread_macros"));
  EXPECT_THAT(error_of("library: {name: X, headers: [x.h], soname: s, display_name: X, python: {title: X}}\n"
                       "functions: {}\n"),
              HasSubstr("library.name is 'X'"));
  EXPECT_THAT(error_of("library: {name: x, headers: [], soname: s, display_name: X, python: {title: X}}\n"
                       "functions: {}\n"),
              HasSubstr("library.headers is empty"));
}

// The descriptors the generator ships: every one parses, is named after its
// file, and the facts the loader and the Python modules depend on are there.
TEST(LibraryDescriptor, TheShippedFilesDescribeTheirLibraries) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(CUBIND_CODEGEN_ANNOTATIONS_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    const Annotations a = codegen::load_annotations(entry.path().string());
    EXPECT_EQ(a.library.name, entry.path().stem().string());
    EXPECT_FALSE(a.library.python.title.empty()) << a.library.name;
    names.insert(a.library.name);
  }
  EXPECT_THAT(names, ElementsAre("cudla", "cufile", "driver", "nvfatbin", "nvjitlink", "nvml", "nvrtc", "nvvm", "runtime"));
  const auto driver = codegen::load_annotations(std::string(CUBIND_CODEGEN_ANNOTATIONS_DIR) + "/driver.yaml").library;
  EXPECT_EQ(driver.resolution, codegen::LibraryDescriptor::Resolution::ProcAddress);
  EXPECT_TRUE(driver.system_loader_only);
  const auto nvjitlink =
      codegen::load_annotations(std::string(CUBIND_CODEGEN_ANNOTATIONS_DIR) + "/nvjitlink.yaml").library;
  EXPECT_EQ(nvjitlink.python.errors, codegen::LibraryDescriptor::Errors::Raise);
  const auto nvvm = codegen::load_annotations(std::string(CUBIND_CODEGEN_ANNOTATIONS_DIR) + "/nvvm.yaml").library;
  EXPECT_EQ(nvvm.toolkit_dirs.front(), "nvvm/lib64");
  const auto nvml = codegen::load_annotations(std::string(CUBIND_CODEGEN_ANNOTATIONS_DIR) + "/nvml.yaml").library;
  EXPECT_TRUE(nvml.system_loader_only);
  EXPECT_EQ(nvml.env_override, "CUBIND_NVML_LIBRARY");
  EXPECT_TRUE(nvml.python.int_handles && nvml.python.text_as_str && nvml.python.error_subclasses);
  EXPECT_EQ(nvml.defines, std::vector<std::string>{"NVML_NO_UNVERSIONED_FUNC_DEFS"});
  EXPECT_EQ(nvml.python.struct_field_names.at("bar1Size"), "bar1size");
  // Enums built from groups of #defines: a prefix alone, or a mapping.
  const auto group = [&](const std::string& name) {
    for (const auto& g : nvml.python.define_enums) {
      if (g.name == name) return g;
    }
    ADD_FAILURE() << name;
    return codegen::LibraryDescriptor::Python::DefineEnum{};
  };
  EXPECT_EQ(group("BusType").prefix, "NVML_BUS_TYPE_");
  EXPECT_EQ(group("BusType").strip, "NVML_BUS_TYPE_");
  EXPECT_EQ(group("PcieLinkMaxSpeed").strip, "NVML_PCIE_LINK_MAX_");
  EXPECT_EQ(group("EventType").exclude, std::vector<std::string>{"nvmlEventTypeAll"});
  EXPECT_EQ(group("EventType").members.front().first, "MIG_CONFIG_CHANGE");
  EXPECT_EQ(nvml.python.member_names.at("nvmlEccCounterType_t").front().second, "NVML_ECC_COUNTER_TYPE_COUNT");
  const auto cufile = codegen::load_annotations(std::string(CUBIND_CODEGEN_ANNOTATIONS_DIR) + "/cufile.yaml");
  EXPECT_EQ(cufile.library.python.status_field, "err");
  EXPECT_EQ(cufile.library.python.status_detail, "cu_err");
  EXPECT_EQ(cufile.library.python.status_text, "cufileop_status_error");
  EXPECT_EQ(cufile.library.python.reexports.at("pyCUresult"), "driver.CUresult");
  EXPECT_TRUE(cufile.functions.at("cuFileDriverGetProperties").params.at("props").address);
  EXPECT_EQ(cufile.functions.at("cuFileReadv").params.at("flags").default_value, "0");
  const auto cudla = codegen::load_annotations(std::string(CUBIND_CODEGEN_ANNOTATIONS_DIR) + "/cudla.yaml");
  EXPECT_TRUE(cudla.library.python.check_status && cudla.library.python.member_aliases);
  EXPECT_TRUE(cudla.functions.at("cudlaGetLastError").status_value);
}

TEST(LibraryDescriptor, DefineEnumsAreCheckedAsTheyAreRead) {
  const std::string head =
      "library: {name: x, headers: [x.h], soname: s, display_name: X, python: {title: X, errors: raise, "
      "error_class: XError, ";
  EXPECT_THAT(error_of(head + "define_enums: {A: {prefix: X_A_, strip: X_B_}}}}\nfunctions: {}\n"),
              HasSubstr("does not begin the prefix"));
  EXPECT_THAT(error_of(head + "define_enums: {A: {strip: X_}}}}\nfunctions: {}\n"), HasSubstr("needs 'prefix'"));
  EXPECT_THAT(error_of(head + "define_enums: {A: {prefix: X_, names: []}}}}\nfunctions: {}\n"),
              HasSubstr("unknown key 'names'"));
  EXPECT_THAT(error_of("library: {name: x, headers: [x.h], soname: s, display_name: X, python: {title: X, "
                       "define_enums: {A: X_}}}\nfunctions: {}\n"),
              HasSubstr("define_enums needs errors: raise"));
}

TEST(AnnotationSchema, StructStatusNeedsTheRaisingStyle) {
  EXPECT_THAT(error_of("library: {name: driver, headers: [cuda.h], soname: libcuda.so.1, display_name: D, "
                       "python: {title: D, status_field: err}}\nfunctions: {}\n"),
              HasSubstr("status_field needs errors: raise"));
  EXPECT_THAT(error_of("library: {name: driver, headers: [cuda.h], soname: libcuda.so.1, display_name: D, "
                       "python: {title: D, errors: raise, error_class: E, status_detail: cu_err}}\nfunctions: {}\n"),
              HasSubstr("status_detail needs status_field"));
}

TEST(AnnotationSchema, StatusTextAndReexportsAreChecked) {
  const std::string head = "library: {name: x, headers: [x.h], soname: s, display_name: X, python: {title: X, "
                           "errors: raise, error_class: XError, ";
  EXPECT_THAT(error_of(head + "status_text: describe}}\nfunctions: {}\n"), HasSubstr("status_text needs status_field"));
  EXPECT_THAT(error_of(head + "reexports: {pyCUresult: CUresult}}}\nfunctions: {}\n"),
              HasSubstr("expected module.Name of cubind.bindings"));
  EXPECT_EQ(parse(head + "reexports: {pyCUresult: driver.CUresult}}}\nfunctions: {}\n").library.python.reexports.size(),
            1u);
}

TEST(AnnotationSchema, DefaultMustBeAPythonLiteral) {
  EXPECT_THAT(error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    params:\n      x: {direction: in, default: \"a b\"}\n"),
              HasSubstr("expected an integer, None, True or False"));
}

TEST(AnnotationSchema, MissingFunctionsIsAnError) {
  EXPECT_THAT(error_of(DRIVER_LIBRARY ""), HasSubstr("'functions'"));
}

TEST(AnnotationSchema, FileThatIsNotAMappingIsAnError) {
  EXPECT_THAT(error_of("- driver\n"), StartsWith("ann.yaml:1:1:"));
}

TEST(AnnotationSchema, SkipWithParamsIsAnError) {
  const std::string e = error_of(
      DRIVER_LIBRARY "functions:\n  cuFoo:\n    skip: \"x\"\n    params:\n      x: {direction: in}\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:4:"));
  EXPECT_THAT(e, HasSubstr("skipped and also annotates parameters"));
}

TEST(AnnotationSchema, EmptyFunctionEntryIsAnError) {
  EXPECT_THAT(error_of(DRIVER_LIBRARY "functions:\n  cuFoo: {}\n"), HasSubstr("annotates nothing"));
}

TEST(AnnotationSchema, TwoLengthsForOneBufferIsAnError) {
  const std::string e = error_of(
      DRIVER_LIBRARY "functions:\n  cuFoo:\n    params:\n      x: {direction: out, count: n, size: n}\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:5:"));
  EXPECT_THAT(e, HasSubstr("more than one of count, size and size_from"));
}

TEST(AnnotationSchema, IntroducedMustBeMajorMinor) {
  const std::string e = error_of(DRIVER_LIBRARY "functions:\n  cuFoo:\n    introduced: \"12\"\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:4:17:"));
  EXPECT_THAT(e, HasSubstr("MAJOR.MINOR"));
}

TEST(AnnotationSchema, FunctionAnnotatedTwiceIsAnError) {
  const std::string e = error_of(
      DRIVER_LIBRARY "functions:\n  cuFoo:\n    skip: \"a\"\n  cuFoo:\n    skip: \"b\"\n");
  EXPECT_THAT(e, StartsWith("ann.yaml:5:3:"));
  EXPECT_THAT(e, HasSubstr("annotated twice"));
}

TEST(AnnotationSchema, LoadNamesAFileThatCannotBeRead) {
  try {
    codegen::load_annotations("/nonexistent/cubind/driver.yaml");
    FAIL() << "expected AnnotationError";
  } catch (const AnnotationError& e) {
    EXPECT_THAT(e.what(), StartsWith("/nonexistent/cubind/driver.yaml:"));
  }
}

TEST(AnnotationSchema, LoadReportsErrorsWithThePath) {
  const auto path = std::filesystem::temp_directory_path() / "cubind_annotations_test_bad.yaml";
  {
    std::ofstream out(path);
    out << DRIVER_LIBRARY "functions:\n  cuFoo:\n    skipp: \"a\"\n";
  }
  try {
    codegen::load_annotations(path.string());
    ADD_FAILURE() << "expected AnnotationError";
  } catch (const AnnotationError& e) {
    EXPECT_THAT(e.what(), StartsWith(path.string() + ":4:5:"));
  }
  std::filesystem::remove(path);
}

TEST(Classify, UnclassifiedPointerParameterIsReportedWithFunctionAndParameter) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY "functions:\n  cuRead:\n    params:\n"
                                                     "      buf: {direction: out, size_from: cuReadSize}\n"));
  ASSERT_THAT(problems, SizeIs(1));
  EXPECT_THAT(problems[0], StartsWith("ann.yaml: "));
  EXPECT_THAT(problems[0], HasSubstr("cuDo: parameter 'x' (struct X *)"));
  EXPECT_THAT(problems[0], HasSubstr("classified by no rule and no annotation"));
  EXPECT_EQ(param_of(lib, "cuDo", "x").classified_by, "");
}

TEST(Classify, DocumentedDirectionIsMentionedInTheProblem) {
  Library lib = library_with_struct_input();
  lib.functions[0].params[0].doc_direction = "in";
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY "functions:\n  cuRead:\n    params:\n"
                                                     "      buf: {direction: out, size_from: cuReadSize}\n"));
  ASSERT_THAT(problems, SizeIs(1));
  EXPECT_THAT(problems[0], HasSubstr("(documented as [in])"));
}

TEST(Classify, AnnotationClassifiesTheParameter) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuDo:
    params:
      x: {direction: in, count: n}
  cuRead:
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, IsEmpty());
  const Param& x = param_of(lib, "cuDo", "x");
  EXPECT_EQ(x.direction, "in");
  EXPECT_EQ(x.classified_by, "annotation");
  EXPECT_EQ(x.count_param, "n");
  const Param& buf = param_of(lib, "cuRead", "buf");
  EXPECT_EQ(buf.direction, "out");
  EXPECT_EQ(buf.size_from, "cuReadSize");
  EXPECT_EQ(param_of(lib, "cuDo", "n").classified_by, "by_value");
  EXPECT_EQ(param_of(lib, "cuReadSize", "size").classified_by, "scalar_out");
}

TEST(Classify, AnnotationOverridesARule) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuDo:
    params:
      x: {direction: in}
  cuReadSize:
    params:
      size: {direction: inout}
  cuRead:
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, IsEmpty());
  EXPECT_EQ(param_of(lib, "cuReadSize", "size").direction, "inout");
  EXPECT_EQ(param_of(lib, "cuReadSize", "size").classified_by, "annotation");
}

TEST(Classify, SkipRecordsTheReasonAndNeedsNoClassification) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuDo:
    skip: "takes a Windows handle"
  cuRead:
    introduced: "12.8"
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, IsEmpty());
  EXPECT_EQ(lib.skipped.at("cuDo"), "takes a Windows handle");
  EXPECT_EQ(lib.find_function("cuRead")->introduced, "12.8");
}

TEST(Classify, ReleaseOnErrorNamesAFunctionOfTheLibrary) {
  Library lib = library_with_struct_input();
  auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuDo: {params: {x: {direction: in}}}
  cuRead:
    release_on_error: cuReadSize
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, IsEmpty());
  EXPECT_EQ(lib.find_function("cuRead")->release_on_error, "cuReadSize");
  Library other = library_with_struct_input();
  problems = codegen::classify(other, parse(DRIVER_LIBRARY R"(functions:
  cuDo: {params: {x: {direction: in}}}
  cuRead:
    release_on_error: cuFree
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  ASSERT_THAT(problems, SizeIs(1));
  EXPECT_THAT(problems[0], HasSubstr("ann.yaml:4: cuRead.release_on_error names 'cuFree', which is no function of driver"));
}

TEST(Classify, StaleAnnotationsAreReportedWithFileAndLine) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuMissing: {skip: "gone"}
  cuDo:
    params:
      nothere: {direction: in}
      x: {direction: in, count: numX}
  cuRead:
    params:
      buf: {direction: out, size_from: cuReadSizeGone}
  cuReadSize:
    params:
      size: {direction: out, typed_by: attrib}
)"));
  EXPECT_THAT(problems, UnorderedElementsAre(StartsWith("ann.yaml:3: cuMissing names no function of driver"),
                                             StartsWith("ann.yaml:6: cuDo has no parameter 'nothere'"),
                                             StartsWith("ann.yaml:7: cuDo.x refers to 'numX'"),
                                             StartsWith("ann.yaml:10: cuRead.buf.size_from names 'cuReadSizeGone'"),
                                             StartsWith("ann.yaml:13: cuReadSize.size refers to 'attrib'")));
}

// Annotation files write functions and parameters in block style, so the line
// reported must be the one holding the name, not the first line of its body.
TEST(Classify, StaleBlockStyleEntriesAreReportedAtTheLineOfTheirName) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuMissing:
    skip: "gone"
  cuDo:
    params:
      nothere:
        direction: in
      x: {direction: in}
  cuRead:
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, UnorderedElementsAre(StartsWith("ann.yaml:3: cuMissing names no function of driver"),
                                             StartsWith("ann.yaml:7: cuDo has no parameter 'nothere'")));
}

TEST(Classify, NumericCountIsAFixedLengthButANumericTypedByIsStale) {
  Library lib = library_with_struct_input();
  const auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuDo:
    params:
      x: {direction: out, count: 4}
  cuRead:
    params:
      buf: {direction: out, size: 64}
  cuReadSize:
    params:
      size: {direction: out, typed_by: 4}
)"));
  EXPECT_THAT(problems, ElementsAre(StartsWith("ann.yaml:11: cuReadSize.size refers to '4'")));
  EXPECT_EQ(param_of(lib, "cuDo", "x").count_param, "4");
}

TEST(Classify, CountMayBeAParameterLessAConstant) {
  Library lib = library_with_struct_input();
  auto problems = codegen::classify(lib, parse(DRIVER_LIBRARY R"(functions:
  cuDo:
    params:
      x: {direction: in, count: n - 1}
  cuRead:
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, IsEmpty());
  EXPECT_EQ(param_of(lib, "cuDo", "x").count_param, "n - 1");
  EXPECT_EQ(codegen::count_parameter("n - 1"), "n");
  EXPECT_EQ(codegen::count_parameter("tensorRank-2"), "tensorRank");
  EXPECT_EQ(codegen::count_parameter("n"), "n");
  EXPECT_EQ(codegen::count_parameter("n - m"), "n - m");

  Library stale = library_with_struct_input();
  problems = codegen::classify(stale, parse(DRIVER_LIBRARY R"(functions:
  cuDo:
    params:
      x: {direction: in, count: rank - 1}
  cuRead:
    params:
      buf: {direction: out, size_from: cuReadSize}
)"));
  EXPECT_THAT(problems, ElementsAre(StartsWith("ann.yaml:5: cuDo.x refers to 'rank - 1'")));
}

class ClassifyRules : public ::testing::Test {
 protected:
  // Classifies `f` alone with no annotations; returns the rule per parameter.
  std::vector<std::string> rules(Function f) {
    Library lib;
    lib.name = "driver";
    lib.functions.push_back(std::move(f));
    problems = codegen::classify(lib, parse(DRIVER_LIBRARY "functions: {}\n"));
    std::vector<std::string> out;
    for (const auto& p : lib.functions[0].params) out.push_back(p.classified_by + ":" + p.direction);
    return out;
  }
  std::vector<std::string> problems;
};

TEST_F(ClassifyRules, ValuesConstPointersAndStringsAreInputs) {
  EXPECT_THAT(rules(function("cuA", {param("n", builtin("int")), param("ctx", named(Type::Kind::Handle, "CUcontext")),
                                     param("src", pointer("void", Type::Kind::Void, true)),
                                     param("name", pointer("char", Type::Kind::Builtin, true))})),
              ElementsAre("by_value:in", "by_value:in", "const_pointer:in", "string:in"));
  EXPECT_THAT(problems, IsEmpty());
}

TEST_F(ClassifyRules, ScalarPointersAreOutputs) {
  EXPECT_THAT(rules(function("cuB", {param("pctx", pointer("CUcontext", Type::Kind::Handle)),
                                     param("mode", pointer("CUmode", Type::Kind::Enum)),
                                     param("value", pointer("int", Type::Kind::Builtin))})),
              ElementsAre("scalar_out:out", "scalar_out:out", "scalar_out:out"));
}

TEST_F(ClassifyRules, ScalarPointerBesideACountNeedsAnAnnotation) {
  // int *values beside numValues may be an array the call reads.
  EXPECT_THAT(rules(function("cuC", {param("values", pointer("int", Type::Kind::Builtin)),
                                     param("numValues", builtin("unsigned int"))})),
              ElementsAre(":", "by_value:in"));
  ASSERT_THAT(problems, SizeIs(1));
  EXPECT_THAT(problems[0], HasSubstr("cuC: parameter 'values'"));
}

TEST_F(ClassifyRules, ScalarPointerDocumentedAsInputNeedsAnAnnotation) {
  Function f = function("cuD", {param("prog", pointer("nvrtcProgram", Type::Kind::Handle))});
  f.params[0].doc_direction = "in";
  EXPECT_THAT(rules(f), ElementsAre(":"));
  EXPECT_THAT(problems, SizeIs(1));
}

TEST_F(ClassifyRules, VoidPointersAreAddressesOrCallbackData) {
  Type callback = named(Type::Kind::FunctionPointer, "CUhostFn");
  EXPECT_THAT(rules(function("cuE", {param("fn", callback), param("userData", pointer("void", Type::Kind::Void))})),
              ElementsAre("by_value:in", "callback_user_data:in"));
  EXPECT_THAT(rules(function("cuF", {param("dst", pointer("void", Type::Kind::Void))})), ElementsAre("address:in"));
  Function out = function("cuG", {param("pp", pointer("void", Type::Kind::Void))});
  out.params[0].doc_direction = "out";
  EXPECT_THAT(rules(out), ElementsAre(":"));
}

TEST_F(ClassifyRules, CharBuffersAndDoublePointersNeedAnAnnotation) {
  EXPECT_THAT(rules(function("cuH", {param("buf", pointer("char", Type::Kind::Builtin)),
                                     param("pp", pointer("void *", Type::Kind::Pointer, false, 2))})),
              ElementsAre(":", ":"));
  EXPECT_THAT(problems, SizeIs(2));
}

}  // namespace

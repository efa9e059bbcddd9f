// The Python layer's struct and union fields, emitted from snippet headers:
// every member reachable, numbers converted with the exact type first, lists
// for pointers to structs and handles, dim3 defaults and the text of a struct.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "codegen/annotations.hpp"
#include "codegen/emit_python.hpp"
#include "codegen/emitters.hpp"
#include "test_support.hpp"

using codegen::Library;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

codegen::EmitOptions options() {
  codegen::EmitOptions o;
  return o;
}


const char* kFieldsHeader = R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef struct CUarray_st *CUarray;
typedef struct CUextSem_st *CUexternalSemaphore;
typedef struct CUgraph_st *CUgraph;
typedef struct Pitched_st { void *ptr; unsigned long long pitch; } Pitched;
typedef struct Frame_st {
  union { CUarray pArray[3]; void *pPitch[3]; } frame;
  Pitched planes[2];
  unsigned int planeCount;
  unsigned char label[8];
  unsigned int reserved[4];
  float ratio;
} Frame;
typedef struct SemParams_st { CUexternalSemaphore *extSemArray; Frame *frames; unsigned int numExtSems; } SemParams;
typedef struct Cond_st { CUgraph *phGraph_out; unsigned int size; } Cond;
struct dim3 { unsigned int x, y, z; };
typedef struct dim3 dim3;
typedef struct Launch_st { dim3 gridDim; union { dim3 d; int i; } u; } Launch;
CUresult cuInit(unsigned int Flags);
)";

// The emitted Python file of lib whose name ends with `ending` (".pyx", ".pyi").
std::string emitted(const Library& lib, const std::string& ending) {
  for (auto& f : codegen::emit_python_module(lib, options())) {
    if (f.path.size() > ending.size() && f.path.compare(f.path.size() - ending.size(), ending.size(), ending) == 0) {
      return f.content;
    }
  }
  return "";
}

// The .pyx of a library that raises its own error, as NVML's and nvFatbin's
// modules do: `name` is its short name (name.h, libname.so.1, nameError, the
// prefix name), `functions` the YAML of its function annotations. Throws the
// first problem classify reports.
std::string raising_pyx(Library& lib, const std::string& name, const std::string& functions) {
  const std::string yaml = "library: {name: " + name + ", headers: [" + name + ".h], soname: lib" + name +
                           ".so.1, display_name: " + name + ",\n  python: {title: " + name +
                           ", errors: raise, error_class: " + name + "Error, prefix: " + name + "}}\nfunctions:\n" +
                           functions;
  const auto problems = codegen::classify(lib, codegen::parse_annotations(yaml, name + ".yaml"));
  if (!problems.empty()) throw std::runtime_error(problems.front());
  lib.python.errors = codegen::LibraryDescriptor::Errors::Raise;
  lib.python.error_class = name + "Error";
  lib.python.prefix = name;
  return emitted(lib, ".pyx");
}

// The .pyx of a library named driver (its calls return their status, as the
// driver's module) declared by `source` in `header`; `rest` is the YAML after
// its library line (functions:, attribute_types:). Throws the first problem
// classify reports.
std::string driver_pyx(const std::string& source, const std::string& header, const std::string& rest) {
  Library lib = codegen_test::parse_c(source, header);
  const auto problems = codegen::classify(
      lib, codegen::parse_annotations("library: {name: driver, headers: [" + header +
                                          "], soname: libcuda.so.1, display_name: Driver, python: {title: Driver}}\n" +
                                          rest,
                                      header + ".yaml"));
  if (!problems.empty()) throw std::runtime_error(problems.front());
  return emitted(lib, ".pyx");
}

std::string python_module(const std::string& header) {
  return emitted(codegen_test::parse_c(header, "fields.h"), ".pyx");
}

// The text of one class, up to the next class.
std::string class_text(const std::string& module, const std::string& name) {
  const auto begin = module.find("cdef class " + name + "(");
  if (begin == std::string::npos) return "";
  const auto end = module.find("\ncdef class ", begin + 1);
  return module.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

TEST(EmitPythonFields, EveryUnionMemberIsReachableArraysOfAddressesIncluded) {
  const std::string union_class = class_text(python_module(kFieldsHeader), "anon_Frame_st_frame");
  ASSERT_FALSE(union_class.empty());
  EXPECT_THAT(union_class, HasSubstr("def pArray(self)"));
  EXPECT_THAT(union_class, HasSubstr("def pPitch(self)"));
  EXPECT_THAT(union_class, HasSubstr("_support.array_list(<void*>&"));
  EXPECT_THAT(union_class, HasSubstr("sizeof(void*), \"P\""));
}

TEST(EmitPythonFields, NumbersTakeTheExactTypeFirst) {
  const std::string frame = class_text(python_module(kFieldsHeader), "Frame");
  EXPECT_THAT(frame, HasSubstr("if type(value) is int:\n            (<cydriver.Frame_st*>self._ptr).planeCount = value\n"
                               "        else:\n            (<cydriver.Frame_st*>self._ptr).planeCount = "
                               "_support.int_field(value, \"planeCount\")"));
  EXPECT_THAT(frame, HasSubstr("if type(value) is float:"));
  EXPECT_THAT(frame, HasSubstr("_support.float_field(value, \"ratio\")"));
  // unsigned char arrays read as bytes, like char arrays.
  EXPECT_THAT(frame, HasSubstr("PyBytes_FromStringAndSize(<const char*>&(<cydriver.Frame_st*>self._ptr).label[0], 8)"));
  // A driver struct's reserved member is left out, as cuda.bindings leaves it out.
  EXPECT_THAT(frame, Not(HasSubstr("reserved")));
  EXPECT_THAT(frame, HasSubstr("_support.char_array_assign("));
  EXPECT_THAT(frame, HasSubstr("_support.field_items(value, 2, \"planes\")"));
}

TEST(EmitPythonFields, PointersToStructsAndHandlesAreLists) {
  const std::string module = python_module(kFieldsHeader);
  const std::string sems = class_text(module, "SemParams");
  EXPECT_THAT(sems, HasSubstr("_support.handle_list_field(value, CUexternalSemaphore, self, \"extSemArray\")"));
  EXPECT_THAT(sems, HasSubstr("_support.struct_list_field(value, Frame, sizeof(cydriver.Frame_st), self, \"frames\")"));
  EXPECT_THAT(sems, HasSubstr("_support.kept_array(self, \"extSemArray\""));
  // An array the library fills: read-only, `size` items.
  const std::string cond = class_text(module, "Cond");
  EXPECT_THAT(cond, HasSubstr("for i in range((<cydriver.Cond_st*>self._ptr).size)]"));
  EXPECT_THAT(cond, Not(HasSubstr("@phGraph_out.setter")));
}

TEST(EmitPythonFields, Dim3MembersStartAtOneOutsideUnions) {
  const std::string module = python_module(kFieldsHeader);
  EXPECT_THAT(class_text(module, "dim3"), HasSubstr("(<cydriver.dim3*>self._ptr).x = 1\n"));
  const std::string launch = class_text(module, "Launch");
  EXPECT_THAT(launch, HasSubstr("(<cydriver.Launch_st*>self._ptr).gridDim.z = 1\n"));
  EXPECT_THAT(launch, Not(HasSubstr(".u.d.x = 1")));
}

TEST(EmitPythonFields, TextListsEveryFieldAndMarksAddresses) {
  const std::string pitched = class_text(python_module(kFieldsHeader), "Pitched");
  EXPECT_THAT(pitched, HasSubstr("_fields = ((\"ptr\", True), (\"pitch\", False), )"));
  EXPECT_THAT(pitched, HasSubstr("return _support.struct_text(self, Pitched._fields)"));
}

// A function that outputs a handle even when it fails frees it before raising
// (release_on_error), through a release function that takes the handle's address.
TEST(EmitPythonFunctions, ReleaseOnErrorFreesTheOutputBeforeRaising) {
  Library lib = codegen_test::parse_c(R"(
typedef enum { LINK_SUCCESS = 0 } linkResult;
typedef struct link_st *linkHandle;
linkResult linkCreate(linkHandle *handle, unsigned int flags);
linkResult linkDestroy(linkHandle *handle);
)",
                                      "link.h", false);
  lib.python.errors = codegen::LibraryDescriptor::Errors::Raise;
  lib.python.error_class = "linkError";
  for (auto& f : lib.functions) {
    for (auto& p : f.params) p.direction = f.name == "linkCreate" && p.name == "handle" ? "out" : "in";
  }
  for (auto& f : lib.functions) {
    if (f.name == "linkCreate") f.release_on_error = "linkDestroy";
  }
  const std::string module = emitted(lib, ".pyx");
  const auto begin = module.find("def link_create(");
  ASSERT_NE(begin, std::string::npos) << module;
  const std::string create = module.substr(begin, module.find("\ndef ", begin + 1) - begin);
  EXPECT_THAT(create, HasSubstr("    if _result != 0 and _c_handle != NULL:\n"
                                "        with nogil:\n"
                                "            cynvjitlink.linkDestroy(&_c_handle)\n"
                                "    _check(_result)\n"));
  const auto destroy = module.find("def link_destroy(");
  ASSERT_NE(destroy, std::string::npos);
  EXPECT_THAT(module.substr(destroy), Not(HasSubstr("_c_handle != NULL")));
}

// A handle type with makes_handle/destroys_handle: the raw layer records what
// the make function made (on success) and forgets what the destroy function
// destroys; the Python layer refuses a non-NULL handle it did not record.
TEST(EmitLiveHandles, RawLayerRecordsAndPythonChecks) {
  Library lib = codegen_test::parse_c(R"(
typedef enum { PROG_SUCCESS = 0 } progResult;
typedef struct prog_st *progHandle;
progResult progCreate(progHandle *prog, const char *src);
progResult progDestroy(progHandle *prog);
progResult progCompile(progHandle prog, int level);
)",
                                      "prog.h", false);
  const auto problems = codegen::classify(
      lib, codegen::parse_annotations(
               "library: {name: prog, headers: [prog.h], soname: libprog.so.1, display_name: Prog, "
               "python: {title: Prog}}\nfunctions:\n"
               "  progCreate: {makes_handle: prog, params: {prog: {direction: out}}}\n"
               "  progDestroy: {destroys_handle: prog, params: {prog: {direction: in}}}\n",
               "prog.yaml"));
  ASSERT_TRUE(problems.empty()) << problems.front();
  const std::string hpp = codegen::emit_loader_header(lib, options()).content;
  EXPECT_THAT(hpp, HasSubstr("bool progHandle_is_live(progHandle handle) noexcept;"));
  const std::string cpp = codegen::emit_loader_source(lib, options()).content;
  EXPECT_THAT(cpp, HasSubstr("cubind::detail::LiveHandles g_live_progHandle;"));
  EXPECT_THAT(cpp, HasSubstr("  if (static_cast<long long>(result) == 0 && prog != nullptr) "
                             "g_live_progHandle.add(*prog);\n"));
  EXPECT_THAT(cpp, HasSubstr("  const bool recorded = g_live_progHandle.remove(destroyed);\n"));
  const std::string module = emitted(lib, ".pyx");
  const std::string check = "    if <void*>_c_prog != NULL and not cy" + lib.name + ".progHandle_is_live(_c_prog):\n"
                            "        _support.not_live(prog, \"prog\", \"progHandle\", \"progCreate\", \"progDestroy\")\n";
  for (const char* fn : {"def progCompile(", "def progDestroy("}) {
    const auto begin = module.find(fn);
    ASSERT_NE(begin, std::string::npos) << module;
    EXPECT_THAT(module.substr(begin, module.find("\ndef ", begin + 1) - begin), HasSubstr(check)) << fn;
  }
  const auto create = module.find("def progCreate(");
  EXPECT_THAT(module.substr(create, module.find("\ndef ", create + 1) - create), Not(HasSubstr("_is_live")));
}

TEST(EmitLiveHandles, AnnotationsNameAHandlePointerAndBothFunctions) {
  Library lib = codegen_test::parse_c(R"(
typedef enum { PROG_SUCCESS = 0 } progResult;
typedef struct prog_st *progHandle;
progResult progCreate(progHandle *prog, const char *src);
progResult progCompile(progHandle prog, int level);
)",
                                      "prog.h", false);
  const auto problems = codegen::classify(
      lib, codegen::parse_annotations(
               "library: {name: prog, headers: [prog.h], soname: libprog.so.1, display_name: Prog, "
               "python: {title: Prog}}\nfunctions:\n"
               "  progCreate: {makes_handle: prog, params: {prog: {direction: out}}}\n"
               "  progCompile: {destroys_handle: level}\n",
               "prog.yaml"));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], HasSubstr("progCompile.destroys_handle names 'level', which is no parameter of "
                                     "progCompile of type `handle *`"));
  EXPECT_THAT(problems[1], HasSubstr("handle type progHandle has 1 makes_handle and 0 destroys_handle functions"));
}

// A parameter annotated with python_name takes that name (cuda.bindings.nvfatbin's
// destroy(handle) for nvFatbinDestroy's handle_indirect), and a const char * of
// `size` bytes is a buffer (NVVM IR, PTX), not a NUL-terminated string.
TEST(EmitPythonFunctions, PythonNameAndSizedCharBuffers) {
  Library lib = codegen_test::parse_c(R"(
typedef enum { FB_SUCCESS = 0 } fbResult;
typedef struct fb_st *fbHandle;
fbResult fbDestroy(fbHandle *handle_indirect);
fbResult fbAddPTX(fbHandle handle, const char *code, unsigned long size, const char *arch);
)",
                                      "fb.h", false);
  const std::string module = raising_pyx(lib, "fb", R"(  fbDestroy:
    params:
      handle_indirect: {direction: in, python_name: handle}
  fbAddPTX:
    params:
      code: {direction: in, size: size}
)");
  EXPECT_THAT(module, HasSubstr("def destroy(handle):\n"));
  EXPECT_THAT(module, HasSubstr("def add_ptx(handle, code, size, arch):\n"
                                "    \"\"\"add_ptx(handle: fbHandle | int | None, code: int | Buffer | None, size: int, "
                                "arch: bytes | str)"));
  EXPECT_THAT(module, HasSubstr("raise ValueError(f\"code holds {len(memoryview(code).cast('B'))} bytes but size is"));
}

// A trampoline runs on a thread CUDA owns: it takes the GIL only while the
// interpreter is not finalizing (CPython ends a foreign thread that tries).
TEST(EmitPythonFunctions, TrampolinesTakeTheGilOnlyBeforeFinalization) {
  Library lib = codegen_test::parse_c(R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef struct CUstream_st *CUstream;
typedef void (*CUhostFn)(void *userData);
CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
)",
                                      "host.h");
  const auto problems = codegen::classify(
      lib, codegen::parse_annotations("library: {name: driver, headers: [host.h], soname: libcuda.so.1, "
                                      "display_name: the CUDA driver, python: {title: Driver}}\nfunctions: {}\n",
                                      "host.yaml"));
  ASSERT_TRUE(problems.empty()) << problems.front();
  const std::string module = emitted(lib, ".pyx");
  EXPECT_THAT(module, HasSubstr("cdef void _callback_CUhostFn(void * userData) noexcept nogil:\n"
                                "    if not _support.callback_enter():\n"
                                "        return\n"
                                "    with gil:\n"
                                "        _support.callback_invoke(userData, ())\n"
                                "        _support.callback_finished(userData)\n"
                                "    _support.callback_leave()\n"));
}

TEST(EmitPythonFields, AFieldWithoutAPythonFormIsAnError) {
  const std::string header = std::string(kFieldsHeader) + "typedef struct Odd_st { long double wide; } Odd;\n";
  try {
    python_module(header);
    FAIL() << "expected an error naming the field";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("field cydriver.Odd_st.wide (long double)"));
  }
}

// A struct the binding builds (NVML's request structs): its version from the
// header's NVML_STRUCT_VERSION macro, even where the parameter is spelled with
// an alias of the versioned typedef; its fields as arguments; one field
// returned; an array of structs given as ids; a byte size from an array's count.
TEST(EmitPythonFunctions, StructFieldsAsArgumentsAndItemsAndVersions) {
  Library lib = codegen_test::parse_c(R"(
typedef enum { ml_SUCCESS = 0, ml_ERROR_INSUFFICIENT_SIZE = 7 } mlReturn_t;
typedef struct ml_dev_st *mlDevice_t;
typedef struct { unsigned int version; int sensorType; int temperature; } mlTemperature_v1_t;
typedef mlTemperature_v1_t mlTemperature_t;
#define ML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(ml ## data ## _v ## ver ## _t) | (ver << 24U))
#define mlTemperature_v1 ML_STRUCT_VERSION(Temperature, 1)
typedef struct { unsigned int fieldId; unsigned int scopeId; long long value; } mlFieldValue_t;
mlReturn_t mlDeviceGetTemperatureV(mlDevice_t device, mlTemperature_t *temperature);
mlReturn_t mlDeviceGetFieldValues(mlDevice_t device, int valuesCount, mlFieldValue_t *values);
mlReturn_t mlDeviceGetStates(mlDevice_t device, unsigned int *states, unsigned int size);
)",
                                      "ml.h", false);
  const std::string module = raising_pyx(lib, "ml", R"(  mlDeviceGetTemperatureV:
    params:
      temperature: {direction: out, fields: [sensorType], field_names: {sensorType: sensorType}, returns: temperature}
  mlDeviceGetFieldValues:
    params:
      values: {direction: inout, count: valuesCount, item_fields: [fieldId, scopeId]}
  mlDeviceGetStates:
    params:
      states: {direction: out, count: 16}
      size: {direction: in, bytes_of: states}
)");
  EXPECT_THAT(module, HasSubstr("def device_get_temperature_v(device, sensorType):\n"));
  // The parameter is spelled mlTemperature_t; the macro is the versioned typedef's.
  EXPECT_THAT(module, HasSubstr("*>_c_temperature._ptr).version = "));
  EXPECT_THAT(module, HasSubstr(".mlTemperature_v1\n"));
  EXPECT_THAT(module, HasSubstr("._ptr).sensorType = <int>"));
  EXPECT_THAT(module, HasSubstr("return _c_temperature.temperature\n"));
  EXPECT_THAT(module, HasSubstr("def device_get_field_values(device, values):\n"));
  EXPECT_THAT(module, HasSubstr("_c_values_count = <int>_len_values\n"));
  EXPECT_THAT(module, HasSubstr("elif isinstance(_item_values, tuple) and 1 <= len(_item_values) <= 2:\n"));
  EXPECT_THAT(module, HasSubstr("return [FieldValue._copy(&_c_values[i]) for i in range(_len_values)]\n"));
  EXPECT_THAT(module, HasSubstr("def device_get_states(device):\n"));
  EXPECT_THAT(module, HasSubstr("cdef unsigned int _c_size = <unsigned int>(16 * sizeof(unsigned int))\n"));
}

// A queried array (the count in and out, the array filled when it is large
// enough): asked first with no array, then again with as many items as the
// count says, whether the library answered INSUFFICIENT_SIZE or succeeded
// having only set the count (nvmlDeviceGetTopologyNearestGpus); reading a
// count of items from the NULL array of the first call would crash.
TEST(EmitPythonFunctions, QueriedArrayIsAskedAgainAfterASuccessWithNoArray) {
  Library lib = codegen_test::parse_c(R"(
typedef enum { ml_SUCCESS = 0, ml_ERROR_INSUFFICIENT_SIZE = 7 } mlReturn_t;
typedef struct ml_dev_st *mlDevice_t;
mlReturn_t mlDeviceGetNearest(mlDevice_t device, unsigned int *count, mlDevice_t *deviceArray);
)",
                                      "ml.h", false);
  const std::string module = raising_pyx(lib, "ml", R"(  mlDeviceGetNearest:
    params:
      count: {direction: out}
      deviceArray: {direction: out, count: count}
)");
  EXPECT_THAT(module, HasSubstr("def device_get_nearest(device):\n"));
  EXPECT_THAT(module,
              HasSubstr("    while (_result == 7 or (_result == 0 and _c_device_array == NULL)) and _c_count > 0:\n"));
  EXPECT_THAT(module, Not(HasSubstr("while _result == 7 and")));
}

// An array of a fixed count the call fills in part (nvmlDeviceGetGpuInstances
// takes no NULL array to report a count first): room for the fixed count, and
// a list of as many items as the count parameter says, which is neither an
// argument nor a result. filled: is refused on any other array.
TEST(EmitPythonFunctions, ArrayOfAFixedCountReturnsTheItemsTheCallFilled) {
  const std::string header = R"(
typedef enum { ml_SUCCESS = 0, ml_ERROR_INSUFFICIENT_SIZE = 7 } mlReturn_t;
typedef struct ml_dev_st *mlDevice_t;
typedef struct ml_inst_st *mlInstance_t;
mlReturn_t mlDeviceGetInstances(mlDevice_t device, unsigned int profileId, mlInstance_t *instances, unsigned int *count);
)";
  const auto emit = [&](const std::string& array) {
    Library lib = codegen_test::parse_c(header, "ml.h", false);
    return raising_pyx(lib, "ml", "  mlDeviceGetInstances:\n    params:\n      instances: " + array + "\n");
  };
  const std::string module = emit("{direction: out, count: 64, filled: count}");
  EXPECT_THAT(module, HasSubstr("def device_get_instances(device, profile_id):\n"));
  EXPECT_THAT(module, HasSubstr("    cdef unsigned int _c_count = 0\n"));
  EXPECT_THAT(module, HasSubstr("_cap_instances = <Py_ssize_t>64\n"));
  EXPECT_THAT(module, HasSubstr("&_c_count)\n"));
  EXPECT_THAT(module, HasSubstr("for i in range(min(_cap_instances, <Py_ssize_t>_c_count))]\n"));
  EXPECT_THAT(module, HasSubstr("Returns: instances; raises mlError on failure.\n"));
  try {
    emit("{direction: out, count: count, filled: count}");
    ADD_FAILURE() << "filled: on a queried array was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("filled: is given to an output array of a fixed count only"));
  }
  try {
    emit("{direction: out, count: 64, filled: counted}");
    ADD_FAILURE() << "filled: naming no parameter was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(".filled names 'counted', which is no parameter of mlDeviceGetInstances"));
  }
}

// A size pointer with bytes_of naming an output struct: the struct's sizeof
// goes in, the call may rewrite it, and it is neither argument nor result.
// bytes_of: is refused on a pointer to anything but one integer, and where
// it names no output struct.
TEST(EmitPythonFunctions, SizeOfAnOutputStructGoesInAndIsNotReturned) {
  const std::string types = R"(
typedef enum { ml_SUCCESS = 0 } mlReturn_t;
typedef struct ml_dev_st *mlDevice_t;
typedef struct { unsigned int version; unsigned int opaqueDataSize; char opaqueData[4]; } mlMetadata_t;
)";
  const auto emit = [&](const std::string& function, const std::string& params) {
    const std::string size = function == "mlDeviceGetMetadata" ? "unsigned int *bufferSize" : "unsigned int **bufferSizes";
    Library lib = codegen_test::parse_c(
        types + "mlReturn_t " + function + "(mlDevice_t device, mlMetadata_t *metadata, " + size + ");\n", "ml.h", false);
    return raising_pyx(lib, "ml", "  " + function + ":\n    params:\n" + params);
  };
  const std::string module = emit("mlDeviceGetMetadata", R"(      metadata: {direction: out}
      bufferSize: {direction: inout, bytes_of: metadata}
)");
  EXPECT_THAT(module, HasSubstr("def device_get_metadata(device):\n"));
  EXPECT_THAT(module, HasSubstr("    cdef unsigned int _c_buffer_size = <unsigned int>sizeof("));
  EXPECT_THAT(module, HasSubstr(".mlMetadata_t)\n"));
  EXPECT_THAT(module, HasSubstr("._ptr, &_c_buffer_size)\n"));
  EXPECT_THAT(module, HasSubstr("Returns: metadata; raises mlError on failure.\n"));
  try {
    emit("mlDeviceGetMetadataSizes", R"(      metadata: {direction: out}
      bufferSizes: {direction: inout, bytes_of: metadata}
)");
    ADD_FAILURE() << "bytes_of: on a pointer to a pointer was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("bytes_of: is given to a parameter passed by value, or to a pointer to one integer"));
  }
  try {
    emit("mlDeviceGetMetadata", R"(      metadata: {direction: out}
      bufferSize: {direction: inout, bytes_of: device}
)");
    ADD_FAILURE() << "bytes_of: naming a handle argument was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("mlDeviceGetMetadata: bytes_of names 'device', which is no output struct"));
  }
}

// structs: numpy (cuda.bindings.nvml's NumPy layer): a dtype per class named
// as cuda.bindings names it, laid out by the C compiler (offsets of a struct
// on the stack, sizeof); ptr, from_ptr, from_data, from_buffer; arrays of
// structs; counted arrays and reserved arrays kept out of the attributes;
// field names clear of numpy.ndarray's.
TEST(EmitPythonFields, NumpyStructLayer) {
  const std::string header = R"(
typedef enum { ml_SUCCESS = 0 } mlReturn_t;
typedef union { double dVal; unsigned int uiVal; } mlValue_t;
typedef struct { unsigned int fieldId; mlValue_t value; } mlFieldValue_t;
typedef struct { unsigned long long total; unsigned int reserved[4]; unsigned int size; } mlBAR1Memory_t;
typedef struct { unsigned int count; mlFieldValue_t items[8]; unsigned char blob[16]; unsigned int blobSize; } mlVgpuTypeBar1Info_v1_t;
mlReturn_t mlInit(void);
)";
  Library lib = codegen_test::parse_c(header, "ml.h", false);
  const auto annotations = codegen::parse_annotations(R"(library: {name: ml, headers: [ml.h], soname: libml.so.1,
  display_name: ml, python: {title: ml, errors: raise, error_class: mlError, prefix: ml, structs: numpy,
  struct_arrays: [mlFieldValue_t],
  counted_fields: {mlVgpuTypeBar1Info_v1_t.items: count, mlVgpuTypeBar1Info_v1_t.blob: blobSize}}}
functions: {}
)",
                                                      "ml.yaml");
  const auto problems = codegen::classify(lib, annotations);
  ASSERT_TRUE(problems.empty()) << problems.front();
  static_cast<codegen::LibraryDescriptor&>(lib).python = annotations.library.python;
  const std::string module = emitted(lib, ".pyx");
  const std::string stub = emitted(lib, ".pyi");
  // Names: BAR1Memory -> ba_r1memory_dtype, VgpuTypeBar1Info_v1 -> vgpu_type_bar1info_v1_dtype.
  EXPECT_THAT(module, HasSubstr("_DTYPE_NAMES = [\"value_dtype\", \"field_value_dtype\", \"ba_r1memory_dtype\", "
                                "\"vgpu_type_bar1info_v1_dtype\", ]"));
  EXPECT_THAT(module, HasSubstr("    if name in _dtypes and not name.startswith(\"_\"):\n"));
  EXPECT_THAT(stub, HasSubstr("ba_r1memory_dtype: Any\n"));
  // Layout: formats, nested dtypes by name, offsets from the C struct, the size.
  EXPECT_THAT(module, HasSubstr("return ((\"field_id\", \"value\", ), (\"<u4\", \"value_dtype\", ), "
                                "(<char*>&s.fieldId - b, <char*>&s.value - b, ), sizeof(cynvjitlink.mlFieldValue_t))"));
  EXPECT_THAT(module, HasSubstr("(\"<f8\", \"<u4\", )"));
  EXPECT_THAT(module, HasSubstr("(\"total\", \"reserved\", \"size_\", ), (\"<u8\", (\"<u4\", (4, )), \"<u4\", )"));
  EXPECT_THAT(module, HasSubstr("(\"field_value_dtype\", (8, ))"));
  // Classes: ptr and the constructors from memory; arrays of structs take a size.
  const std::string fv = class_text(module, "FieldValue");
  EXPECT_THAT(fv, HasSubstr("def __init__(self, size=1, *, _ptr=0, **fields):\n"));
  EXPECT_THAT(fv, HasSubstr("def __len__(self):\n"));
  EXPECT_THAT(fv, HasSubstr("def __getitem__(self, key):\n"));
  EXPECT_THAT(fv, HasSubstr("def from_ptr(ptr, size=1, readonly=False, owner=None):\n"));
  // A view or a copy of the memory, by _support's one helper (no copy of it in the module).
  EXPECT_THAT(fv, HasSubstr("        _support.adopt_memory(obj, address, n, sizeof(cynvjitlink.mlFieldValue_t), owner)\n"));
  EXPECT_THAT(module, Not(HasSubstr("_adopt_memory(")));
  EXPECT_THAT(fv, HasSubstr("._adopt(_support.buffer_address(view), n, view.readonly, view)\n"));
  EXPECT_THAT(fv, HasSubstr("return _np_structs.read_column(self, <uintptr_t>self._ptr, self._n, "
                            "_dtypes.get(\"field_value_dtype\"), self._readonly, \"field_id\")\n"));
  const std::string bar = class_text(module, "BAR1Memory");
  EXPECT_THAT(bar, HasSubstr("def __init__(self, _ptr=0, **fields):\n"));
  EXPECT_THAT(bar, HasSubstr("def from_ptr(ptr, readonly=False, owner=None):\n"));
  EXPECT_THAT(bar, HasSubstr("def from_data(data):\n"));
  EXPECT_THAT(bar, HasSubstr("def from_buffer(buffer):\n"));
  EXPECT_THAT(bar, HasSubstr("    def ptr(self):\n"));
  EXPECT_THAT(bar, HasSubstr("_np_structs.refuse_write(\"BAR1Memory\", \"total\")\n"));
  EXPECT_THAT(bar, HasSubstr("def size_(self):\n"));
  EXPECT_THAT(bar, Not(HasSubstr("def reserved(self)")));
  EXPECT_THAT(bar, Not(HasSubstr("def __len__")));
  // Counted arrays: read as many as the count says, assigning sets it; the count is no attribute.
  const std::string info = class_text(module, "VgpuTypeBar1Info_v1");
  EXPECT_THAT(info, Not(HasSubstr("def count(self)")));
  EXPECT_THAT(info, Not(HasSubstr("def blob_size(self)")));
  // Structs of a class with arrays read as one array over the used ones; bytes as a NumPy array.
  EXPECT_THAT(info, HasSubstr("return FieldValue._adopt(<uintptr_t>&(<cynvjitlink.mlVgpuTypeBar1Info_v1_t*>self._ptr).items[0], "
                              "min(<Py_ssize_t>(<cynvjitlink.mlVgpuTypeBar1Info_v1_t*>self._ptr).count, 8), self._readonly, self)"));
  EXPECT_THAT(info, HasSubstr("return _np_structs.counted_numbers(self, <uintptr_t>&(<cynvjitlink.mlVgpuTypeBar1Info_v1_t*>self._ptr)"
                              ".blob[0], min(<Py_ssize_t>(<cynvjitlink.mlVgpuTypeBar1Info_v1_t*>self._ptr).blobSize, 16), \"B\", "
                              "self._readonly)"));
  EXPECT_THAT(info, HasSubstr("(<cynvjitlink.mlVgpuTypeBar1Info_v1_t*>self._ptr).count = len(items)\n"));
  EXPECT_THAT(info, HasSubstr("(<cynvjitlink.mlVgpuTypeBar1Info_v1_t*>self._ptr).blobSize = len(data)\n"));
}

// The switch's keys are checked: the array and counted keys need it, and
// names that match nothing are stale annotations.
TEST(EmitPythonFields, NumpyStructKeysAreChecked) {
  const auto refused = [](const std::string& python) {
    try {
      codegen::parse_annotations("library: {name: ml, headers: [ml.h], soname: libml.so.1, display_name: ml,\n"
                                 "  python: {title: ml, " + python + "}}\nfunctions: {}\n",
                                 "ml.yaml");
    } catch (const codegen::AnnotationError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(refused("struct_arrays: [mlFieldValue_t]"), HasSubstr("struct_arrays needs structs: numpy"));
  EXPECT_THAT(refused("structs: arrays"), HasSubstr("expected numpy or plain"));
  Library lib = codegen_test::parse_c("typedef struct { unsigned int n; int a[2]; } mlS_t;\nint mlInit(void);\n", "ml.h", false);
  const auto problems = codegen::classify(lib, codegen::parse_annotations(R"(library: {name: ml, headers: [ml.h],
  soname: libml.so.1, display_name: ml, python: {title: ml, structs: numpy, struct_arrays: [mlNone_t],
  counted_fields: {mlS_t.a: count, mlS_t.b: n}}}
functions: {}
)",
                                                                            "ml.yaml"));
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_THAT(problems[0], HasSubstr("struct_arrays: mlNone_t names no struct"));
  EXPECT_THAT(problems[1], HasSubstr("mlS_t.a -> count"));
  EXPECT_THAT(problems[2], HasSubstr("mlS_t.b -> n"));
}

// python.shared_count_lists: pointer fields one count sizes read as lists of
// the count's items; none is assigned alone; set_<a>_<b>() sets them and the
// count, keeping the arrays; a field of another type or name is an error.
TEST(EmitPythonFields, SharedCountListsAreSetTogether) {
  const std::string header = R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct Batch_st { unsigned long long count; CUdeviceptr *dsts; CUdeviceptr *srcs; unsigned long long *sizes; } Batch;
CUresult cuInit(unsigned int Flags);
)";
  Library lib = codegen_test::parse_c(header, "batch.h");
  const auto annotations = codegen::parse_annotations(
      "library: {name: driver, headers: [batch.h], soname: libcuda.so.1, display_name: D, python: {title: D,\n"
      "  shared_count_lists: {Batch_st: [count, dsts, srcs]}}}\nfunctions: {}\n",
      "driver.yaml");
  ASSERT_TRUE(codegen::classify(lib, annotations).empty());
  static_cast<codegen::LibraryDescriptor&>(lib).python = annotations.library.python;
  const std::string module = emitted(lib, ".pyx");
  const std::string stub = emitted(lib, ".pyi");
  const std::string batch = class_text(module, "Batch");
  EXPECT_THAT(batch, HasSubstr("return [CUdeviceptr._from((<cydriver.Batch_st*>self._ptr).dsts[i]) for i in range(n)]"));
  EXPECT_THAT(batch, HasSubstr("min(<Py_ssize_t>(<cydriver.Batch_st*>self._ptr).count, len(array))"));
  EXPECT_THAT(batch, HasSubstr("raise AttributeError(\"srcs shares its count field (count) with dsts"));
  EXPECT_THAT(batch, HasSubstr("    def set_dsts_srcs(self, dsts, srcs):\n"));
  EXPECT_THAT(batch, HasSubstr("if _a1.n != _a0.n:\n"));
  EXPECT_THAT(batch, HasSubstr("_support.keep(self, \"srcs\", _a1 if _a1.n else None)\n"));
  EXPECT_THAT(batch, HasSubstr("(<cydriver.Batch_st*>self._ptr).count = _a0.n\n"));
  // sizes, which the annotation leaves out, stays an address.
  EXPECT_THAT(batch, HasSubstr("return <uintptr_t>(<cydriver.Batch_st*>self._ptr).sizes"));
  EXPECT_THAT(stub, HasSubstr("    dsts: list[CUdeviceptr]\n"));
  EXPECT_THAT(stub, HasSubstr("    def set_dsts_srcs(self, dsts: Sequence[CUdeviceptr | int], srcs: Sequence[CUdeviceptr | int]) -> None: ...\n"));

  const auto problems = codegen::classify(
      lib, codegen::parse_annotations(
               "library: {name: driver, headers: [batch.h], soname: libcuda.so.1, display_name: D, python: {title: D,\n"
               "  shared_count_lists: {Batch_st: [total, dsts, nothing]}}}\nfunctions: {}\n",
               "driver.yaml"));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_THAT(problems[0], HasSubstr("Batch_st.nothing names no pointer field"));
  EXPECT_THAT(problems[1], HasSubstr("Batch_st.total names no integer field"));
  EXPECT_THROW(codegen::parse_annotations(
                   "library: {name: driver, headers: [batch.h], soname: libcuda.so.1, display_name: D, python: {title: D,\n"
                   "  shared_count_lists: {Batch_st: [count, dsts]}}}\nfunctions: {}\n",
                   "driver.yaml"),
               codegen::AnnotationError);
}

// An enum field takes a plain int that is a negative member's value (INVALID,
// -1), as cuda.bindings does; other values go through _support.enum_field.
TEST(EmitPythonFields, NegativeEnumMembersAreTakenAsInts) {
  const std::string module = python_module(R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef enum Own_enum { OWN_INVALID = -1, OWN_CLONE = 0, OWN_MOVE = 1 } Own;
typedef enum Kind_enum { KIND_A = 0, KIND_B = 1 } Kind;
typedef struct Child_st { Own ownership; Kind kind; } Child;
CUresult cuInit(unsigned int Flags);
)");
  const std::string child = class_text(module, "Child");
  EXPECT_THAT(child, HasSubstr("        if type(value) is int and value in (-1, ):\n"
                               "            (<cydriver.Child_st*>self._ptr).ownership = <cydriver.Own><long long>value\n"
                               "            return\n"));
  EXPECT_THAT(child, HasSubstr("(<cydriver.Child_st*>self._ptr).kind = <cydriver.Kind><long long>_support.enum_field(value"));
  EXPECT_THAT(child, Not(HasSubstr("value in ()")));
}

// A value typed by an attribute: the attribute's C value finds its C type in
// the module's table of that enum, and the value lives on the stack; the
// table exists only in a module with such values.
TEST(EmitPythonFunctions, TypedValuesUseTheirEnumsTableAndAStackSlot) {
  const std::string module = driver_pyx(R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef enum { ATTR_COUNT = 1, ATTR_RATIO = 2 } attr_t;
CUresult getAttr(void *data, attr_t attribute, int which);
CUresult getAttrs(unsigned int n, attr_t *attributes, void **data, int which);
)",
                                        "typed.h",
                                        "functions:\n"
                                        "  getAttr: {params: {data: {direction: out, typed_by: attribute}}}\n"
                                        "  getAttrs:\n"
                                        "    params:\n"
                                        "      attributes: {direction: in, count: n}\n"
                                        "      data: {direction: out, count: n, typed_by: attributes}\n"
                                        "attribute_types:\n"
                                        "  attr_t: {ATTR_COUNT: unsigned int, ATTR_RATIO: double}\n");
  EXPECT_THAT(module, HasSubstr("cdef _support.TypedTable _TYPES_attr_t = _support.TypedTable(\"attr_t\", {\n"
                                "    1: (\"scalar\", sizeof(unsigned int), \"I\", None, 1),  # ATTR_COUNT\n"
                                "    2: (\"scalar\", sizeof(double), \"d\", None, 1),  # ATTR_RATIO\n"
                                "}, _enums)\n"));
  const auto begin = module.find("def getAttr(");
  ASSERT_NE(begin, std::string::npos) << module;
  const std::string get = module.substr(begin, module.find("\ndef ", begin + 1) - begin);
  EXPECT_THAT(get, HasSubstr("    cdef _support.TypedSlot _c_data\n    cdef _support.TypedSpec _t_data\n"));
  EXPECT_THAT(get, HasSubstr("    _c_data.buf = NULL\n    try:\n"));
  EXPECT_THAT(get, HasSubstr("        _t_data = _TYPES_attr_t.spec(<long long>_c_attribute, \"data\")\n"
                             "        _support.typed_init(&_c_data, _t_data, None, \"data\", 0)\n"));
  EXPECT_THAT(get, HasSubstr("(<void *>_c_data.ptr, _c_attribute, _c_which)"));
  EXPECT_THAT(get, HasSubstr("return _support.spare_pair(&_spare_pair, _status(0), "
                             "_support.typed_read(&_c_data, _t_data))"));
  EXPECT_THAT(get, HasSubstr("    finally:\n        _support.typed_release(&_c_data)\n"));
  // An attributes list: each item's C value, converted with the list, finds its entry.
  const auto many = module.find("def getAttrs(");
  ASSERT_NE(many, std::string::npos);
  EXPECT_THAT(module.substr(many), HasSubstr("_support.typed_value(_TYPES_attr_t.spec(<long long>_c_attributes[_i_data], \"data\"), None"));

  // A module without typed values has no table and no lookup of one.
  EXPECT_THAT(python_module(kFieldsHeader), Not(HasSubstr("_support.TypedTable")));
}


// A value typed by an attribute that the caller passes by pointer, with no
// count (no array of attributes): there is no C value to find its type with,
// and the emitter says so rather than write a cast of the pointer.
// A call that returns one value holding nothing else (a number, an enum
// member, a typed value) returns it in the module's spare pair; a handle, a
// value object or a struct (which the module reuses in place or which keep
// memory alive), two values, and a failure make a tuple of their own.
TEST(EmitPythonFunctions, OneLittleValueComesBackInTheSparePair) {
  const std::string module = driver_pyx(R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef enum { MODE_A = 1 } mode_t_;
typedef struct CUctx_st *CUcontext;
typedef struct { int x; } pair_t;
CUresult getCount(int *count);
CUresult getMode(mode_t_ *mode);
CUresult getContext(CUcontext *ctx);
CUresult getPair(pair_t *p);
CUresult getTwo(int *a, unsigned long long *b);
)",
                                        "little.h",
                                        "functions:\n"
                                        "  getCount: {params: {count: {direction: out}}}\n"
                                        "  getMode: {params: {mode: {direction: out}}}\n"
                                        "  getContext: {params: {ctx: {direction: out}}}\n"
                                        "  getPair: {params: {p: {direction: out}}}\n"
                                        "  getTwo: {params: {a: {direction: out}, b: {direction: out}}}\n");
  EXPECT_THAT(module, HasSubstr("\ncdef PyObject* _spare_pair = NULL\n"));
  const auto body = [&](const std::string& name) {
    const auto begin = module.find("def " + name + "(");
    EXPECT_NE(begin, std::string::npos) << name;
    return module.substr(begin, module.find("\ndef ", begin + 1) - begin);
  };
  EXPECT_THAT(body("getCount"), HasSubstr("    return _support.spare_pair(&_spare_pair, _status(0), _c_count)\n"));
  EXPECT_THAT(body("getMode"), HasSubstr("    return _support.spare_pair(&_spare_pair, _status(0), "
                                         "_enum_member(\"mode_t_\", <long long>_c_mode))\n"));
  for (const char* name : {"getCount", "getMode"}) {
    EXPECT_THAT(body(name), HasSubstr("        return (_status(_result), None)\n")) << name;
  }
  EXPECT_THAT(body("getContext"), HasSubstr("    return (_status(0), _wrap_CUcontext(<void*>_c_ctx))\n"));
  EXPECT_THAT(body("getPair"), HasSubstr("    return (_status(0), _c_p)\n"));
  EXPECT_THAT(body("getTwo"), HasSubstr("    return (_status(0), _c_a, _c_b)\n"));
  for (const char* name : {"getContext", "getPair", "getTwo"}) {
    EXPECT_THAT(body(name), Not(HasSubstr("spare_pair"))) << name;
  }
}

TEST(EmitPythonFunctions, TypedByAPointerThatIsNoArrayIsRefused) {
  Library lib = codegen_test::parse_c(R"(
typedef enum cudaError_enum { CUDA_SUCCESS = 0 } CUresult;
typedef enum { ATTR_COUNT = 1 } attr_t;
CUresult getByPointer(void *data, const attr_t *attribute);
)",
                                      "typed.h");
  const auto problems = codegen::classify(
      lib, codegen::parse_annotations("library: {name: driver, headers: [typed.h], soname: libcuda.so.1, "
                                      "display_name: Driver, python: {title: Driver}}\n"
                                      "functions:\n"
                                      "  getByPointer: {params: {data: {direction: out, typed_by: attribute}}}\n"
                                      "attribute_types:\n"
                                      "  attr_t: {ATTR_COUNT: unsigned int}\n",
                                      "typed.yaml"));
  ASSERT_TRUE(problems.empty()) << problems.front();
  try {
    emitted(lib, ".pyx");
    FAIL() << "a typed_by naming a pointer that is no array was emitted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("getByPointer.data: typed_by names attribute, which is not an enum argument"));
  }
}

#include "python/pyx_writer.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "codegen/emit_common.hpp"
#include "python/docs.hpp"
#include "python/pyx_function.hpp"

namespace codegen::python {

PyxWriter::PyxWriter(const ModulePlan& plan, const EmitOptions& options)
    : plan_(plan), lib_(plan.lib), m_(plan.model), options_(options) {}

std::string PyxWriter::run() {
  header();
  constants();
  enums();
  status();
  handles();
  values();
  structs();
  callbacks();
  functions();
  helpers();
  sizes();
  // POSIX types a header uses (cufile.h's off_t), declared by Cython itself.
  std::string text = o_.str();
  const std::string anchor = "from cpython.object cimport PyObject\n";
  if (std::regex_search(text, std::regex("\\bcpp_bool\\b"))) {
    text.insert(text.find(anchor) + anchor.size(), "from libcpp cimport bool as cpp_bool\n");
  }
  if (std::regex_search(text, std::regex("\\boff_t\\b"))) {
    text.insert(text.find(anchor) + anchor.size(), "from posix.types cimport off_t\n");
  }
  return text;
}

void PyxWriter::header() {
  o_ << stamp(lib_, options_, "#");
  // binding=False: module functions are plain builtins, which Python calls
  // faster. embedsignature in the clinic format gives each one a
  // __text_signature__ (`name(args)\n--\n\n` ahead of its docstring), which
  // inspect.signature reads: introspection at no cost per call. Clinic
  // signatures carry no annotations; the docstring's first line and the .pyi do.
  o_ << "# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, binding=False\n";
  o_ << "# cython: embedsignature=True, embedsignature.format=clinic\n";
  o_ << "# distutils: language = c++\n";
  o_ << "\"\"\"Bindings of " << plan_.conventions.title() << ".\n\n";
  if (plan_.conventions.raising()) {
    o_ << "As in cuda.bindings." << lib_.name << ": snake_case functions that return their outputs and\n"
          "raise " << plan_.conventions.error_class() << " on failure. Outputs such as the linked cubin come back as new\n"
          "bytes; a caller buffer is still accepted.\n\"\"\"\n\n";
  } else {
    o_ << "As in cuda.bindings: every function returns (status, *outputs); outputs are None\n"
          "when the status is not success. Handles accept their class, an int or None.\n"
          "The GIL is released around every call into the library.\n\"\"\"\n\n";
  }
  o_ << "cimport cython\n";
  o_ << "from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, "
        "intptr_t, uintptr_t\n";
  o_ << "from libc.stdlib cimport calloc, free, malloc\n";
  o_ << "from libc.string cimport memcpy, memset, strlen\n";
  o_ << "from cpython.buffer cimport Py_buffer\n";
  o_ << "from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize\n";
  o_ << "from cubind.bindings cimport " << m_.cy << "\n";
  o_ << "from cubind.bindings cimport _support\n";
  o_ << "from cpython.object cimport PyObject\n";
  if (plan_.conventions.numpy_structs()) {
    o_ << "from cubind.bindings._support import numpy_structs as _np_structs\n\n";
    if (!lib_.python.counted_fields.empty()) {
      // A counted pointer field's new items (numbers or addresses), in an
      // array the struct keeps; no items leave its data NULL.
      o_ << "\ncdef _support.FieldArray _counted_array(object value, size_t itemsize, str fmt, str name, str expected):\n"
            "    if value is None or isinstance(value, (int, float, str, bytes, bytearray)):\n"
            "        raise TypeError(f\"{name}: expected a sequence of {expected}, got {type(value).__name__}\")\n"
            "    items = list(value)\n"
            "    cdef _support.FieldArray array = _support.FieldArray.__new__(_support.FieldArray)\n"
            "    if items:\n"
            "        array.data = <char*>_support.alloc_array(len(items), itemsize)\n"
            "        array.n = len(items)\n"
            "        _support.array_assign(<void*>array.data, array.n, itemsize, fmt, items, name)\n"
            "    return array\n";
    }
  }
  o_ << "\n";
}

void PyxWriter::constants() {
  o_ << "# Constants (#define)\n";
  const Conventions& names = plan_.conventions;
  for (const Macro& mc : lib_.macros) {
    if (!names.exports_constant(mc.name)) continue;
    const std::string name = names.constant_name(mc.name);
    switch (mc.kind) {
      case Macro::Kind::Integer:
      case Macro::Kind::Pointer: o_ << name << " = " << mc.int_value << "\n"; break;
      case Macro::Kind::Float: o_ << name << " = " << mc.float_value << "\n"; break;
      case Macro::Kind::String: o_ << name << " = b\"" << mc.string_value << "\"\n"; break;
    }
  }
  o_ << "\n";
}

// Enum classes are built on first use (module __getattr__): a module holds
// hundreds of them and most programs touch a few.
// member_aliases: the other names cuda.bindings gives a member (cuda.bindings.cudla:
// CUDLA_MODULE_DEFAULT is also MODULE_DEFAULT; cudlaErrorOs is also ErrorOs and ERROR_OS).
std::vector<std::string> PyxWriter::member_aliases(const std::string& member) const {
  std::vector<std::string> out;
  const std::string& prefix = lib_.python.prefix;
  if (!lib_.python.member_aliases || prefix.empty() || member.size() <= prefix.size()) return out;
  std::string upper = prefix;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (member.rfind(upper + "_", 0) == 0 && member.size() > upper.size() + 1) {
    out.push_back(member.substr(upper.size() + 1));
  } else if (member.rfind(prefix, 0) == 0 && std::isupper(static_cast<unsigned char>(member[prefix.size()]))) {
    const std::string camel = member.substr(prefix.size());
    std::string snake = Conventions::snake_case(camel);
    for (char& c : snake) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out.push_back(camel);
    out.push_back(snake);
  }
  return out;
}

void PyxWriter::enums() {
  const Conventions& names = plan_.conventions;
  o_ << "# Enums, built on first use\n";
  // One string per enum ("doc\nNAME VALUE NAME VALUE ..."), split on first use:
  // thousands of separate constants would cost import time.
  o_ << "cdef dict _ENUMS = {\n";
  for (const Enum& e : lib_.enums) {
    if (e.name.rfind("anon_enum", 0) == 0) continue;
    std::string spec = first_sentence(e.doc);
    std::replace(spec.begin(), spec.end(), '\n', ' ');
    spec += "\n";
    // Members as cuda.bindings names them (NVML_P2P_CAPS_INDEX_READ -> P2P_CAPS_INDEX_READ,
    // NVML_CLOCK_ID_CURRENT -> CURRENT), each with its other names (member_aliases),
    // then the enum's extra names (a second name of a value is that member's alias).
    for (const auto& v : e.enumerators) {
      const std::string value = Conventions::member_value(e, v.value);
      spec += names.member_name(e, v) + " " + value + " ";
      for (const std::string& alias : member_aliases(v.name)) spec += alias + " " + value + " ";
    }
    for (const auto& [name, value] : names.extra_members(e)) spec += name + " " + Conventions::member_value(e, value) + " ";
    o_ << "    \"" << names.enum_name(e.name) << "\": " << py_string(spec) << ",\n";
  }
  o_ << "}\n";
  o_ << "cdef dict _ENUM_PREFIXES = {\n";
  for (const Enum& e : lib_.enums) {
    const std::string prefix = names.short_prefix(e);
    if (!prefix.empty()) o_ << "    \"" << names.enum_name(e.name) << "\": \"" << prefix << "\",\n";
  }
  o_ << "}\n";
  o_ << "cdef dict _ENUM_ALIASES = {\n";
  for (const auto& [name, aliases] : m_.enum_aliases) {
    for (const auto& a : aliases) o_ << "    \"" << names.enum_name(a) << "\": \"" << names.enum_name(name) << "\",\n";
  }
  for (const auto& [alias, target] : lib_.type_aliases) {
    if (const Enum* e = m_.find_enum(target)) {
      o_ << "    \"" << names.enum_name(alias) << "\": \"" << names.enum_name(e->name) << "\",\n";
    }
  }
  o_ << "}\n\n";
  enum_table();
}

// The lookups live in the support module; the module keeps its table and
// two inline shorthands for the call sites.
void PyxWriter::enum_table() {
  const std::string& status = plan_.status_py;
  o_ << "# The module's enum classes and the status member of each code (" << status << ").\n";
  o_ << "cdef _support.EnumTable _enums = _support.EnumTable(__name__, globals(), _ENUMS, _ENUM_PREFIXES, "
        "_ENUM_ALIASES,\n"
        "                                                    \"" << status << "\")\n\n";
  // Names of other modules (python.reexports), imported on first use.
  std::string reexported, listed;
  for (const auto& [name, target] : lib_.python.reexports) {
    const auto dot = target.find('.');
    reexported += "    if name == \"" + name + "\":\n        from cubind.bindings." + target.substr(0, dot) + " import " +
                  target.substr(dot + 1) + "\n        return " + target.substr(dot + 1) + "\n";
    listed += "\"" + name + "\", ";
  }
  if (plan_.conventions.numpy_structs()) {
    // The dtypes are built on first use, so that importing needs no NumPy.
    o_ << "def __getattr__(name):\n" << reexported
       << "    if name in _dtypes and not name.startswith(\"_\"):\n"
          "        return _dtypes.get(name)\n"
          "    return _enums.attribute(name)\n\n";
    o_ << "def __dir__():\n"
          "    return list(_enums.names()) + _DTYPE_NAMES"
       << (listed.empty() ? "" : " + [" + listed + "]") << "\n\n";
  } else {
    o_ << "def __getattr__(name):\n" << reexported << "    return _enums.attribute(name)\n\n";
    o_ << "def __dir__():\n"
          "    return " << (listed.empty() ? "_enums.names()" : "list(_enums.names()) + [" + listed + "]") << "\n\n";
  }
  o_ << "cdef inline object _enum_member(str name, long long value):\n"
        "    return _support.enum_member(_enums, name, value)\n\n";
  o_ << "cdef inline object _status(long long code):\n"
        "    return _support.status(_enums, code)\n\n";
  o_ << "cdef inline tuple _status_alone(long long code):\n"
        "    return _support.status_alone(_enums, code)\n\n";
  if (!plan_.conventions.raising()) {
    o_ << "# The (success, value) pair of the calls that return one number, enum member\n"
          "# or typed value (_support.spare_pair).\n"
          "cdef PyObject* _spare_pair = NULL\n\n";
  }
}

void PyxWriter::status() {
  if (!plan_.conventions.raising()) return;
  const std::string& error_class = plan_.conventions.error_class();
  if (!lib_.python.status_detail.empty()) {
    // A struct status (CUfileError_t): the code and the CUresult it carries, as
    // cuda.bindings.cufile's error: cuFileError(status, cu_err=None), .status and
    // .cuda_error; the message names both, with the status in words.
    const std::string& detail = lib_.python.status_detail;
    o_ << "class " << error_class << "(Exception):\n"
       << "    \"\"\"A failed " << lib_.display_name << " call: .status is the " << plan_.status_py
       << ", .cuda_error the CUDA driver's status\n    (a CUresult) where the library reports one.\"\"\"\n\n"
       << "    def __init__(self, status, " << detail << "=None):\n"
       << "        status = _status(int(status))\n"
       << "        self.status = status\n"
       << "        self.cuda_error = " << detail << "\n"
       << "        text = f\"{status.name} ({int(status)})\"\n";
    if (!lib_.python.status_text.empty()) {
      o_ << "        words = " << plan_.conventions.function_name(lib_.python.status_text) << "(int(status))\n"
         << "        if words:\n"
         << "            text += \": \" + words\n";
    }
    o_ << "        if " << detail << " is not None:\n"
       << "            text += f\"; CUDA status: {_cuda_status_name(" << detail << ")} ({int(" << detail << ")})\"\n"
       << "        super().__init__(text)\n\n"
       << "    def __reduce__(self):\n"
       << "        return (type(self), (self.status, self.cuda_error))\n\n"
       << "def _cuda_status_name(code):\n"
       << "    # The driver's enum names a value it has no member for CUresult_<value>.\n"
       << "    from cubind.bindings.driver import CUresult\n"
       << "    return CUresult(int(code)).name\n\n"
       << "from libc.errno cimport errno as _errno\nimport os as _os\n\n"
       << "cdef int _check_count(long long value) except -1:\n"
       << "    # A byte count: -1 with errno set (a file system error), or a negative status.\n"
       << "    if value == -1:\n"
       << "        raise OSError(_errno, _os.strerror(_errno))\n"
       << "    if value < 0:\n"
       << "        raise " << error_class << "(_status(-value))\n"
       << "    return 0\n\n"
       << "cdef int _check(long long code, long long " << detail << "=0) except -1:\n"
       << "    if code != 0:\n"
       << "        raise " << error_class << "(_status(code), " << detail << " if " << detail << " else None)\n"
       << "    return 0\n\n";
    return;
  }
  o_ << "class " << error_class << "(Exception):\n"
     << "    \"\"\"A failed " << lib_.display_name << " call: .status is the Result, .log the error log when one was kept.\"\"\"\n\n"
     << "    def __init__(self, status, log=None):\n"
     << "        status = _status(int(status))\n"
     << "        self.status = status\n"
     << "        self.log = log\n"
     << "        text = f\"{status.name} ({int(status)})\"\n"
     << "        if log:\n"
     << "            text += \":\\n\" + log\n"
     << "        super().__init__(text)\n\n"
     << "    def __reduce__(self):\n"
     << "        return (type(self), (self.status, self.log))\n\n"
     << "cdef int _check(long long code) except -1:\n"
     << "    if code != 0:\n"
     << "        raise " << (plan_.conventions.error_subclasses() ? "_ERRORS.get(code, " + error_class + ")" : error_class)
     << "(_status(code))\n"
     << "    return 0\n\n";
  if (lib_.python.check_status && !plan_.conventions.error_subclasses()) {
    o_ << "cpdef int check_status(int status) except? -1:\n"
       << "    \"\"\"Raises " << error_class << " for a failing status; returns 0 for success.\"\"\"\n"
       << "    return _check(status)\n\n";
  }
  if (plan_.conventions.error_subclasses()) error_subclasses();
}

// One subclass of the error class per failing status, named as cuda.bindings
// names them: NVML_ERROR_GPU_IS_LOST -> GpuIsLostError. A name that would
// shadow a builtin exception (MemoryError) is the class NvmlMemoryError, and
// the builtin's name is an alias of it.
void PyxWriter::error_subclasses() {
  const std::string& error_class = plan_.conventions.error_class();
  const Enum* status = nullptr;
  for (const Enum& e : lib_.enums) {
    if (plan_.conventions.enum_name(e.name) == plan_.status_py) status = &e;
  }
  if (status == nullptr) throw std::runtime_error(lib_.name + ": error_subclasses, but no status enum " + plan_.status_py);
  std::ostringstream table;
  std::string insufficient_size = "-1", not_found_library = "-1", not_found_function = "-1";
  const auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (const auto& v : status->enumerators) {
    if (v.value == 0) continue;
    if (ends_with(v.name, "INSUFFICIENT_SIZE")) insufficient_size = std::to_string(v.value);
    if (ends_with(v.name, "LIBRARY_NOT_FOUND")) not_found_library = std::to_string(v.value);
    if (ends_with(v.name, "FUNCTION_NOT_FOUND")) not_found_function = std::to_string(v.value);
    std::string alias;
    const std::string cls = plan_.conventions.error_subclass(*status, v, alias);
    o_ << "class " << cls << "(" << error_class << "):\n"
       << "    \"\"\"" << v.name << ": " << clean_doc(first_sentence(v.doc)) << "\"\"\"\n\n";
    if (!alias.empty()) o_ << alias << " = " << cls << "\n\n";
    table << "    " << v.value << ": " << cls << ",\n";
  }
  o_ << "cdef dict _ERRORS = {\n" << table.str() << "}\n\n";
  // The loader's RuntimeError as the library's status: the library cannot be
  // loaded, or lacks the function (older than the header).
  o_ << "cdef int _loader_error(object error) except -1:\n"
     << "    text = str(error)\n"
     << "    code = " << not_found_library << " if text.startswith(\"cubind could not load\") else " << not_found_function << "\n"
     << "    raise _ERRORS.get(code, " << error_class << ")(_status(code), text) from error\n\n";
  o_ << "cpdef int check_status(int status) except? -1:\n"
     << "    \"\"\"Raises the " << error_class << " subclass of a failing status; returns 0 for success.\"\"\"\n"
     << "    return _check(status)\n\n"
     << "cpdef int check_status_size(int status) except? -1:\n"
     << "    \"\"\"As check_status, but a status that only says the buffer was too small returns 0.\"\"\"\n"
     << "    if status == " << insufficient_size << ":\n"
     << "        return 0\n"
     << "    return _check(status)\n\n";
}

void PyxWriter::handles() {
  o_ << "# Handles\n";
  for (const auto& name : m_.handle_order) {
    const Typedef* td = m_.find_typedef(name);
    o_ << "cdef class " << name << "(_support.Handle):\n";
    std::string doc = td != nullptr ? clean_doc(first_sentence(td->doc)) : "";
    o_ << docstring(name + "(init_value=0, _ptr=0)\n\n" + (doc.empty() ? "A CUDA handle." : doc) +
                        "\n\nint(h) is its address; getPtr() the address of its storage.",
                    "    ");
    // The C struct the handle points to: classes of the same one (CUstream,
    // cudaStream_t) are accepted for each other.
    std::string record;
    if (td != nullptr) record = td->kind == Typedef::Kind::Handle ? td->record : strip_qualifiers(td->target.canonical);
    o_ << "\n    _c_type = \"" << strip_pointer(record) << "\"\n";
    if (name == "CUstream" || name == "cudaStream_t") {
      o_ << "\n    def __cuda_stream__(self):\n"
            "        \"\"\"The CUDA stream protocol: (version, address).\"\"\"\n"
            "        return (0, <uintptr_t>self._value)\n";
    }
    o_ << "\n" << wrap_function(name);
  }
  // Callback typedefs: the address of a C function, as cuda.bindings' classes
  // of these names hold (for a ctypes CFUNCTYPE object, its address). A
  // function taking a callback accepts one of these, or a Python callable.
  for (const auto& name : m_.function_pointer_order) {
    o_ << "cdef class " << name << "(_support.Handle):\n";
    o_ << docstring(name + "(init_value=0, _ptr=0)\n\nThe address of a C function of type " + name +
                        " (a ctypes function's, ctypes.cast(f, ctypes.c_void_p).value).\n\n"
                        "int(f) is the address; getPtr() the address of its storage.",
                    "    ");
    o_ << "\n    _c_type = \"" << name << "\"\n\n" << wrap_function(name);
  }
  o_ << "\n";
}

void PyxWriter::values() {
  o_ << "# Integer-valued types with a class of their own (devices, device pointers, ...)\n";
  for (const auto& name : m_.value_order) {
    const std::string c = m_.cy + "." + name;
    // Returned by the million (cuDeviceGet, cuMemAlloc): a free list spares the allocator.
    o_ << "@cython.freelist(16)\n";
    o_ << "cdef class " << name << ":\n";
    o_ << docstring(name + "(init_value=0, _ptr=0)\n\nA " + m_.value_c_type(name) +
                        " with a type of its own: int(), ==, hash() and index() use its value.",
                    "    ");
    o_ << "    cdef " << c << " _value\n\n";
    o_ << "    def __init__(self, init_value=0, _ptr=0):\n"
          "        if _ptr:\n"
          "            self._value = (<" << c << "*><uintptr_t>_ptr)[0]\n"
          "        else:\n"
          "            self._value = <" << c << ">_support.as_int(init_value, \"init_value\")\n\n";
    // As handles (wrap_function): the spare, declared after the class, is
    // reused in place while nothing else refers to it.
    const std::string spare = "_spare_" + name;
    o_ << "    @staticmethod\n"
          "    cdef " << name << " _from(" << c << " value):\n"
       << "        global " << spare << "\n"
       << "        if _support.only_spare(<PyObject*>" << spare << "):\n"
       << "            " << spare << "._value = value\n"
       << "            return " << spare << "\n"
       << "        cdef " << name << " obj = " << name << ".__new__(" << name << ")\n"
       << "        obj._value = value\n"
       << "        " << spare << " = obj\n"
          "        return obj\n\n";
    o_ << "    def __int__(self):\n        return self._value\n\n"
          "    def __index__(self):\n        return self._value\n\n"
          "    def __eq__(self, other):\n"
          "        if isinstance(other, " << name << "):\n            return self._value == (<" << name
       << ">other)._value\n"
          "        if isinstance(other, int):\n            return self._value == other\n"
          "        return NotImplemented\n\n"
          "    def __lt__(self, other):\n        return self._value < other.__index__()\n\n"
          "    def __le__(self, other):\n        return self._value <= other.__index__()\n\n"
          "    def __gt__(self, other):\n        return self._value > other.__index__()\n\n"
          "    def __ge__(self, other):\n        return self._value >= other.__index__()\n\n"
          "    def __hash__(self):\n        return hash(self._value)\n\n"
          "    def __repr__(self):\n        return f\"<" << name << " {self._value}>\"\n\n"
       << "    def getPtr(self):\n        return <uintptr_t>&self._value\n\n"
       << "    def __reduce__(self):\n        return (" << name << ", (self._value,))\n\n"
       << "cdef " << name << " " << spare << " = None\n\n";
  }
}

void PyxWriter::structs() {
  o_ << "# Structs and unions\n";
  // Classes are declared first: fields of one refer to others.
  for (const auto& sc : m_.structs) struct_class(sc);
  if (plan_.conventions.numpy_structs()) numpy_dtypes();
  // #define aliases of struct and handle types (none where names are Python's).
  for (const auto& [alias, target] : lib_.type_aliases) {
    if (plan_.conventions.raising()) break;
    if (const auto* sc = m_.find_struct(target)) alias_lines_ << alias << " = " << sc->py << "\n";
  }
  o_ << alias_lines_.str() << "\n";
}

void PyxWriter::struct_class(const Model::StructClass& sc) {
  const std::string c = m_.cy + "." + sc.record->name;
  const bool numpy = plan_.conventions.numpy_structs();
  const bool array = numpy && m_.struct_array(*sc.record);
  numpy_ = numpy;
  array_ = array;
  class_ = sc.py;
  record_ = sc.record;
  dtype_ = numpy ? plan_.conventions.dtype_name(sc.py) : "";
  o_ << "cdef class " << sc.py << "(_support.Struct):\n";
  std::string doc = clean_doc(sc.record->doc);
  std::string usage = "\n\nHolds its own zeroed storage, or views the memory at _ptr. Fields are\n"
                      "attributes; nested structs and array fields write through.";
  if (array) {
    usage = "\n\nAn array of `size` structs (one by default) of dtype " + dtype_ +
            ", in zeroed storage of its own or\nviewing the memory at _ptr. Fields are attributes: of one struct, "
            "its value; of several,\na NumPy array with an item per struct. len() counts the structs and "
            "[i] views one.";
  } else if (numpy) {
    usage += "\nIts NumPy form is " + dtype_ + " (from_data, from_ptr, from_buffer, ptr).";
  }
  o_ << docstring(sc.py + (array ? "(size=1, *, _ptr=0, **fields)\n\n" : "(_ptr=0, **fields)\n\n") +
                      (doc.empty() ? std::string(sc.record->is_union ? "A union." : "A struct.") : doc) + usage,
                  "    ");
  if (numpy) {
    o_ << "    cdef bint _readonly  # from_ptr(readonly=True) or a read-only buffer: setters refuse\n"
          "    cdef Py_ssize_t _n   # structs at _ptr: 1 but for arrays of structs\n\n";
  }
  // Storage from the heap, not a member: some C++ types (unions holding dim3)
  // have no default constructor.
  o_ << "    def __cinit__(self, *args, **kwargs):\n"
        "        self._ptr = _support.alloc_struct(sizeof(" << c << "))\n"
        "        self._own = True\n";
  if (numpy) o_ << "        self._n = 1\n";
  // dim3 members start at 1, as C++ constructs them (and cuda.bindings reads them).
  std::vector<std::string> dims;
  dim3_paths(*sc.record, "", dims);
  for (const auto& d : dims) {
    for (const char* axis : {"x", "y", "z"}) o_ << "        (<" << c << "*>self._ptr)" << d << "." << axis << " = 1\n";
  }
  o_ << "\n";
  o_ << "    def __dealloc__(self):\n"
        "        if self._own:\n"
        "            _support.free_struct(self._ptr)\n\n";
  if (array) {
    o_ << "    def __init__(self, size=1, *, _ptr=0, **fields):\n"
          "        cdef Py_ssize_t n = _np_structs.count(size, \"" << sc.py << "\")\n"
          "        if n != 1:\n"
          "            if <size_t>n > (<size_t>-1) // 2 // sizeof(" << c << "):\n"
          "                raise OverflowError(f\"" << sc.py << "(size={n}): too many structs\")\n"
          "            _support.free_struct(self._ptr)\n"
          "            self._ptr = NULL\n"
          "            self._own = False\n"
          "            self._ptr = _support.alloc_struct(n * sizeof(" << c << "))\n"
          "            self._own = True\n"
          "            self._n = n\n"
          "        if _ptr:\n"
          "            address = _np_structs.address(_ptr, \"" << sc.py << "\")\n"
          "            if self._own:\n"
          "                _support.free_struct(self._ptr)\n"
          "                self._own = False\n"
          "            self._ptr = <void*><uintptr_t>address\n"
          "        for name, value in fields.items():\n"
          "            if name.startswith(\"_\") or not hasattr(type(self), name):\n"
          "                raise AttributeError(f\"" << sc.py << " has no field {name!r}\")\n"
          "            setattr(self, name, value)\n\n";
  } else {
  o_ << "    def __init__(self, _ptr=0, **fields):\n"
        "        if _ptr:\n";
  if (m_.conventions.int_handles()) {
    // cuda.bindings.nvml's struct classes take a count first (FieldValue(3): an
    // array of three); here a small int would be viewed as an address and crash.
    o_ << "            if _support.as_int(_ptr, \"_ptr\") < 65536:\n"
          "                raise ValueError(f\"" << sc.py << "(_ptr={_ptr!r}): _ptr is the address of a struct to view, "
          "not a count: a " << sc.py << " holds one struct, and functions take and return lists of them\")\n";
  }
  o_ << "            if self._own:\n"
        "                _support.free_struct(self._ptr)\n"
        "                self._own = False\n"
        "            self._ptr = <void*><uintptr_t>_support.as_int(_ptr, \"_ptr\")\n"
        "        for name, value in fields.items():\n"
        "            if name.startswith(\"_\") or not hasattr(type(self), name):\n"
        "                raise AttributeError(f\"" << sc.py << " has no field {name!r}\")\n"
        "            setattr(self, name, value)\n\n";
  }
  o_ << "    @staticmethod\n"
        "    cdef " << sc.py << " _view(void* ptr, object owner):\n"
     << "        cdef " << sc.py << " obj = " << sc.py << ".__new__(" << sc.py << ")\n"
     << "        _support.free_struct(obj._ptr)\n"
        "        obj._own = False\n"
        "        obj._ptr = ptr\n"
        "        obj._owner = owner\n"
        "        return obj\n\n";
  o_ << "    @staticmethod\n"
        "    cdef " << sc.py << " _copy(const void* ptr):\n"
     << "        cdef " << sc.py << " obj = " << sc.py << ".__new__(" << sc.py << ")\n"
     << "        memcpy(obj._ptr, ptr, sizeof(" << c << "))\n"
        "        return obj\n\n";
  if (numpy) numpy_methods(sc, array);
  std::vector<const Field*> fields;
  m_.collect_fields(*sc.record, fields);
  std::vector<std::pair<std::string, bool>> printed;
  for (const Field* f : fields) {
    if (m_.numpy_hidden(*sc.record, *f)) continue;
    bool hex = false;
    if (field(c, *f, fields, hex)) printed.emplace_back(plan_.conventions.field_name(f->name), hex);
  }
  shared_list_setter(*sc.record, c);
  // str() and repr() as cuda.bindings prints a struct: one `field : value` line per field.
  o_ << "    _fields = (";
  for (const auto& [n, hex] : printed) o_ << "(\"" << n << "\", " << (hex ? "True" : "False") << "), ";
  o_ << ")\n\n";
  o_ << "    def __repr__(self):\n"
        "        return _support.struct_text(self, " << sc.py << "._fields)\n\n";
  for (const auto& a : sc.aliases) alias_lines_ << a << " = " << sc.py << "\n";
}

void PyxWriter::numpy_methods(const Model::StructClass& sc, bool array) {
  const std::string c = m_.cy + "." + sc.record->name;
  const std::string& py = sc.py;
  const std::string many = array ? "True" : "False";
  o_ << "    @property\n"
        "    def ptr(self):\n"
        "        \"\"\"The address of the struct (of the first, for an array of structs).\"\"\"\n"
        "        return <intptr_t>self._ptr\n\n";
  o_ << "    def __int__(self):\n"
        "        return <intptr_t>self._ptr\n\n";
  if (array) {
    o_ << "    def __len__(self):\n"
          "        return self._n\n\n";
    o_ << "    def __getitem__(self, key):\n"
          "        \"\"\"A view of struct key (an int), or of a run of them (a slice of step 1).\"\"\"\n"
          "        cdef Py_ssize_t i\n"
          "        if isinstance(key, slice):\n"
          "            start, stop, step = key.indices(self._n)\n"
          "            if step != 1:\n"
          "                raise IndexError(f\"" << py << "[{key!r}]: a slice takes consecutive structs (step 1)\")\n"
          "            return " << py << "._adopt(<uintptr_t>self._ptr + <size_t>start * sizeof(" << c << "), max(stop - start, 0), "
          "self._readonly, self)\n"
          "        i = _support.as_int(key, \"index\")\n"
          "        if i < 0:\n"
          "            i += self._n\n"
          "        if not 0 <= i < self._n:\n"
          "            raise IndexError(f\"" << py << "[{key!r}]: index out of range for {self._n} structs\")\n"
          "        return " << py << "._adopt(<uintptr_t>self._ptr + <size_t>i * sizeof(" << c << "), 1, self._readonly, self)\n\n";
  }
  // An address becomes a view when something keeps the memory alive (owner),
  // else a copy, as cuda.bindings' from_ptr does.
  o_ << "    @staticmethod\n"
        "    cdef " << py << " _adopt(uintptr_t address, Py_ssize_t n, bint readonly, object owner):\n"
        "        cdef " << py << " obj = " << py << ".__new__(" << py << ")\n"
        "        _support.adopt_memory(obj, address, n, sizeof(" << c << "), owner)\n"
        "        obj._n = n\n"
        "        obj._readonly = readonly\n"
        "        return obj\n\n";
  const std::string size_param = array ? ", size=1" : "";
  o_ << "    @staticmethod\n"
        "    def from_ptr(ptr" << size_param << ", readonly=False, owner=None):\n"
     << docstring(py + ".from_ptr(intptr_t ptr" + (array ? ", size_t size=1" : "") +
                      ", bool readonly=False, owner=None)\n\n"
                      "A " + py + " over the memory at ptr" + (array ? " (size structs)" : "") +
                      ": a view that keeps owner alive, or\nwith no owner a copy of that memory. readonly: "
                      "its setters refuse. ptr 0, a\nnegative or a non-int ptr raise; any other address must "
                      "hold the struct.",
                  "        ")
     << "        cdef uintptr_t address = _np_structs.address(ptr, \"" << py << "\")\n"
     << "        return " << py << "._adopt(address, " << (array ? "_np_structs.count(size, \"" + py + ".from_ptr\")" : "1")
     << ", readonly, owner)\n\n";
  o_ << "    @staticmethod\n"
        "    def from_data(data):\n"
     << docstring(py + ".from_data(data)\n\nA " + py + " viewing the NumPy array data, of dtype " + dtype_ +
                      (array ? " (one struct per item)" : " and one item") +
                      "; another dtype is a ValueError.",
                  "        ")
     << "        address, n, readonly = _np_structs.data_memory(data, \"" << py << "\", \"" << dtype_
     << "\", _dtypes.get(\"" << dtype_ << "\"), " << many << ")\n"
     << "        return " << py << "._adopt(address, n, readonly, data)\n\n";
  o_ << "    @staticmethod\n"
        "    def from_buffer(buffer):\n"
     << docstring(py + ".from_buffer(buffer)\n\nA " + py + " viewing the memory of buffer (bytes, bytearray, ...), " +
                      (array ? "a whole number of structs long" : "exactly one struct long") +
                      "; read-only for a\nread-only buffer.",
                  "        ")
     << "        view, n = _np_structs.buffer_memory(buffer, sizeof(" << c << "), \"" << py << "\", " << many << ")\n"
     << "        return " << py << "._adopt(_support.buffer_address(view), n, view.readonly, view)\n\n";
}

std::string PyxWriter::numpy_format(const Field& f) const {
  const Type& t = f.type;
  const bool is_array = t.kind == Type::Kind::Array;
  const std::string spelling = is_array ? t.element : t.spelling;
  std::string base;
  const auto nested = [&](const std::string& record) -> std::string {
    const auto* sc = m_.find_struct(record);
    return sc != nullptr ? "\"" + plan_.conventions.dtype_name(sc->py) + "\"" : std::string();
  };
  if (!t.record.empty() && (t.kind == Type::Kind::Record || is_array)) base = nested(t.record);
  if (base.empty()) {
    const bool pointer = is_array ? spelling.find('*') != std::string::npos
                                  : (t.kind == Type::Kind::Pointer || t.kind == Type::Kind::Handle ||
                                     t.kind == Type::Kind::FunctionPointer);
    const TypeInfo ti = m_.resolve(spelling);
    if (pointer || ti.kind == TypeInfo::Kind::Handle || ti.kind == TypeInfo::Kind::FunctionPointer) {
      base = "\"<i8\"";  // addresses, as cuda.bindings.nvml types them
    } else if (ti.kind == TypeInfo::Kind::Enum) {
      base = "\"<i4\"";
    } else if (ti.kind == TypeInfo::Kind::Struct) {
      base = "\"" + plan_.conventions.dtype_name(ti.py) + "\"";
    } else {
      // cuda.bindings.nvml gives (unsigned) long four bytes (nvmlValue_t.ulVal).
      static const std::map<std::string, std::string> formats = {
          {"b", "i1"},   {"B", "u1"},   {"h", "<i2"}, {"H", "<u2"}, {"i", "<i4"}, {"I", "<u4"}, {"l", "<i4"},
          {"L", "<u4"},  {"q", "<i8"},  {"Q", "<u8"}, {"n", "<i8"}, {"N", "<u8"}, {"f", "<f4"}, {"d", "<f8"},
          {"?", "?"}};
      const auto it = formats.find(ti.format);
      if (it == formats.end()) return "";
      base = "\"" + it->second + "\"";
    }
  }
  if (!is_array) return base;
  std::string shape;
  for (auto e : t.extents) shape += std::to_string(e) + ", ";
  return "(" + base + ", (" + shape + "))";
}

void PyxWriter::numpy_dtypes() {
  // Each struct's layout as the C compiler made it: offsets taken from a
  // struct on the stack, the size from sizeof. C11 anonymous members are
  // flattened, as the classes flatten them; a union's members overlap.
  o_ << "# The NumPy dtype of each struct class, built on first use (numpy_structs.DtypeTable).\n";
  std::ostringstream table, names;
  for (const auto& sc : m_.structs) {
    const std::string c = m_.cy + "." + sc.record->name;
    const std::string key = plan_.conventions.dtype_name(sc.py);
    std::vector<const Field*> all;
    std::function<void(const Record&)> collect = [&](const Record& r) {
      for (const Field& f : r.fields) {
        if (f.anonymous_member) {
          if (const Record* inner = lib_.find_record(f.type.record)) collect(*inner);
        } else if (f.bit_width == 0) {
          all.push_back(&f);
        }
      }
    };
    collect(*sc.record);
    o_ << "cdef object _dtype_spec_" << sc.py << "():\n"
       << "    cdef " << c << " s\n"
       << "    cdef char* b = <char*>&s\n"
       << "    return ((";
    for (const Field* f : all) o_ << "\"" << plan_.conventions.field_name(f->name) << "\", ";
    o_ << "), (";
    for (const Field* f : all) {
      const std::string fmt = numpy_format(*f);
      if (fmt.empty()) errors_.push_back("field " + c + "." + f->name + " (" + f->type.spelling + "): no NumPy format");
      o_ << fmt << ", ";
    }
    o_ << "), (";
    for (const Field* f : all) {
      std::string index;
      if (f->type.kind == Type::Kind::Array) {
        for (std::size_t i = 0; i < f->type.extents.size(); ++i) index += "[0]";
      }
      o_ << "<char*>&s." << cython_member(f->name) << index << " - b, ";
    }
    o_ << "), sizeof(" << c << "))\n\n";
    table << "    \"" << key << "\": lambda: _dtype_spec_" << sc.py << "(),\n";
    if (key[0] != '_') names << "\"" << key << "\", ";
  }
  o_ << "_dtypes = _np_structs.DtypeTable({\n" << table.str() << "})\n";
  o_ << "_DTYPE_NAMES = [" << names.str() << "]\n\n";
}

void PyxWriter::dim3_paths(const Record& r, const std::string& prefix, std::vector<std::string>& out) const {
  if (r.is_union) return;  // a union's members are not constructed
  if (r.name == "dim3") {
    out.push_back(prefix);
    return;
  }
  for (const Field& f : r.fields) {
    if (f.anonymous_member || f.type.kind != Type::Kind::Record) continue;
    if (const Record* inner = lib_.find_record(f.type.record)) {
      dim3_paths(*inner, prefix + "." + cython_member(f.name), out);
    }
  }
}

// One property; false when the field has no Python form (it is then left out).
bool PyxWriter::field(const std::string& c, const Field& f, const std::vector<const Field*>& siblings, bool& hex) {
  const FieldPlan fp = record_ != nullptr ? plan_record_field(m_, *record_, f, siblings) : plan_field(m_, f, siblings);
  if (fp.kind == FieldPlan::Kind::None) {
    // Every member of every struct and union is reachable (a union member left
    // out hides a view of the memory): a field type without a Python form is an
    // error of the generator, not a field to drop.
    if (f.bit_width == 0) errors_.push_back("field " + c + "." + f.name + " (" + f.type.spelling + ")");
    return false;
  }
  hex = fp.kind == FieldPlan::Kind::Pointer || fp.kind == FieldPlan::Kind::KernelParams;
  const std::string name = plan_.conventions.field_name(f.name);
  std::ostringstream g, s;
  const std::string counted = record_ != nullptr ? m_.counted_by(*record_, f) : "";
  if (fp.kind == FieldPlan::Kind::SharedList) {
    shared_list_accessors(fp, f, "(<" + c + "*>self._ptr)", g, s);
  } else if (!counted.empty() && counted_accessors(fp, f, "(<" + c + "*>self._ptr)", counted, g, s)) {
    hex = false;  // a list, not an address
  } else {
    field_accessors(fp, f, "(<" + c + "*>self._ptr)." + cython_member(f.name), g, s);
  }
  o_ << "    @property\n    def " << name << "(self):\n";
  if (!f.doc.empty()) o_ << docstring(clean_doc(f.doc), "        ");
  // Of an array of several structs, a field is a NumPy array over all of them.
  const std::string column = "_np_structs.%s_column(self, <uintptr_t>self._ptr, self._n, _dtypes.get(\"" + dtype_ +
                             "\"), self._readonly, \"" + name + "\"";
  if (array_ && !counted.empty()) {
    // A counted field over several structs: each struct's, as cuda.bindings.nvml reads it.
    o_ << "        if self._n != 1:\n            return tuple(self[i]." << name << " for i in range(self._n))\n";
  } else if (array_) {
    std::string read = column;
    read.replace(read.find("%s"), 2, "read");
    o_ << "        if self._n != 1:\n            return " << read << ")\n";
  }
  o_ << g.str() << "\n";
  if (!fp.read_only) {
    o_ << "    @" << name << ".setter\n    def " << name << "(self, value):\n";
    if (array_) {
      std::string write = column;
      write.replace(write.find("%s"), 2, "write");
      o_ << "        if self._readonly or self._n != 1:\n            " << write << ", value, \"" << class_
         << "\")\n            return\n";
    } else if (numpy_) {
      o_ << "        if self._readonly:\n            _np_structs.refuse_write(\"" << class_ << "\", \"" << name
         << "\")\n";
    }
    o_ << s.str() << "\n";
  }
  return true;
}

// A field of python.shared_count_lists (cuda.bindings' CUDA_MEMCPY_BATCH_NODE_PARAMS
// dsts and srcs): the getter reads the count's items, at most as many as the
// array this struct made holds; assigning one alone would leave the count
// wrong for its siblings, so only set_<a>_<b>() assigns.
void PyxWriter::shared_list_accessors(const FieldPlan& fp, const Field& f, const std::string& self_c,
                                      std::ostringstream& g, std::ostringstream& s) const {
  const std::string p = self_c + "." + cython_member(f.name);
  const std::string cnt = "<Py_ssize_t>" + self_c + "." + cython_member(fp.count_field);
  const std::string name = plan_.conventions.field_name(f.name);
  const auto* shared = m_.shared_count_lists(*record_);
  std::string others, setter = "set";
  for (const auto& l : shared->lists) {
    setter += "_" + plan_.conventions.field_name(l);
    if (l == f.name) continue;
    others += (others.empty() ? "" : ", ") + plan_.conventions.field_name(l);
  }
  g << "        if " << p << " == NULL:\n            return []\n"
    << "        array = _support.kept_array(self, \"" << f.name << "\", <void*>" << p << ")\n"
    << "        n = " << cnt << " if array is None else min(" << cnt << ", len(array))\n"
    << "        return [" << to_python(fp.type, p + "[i]") << " for i in range(n)]\n";
  s << "        raise AttributeError(\"" << name << " shares its count field (" << fp.count_field << ") with " << others
    << " on this struct and cannot be set independently; use " << setter << "(...) to set them together.\")\n";
}

// set_<a>_<b>(a, b) of python.shared_count_lists: each a sequence of values,
// all of one length, copied into arrays the struct keeps; the count set to it.
void PyxWriter::shared_list_setter(const Record& r, const std::string& c) {
  const auto* shared = m_.shared_count_lists(r);
  if (shared == nullptr) return;
  std::vector<std::string> names;
  std::string setter = "set", params, listed;
  for (const auto& l : shared->lists) {
    names.push_back(plan_.conventions.field_name(l));
    setter += "_" + names.back();
    params += ", " + names.back();
    listed += (listed.empty() ? "" : (&l == &shared->lists.back() ? " and " : ", ")) + names.back();
  }
  const Field* first = nullptr;
  for (const Field& f : r.fields) {
    if (f.name == shared->lists.front()) first = &f;
  }
  const TypeInfo t = m_.resolve(first->type.pointee);
  const std::string self_c = "(<" + c + "*>self._ptr)";
  o_ << "    def " << setter << "(self" << params << "):\n"
     << docstring(setter + "(" + params.substr(2) + ")\n\nSets " + listed + " together, and " + shared->count +
                      " to their length:\nthey share it. Each is a sequence of " + t.py +
                      " or ints, all of one length;\nempty sequences set NULL.",
                  "        ")
     << "        cdef Py_ssize_t i\n"
     << "        cdef _support.FieldArray " ;
  for (std::size_t k = 0; k < names.size(); ++k) o_ << (k ? ", " : "") << "_a" << k;
  o_ << "\n";
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string a = "_a" + std::to_string(k), q = "\"" + names[k] + "\"";
    o_ << "        if " << names[k] << " is None or isinstance(" << names[k] << ", (int, float, str, bytes, bytearray)):\n"
       << "            raise TypeError(f\"" << names[k] << ": expected a sequence of " << t.py << ", got {type("
       << names[k] << ").__name__}\")\n"
       << "        _items = list(" << names[k] << ")\n"
       << "        " << a << " = _support.FieldArray.__new__(_support.FieldArray)\n"
       << "        if _items:\n"
       << "            " << a << ".data = <char*>_support.alloc_array(len(_items), sizeof(" << t.c << "))\n"
       << "            " << a << ".n = len(_items)\n"
       << "        for i in range(" << a << ".n):\n"
       << "            (<" << t.c << "*>" << a << ".data)[i] = <" << t.c << ">_support.unsigned_arg(_support.value_field(_items[i], "
       << "f\"" << names[k] << "[{i}]\"), sizeof(" << t.c << "), f\"" << names[k] << "[{i}]\")\n";
  }
  o_ << "        if ";
  for (std::size_t k = 1; k < names.size(); ++k) o_ << (k > 1 ? " or " : "") << "_a" << k << ".n != _a0.n";
  o_ << ":\n            raise ValueError(f\"" << listed << " must all have the same length, got ";
  for (std::size_t k = 0; k < names.size(); ++k) o_ << (k ? ", " : "") << "{_a" << k << ".n}";
  o_ << "\")\n";
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string a = "_a" + std::to_string(k);
    o_ << "        " << self_c << "." << cython_member(shared->lists[k]) << " = <" << t.c << "*>" << a << ".data\n"
       << "        _support.keep(self, \"" << shared->lists[k] << "\", " << a << " if " << a << ".n else None)\n";
  }
  o_ << "        " << self_c << "." << cython_member(shared->count) << " = _a0.n\n\n";
}

// A counted array (python.counted_fields): the getter reads as many items as
// the count field says (at most the array's), the setter takes up to that
// many and sets the count, as cuda.bindings.nvml does; false for a kind
// that has no counted form.
bool PyxWriter::counted_accessors(const FieldPlan& fp, const Field& f, const std::string& self_c,
                                  const std::string& count_field, std::ostringstream& g, std::ostringstream& s) const {
  const std::string p = self_c + "." + cython_member(f.name);
  const std::string cnt = self_c + "." + cython_member(count_field);
  const std::string q = "\"" + f.name + "\"";
  const TypeInfo& t = fp.type;
  const std::string n = std::to_string(fp.count);
  std::string index;
  for (std::size_t i = 0; i < f.type.extents.size(); ++i) index += "[0]";
  const std::string at = "&" + p + index;
  const std::string used = "min(<Py_ssize_t>" + cnt + ", " + n + ")";
  switch (fp.kind) {
    case FieldPlan::Kind::StructArray: {
      // As cuda.bindings.nvml: a view of the count's structs, an array of the item's
      // class where it has arrays (python.struct_arrays), else a list of views.
      if (numpy_ && m_.items_struct_array(f)) {
        g << "        return " << t.py << "._adopt(<uintptr_t>" << at << ", " << used << ", self._readonly, self)\n";
      } else {
        g << "        return [" << t.py << "._view(<void*>&(" << at << ")[i], self) for i in range(" << used << ")]\n";
      }
      s << "        items = _np_structs.counted_items(value, " << n << ", " << q << ")\n"
        << "        for i in range(len(items)):\n"
        << "            _support.struct_pointer_required(items[i], " << t.py << ", " << q << ")\n"
        << "        _support.detach_views(items, <void*>&(" << at << ")[0], sizeof(" << t.c << "), " << n << ")\n"
        << "        for i in range(len(items)):\n"
        << "            memcpy(&(" << at << ")[i], _support.struct_pointer_required(items[i], " << t.py << ", " << q
        << "), sizeof(" << t.c << "))\n"
        << "        " << cnt << " = len(items)\n";
      return true;
    }
    case FieldPlan::Kind::NumberArray:
      if (t.kind != TypeInfo::Kind::Scalar) return false;
      if (numpy_) {
        // As cuda.bindings.nvml: a NumPy array over the count's items, writing through.
        g << "        return _np_structs.counted_numbers(self, <uintptr_t>" << at << ", " << used << ", \"" << fp.format
          << "\", self._readonly)\n";
      } else {
        g << "        return _support.array_list(<void*>" << at << ", " << used << ", sizeof(" << t.c << "), \""
          << fp.format << "\", self, " << q << ")\n";
      }
      s << "        items = _np_structs.counted_items(value, " << n << ", " << q << ")\n"
        << "        _support.array_assign(<void*>" << at << ", len(items), sizeof(" << t.c << "), \"" << fp.format
        << "\", items, " << q << ")\n"
        << "        " << cnt << " = len(items)\n";
      return true;
    case FieldPlan::Kind::Bytes:
    case FieldPlan::Kind::Text:
      if (numpy_ && fp.kind == FieldPlan::Kind::Bytes) {
        // As cuda.bindings.nvml: a NumPy array of the count's bytes, writing through.
        g << "        return _np_structs.counted_numbers(self, <uintptr_t>" << at << ", " << used << ", \"B\", self._readonly)\n";
      } else {
        g << "        return PyBytes_FromStringAndSize(<const char*>" << at << ", " << used << ")\n";
      }
      s << "        data = _np_structs.counted_bytes(value, " << n << ", " << q << ")\n"
        << "        _support.char_array_assign(<void*>" << at << ", " << n << ", data, True, " << q << ")\n"
        << "        " << cnt << " = len(data)\n";
      return true;
    case FieldPlan::Kind::Pointer: {
      // A pointer to numbers (vgpuTypeIds): a list of the count's items that
      // writes through; assigning copies the items into an array the struct
      // keeps, and sets the count.
      // A pointer to pointers (cuDLA's inputTensor: uint64_t * const *) is a list of addresses.
      TypeInfo e = f.type.pointer_depth == 1 ? m_.resolve(f.type.pointee) : TypeInfo{};
      if (f.type.pointer_depth == 2) {
        e.kind = TypeInfo::Kind::Scalar;
        e.c = "void*";
        e.format = "P";
      }
      if (e.kind != TypeInfo::Kind::Scalar || e.format.empty()) return false;
      g << "        if " << p << " == NULL:\n            return []\n"
        << "        return _support.array_list(<void*>" << p << ", " << cnt << ", sizeof(" << e.c << "), \"" << e.format
        << "\", self, " << q << ")\n";
      s << "        cdef _support.FieldArray array = _counted_array(value, sizeof(" << e.c << "), \"" << e.format << "\", "
        << q << ", \"" << (e.format == "P" ? "addresses" : "ints") << "\")\n"
        << "        " << p << " = <" << m_.cython_spelling(f.type.spelling) << ">array.data\n"
        << "        _support.keep(self, " << q << ", array if array.n else None)\n"
        << "        " << cnt << " = array.n\n";
      return true;
    }
    case FieldPlan::Kind::StructList:
      g << "        if " << p << " == NULL:\n            return []\n"
        << "        return [" << t.py << "._view(<void*>&" << p << "[i], self) for i in range(" << cnt << ")]\n";
      s << "        " << p << " = <" << m_.cython_spelling(f.type.spelling) << ">_support.struct_list_field(value, "
        << t.py << ", sizeof(" << t.c << "), self, " << q << ")\n"
        << "        array = _support.kept_array(self, " << q << ", <void*>" << p << ")\n"
        << "        " << cnt << " = 0 if array is None else len(array)\n";
      return true;
    default: return false;
  }
}

// The getter's body in `g` and the setter's in `s`, for the field at C expression `p`.
void PyxWriter::field_accessors(const FieldPlan& fp, const Field& f, const std::string& p, std::ostringstream& g,
                                std::ostringstream& s) const {
  std::string index;  // [0] per extent: the first element of a multi-dimensional array
  for (std::size_t i = 0; i < f.type.extents.size(); ++i) index += "[0]";
  const std::string at = "&" + p + index;
  const TypeInfo& t = fp.type;
  const std::string n = std::to_string(fp.count);
  const std::string pointer_c = m_.cython_spelling(f.type.spelling);
  const std::string q = "\"" + f.name + "\"";
  const std::string self_c = p.substr(0, p.rfind(')') + 1);  // (<C*>self._ptr)
  switch (fp.kind) {
    case FieldPlan::Kind::Text:
    case FieldPlan::Kind::Bytes:
      g << "        return "
        << (fp.kind == FieldPlan::Kind::Text ? "_support.c_string(" : "PyBytes_FromStringAndSize(")
        << "<const char*>" << at << ", " << n << ")"
        << (fp.kind == FieldPlan::Kind::Text && plan_.conventions.text_as_str() ? ".decode(\"utf-8\", \"replace\")" : "")
        << "\n";
      s << "        _support.char_array_assign(<void*>" << at << ", " << n << ", value, "
        << (fp.kind == FieldPlan::Kind::Text ? "True" : "False") << ", " << q << ")\n";
      break;
    case FieldPlan::Kind::NumberArray:
      // Value types read as their objects, as cuda.bindings reads them (pad: [cuuint64_t, ...]).
      // Enum arrays read as members (addressMode: [CU_TR_ADDRESS_MODE_WRAP, ...]), as cuda.bindings reads them.
      g << "        return _support.array_list(<void*>" << at << ", " << n << ", sizeof(" << t.c << "), \"" << fp.format
        << "\", self, " << q
        << (t.kind == TypeInfo::Kind::Value  ? ", " + t.py
            : t.kind == TypeInfo::Kind::Enum ? ", lambda v: _enum_member(\"" + t.py + "\", v)"
                                             : std::string())
        << ")\n";
      s << "        _support.array_assign(<void*>" << at << ", " << n << ", sizeof(" << t.c << "), \"" << fp.format
        << "\", value, " << q << ")\n";
      break;
    case FieldPlan::Kind::StructArray:
      g << "        return [" << t.py << "._view(<void*>&(" << at << ")[i], self) for i in range(" << n << ")]\n";
      s << "        items = _support.field_items(value, " << n << ", " << q << ")\n"
        << "        for i in range(" << n << "):\n"
        << "            _support.struct_pointer_required(items[i], " << t.py << ", " << q << ")\n"
        // Assigning copies (as cuda.bindings does): an item that views this
        // very array (x = s.f[0]; s.f = [x, x]) gets storage of its own first.
        << "        _support.detach_views(items, <void*>&(" << at << ")[0], sizeof(" << t.c << "), " << n << ")\n"
        << "        for i in range(" << n << "):\n"
        << "            memcpy(&(" << at << ")[i], _support.struct_pointer_required(items[i], " << t.py << ", " << q
        << "), sizeof(" << t.c << "))\n";
      break;
    case FieldPlan::Kind::HandleArray:
      g << "        return [_wrap_" << t.py << "(<void*>(" << at << ")[i]) for i in range(" << n << ")]\n";
      s << "        items = [<uintptr_t>_support.handle_field(v, " << t.py << ", " << q
        << ") for v in _support.field_items(value, " << n << ", " << q << ")]\n"
        << "        for i in range(" << n << "):\n"
        << "            (" << at << ")[i] = <" << t.c << "><uintptr_t>items[i]\n";
      break;
    case FieldPlan::Kind::String:
      g << "        return None if " << p << " == NULL else <bytes>" << p << "\n";
      s << "        if value is None:\n"
        << "            " << p << " = NULL\n"
        << "            return\n"
        << "        data = _support.as_bytes(value, " << q << ")\n"
        << "        _support.keep(self, " << q << ", data)\n"
        << "        " << p << " = PyBytes_AS_STRING(data)\n";
      break;
    case FieldPlan::Kind::KernelParams:
      // As cuLaunchKernel takes them: None, an address, or (values, types), kept by the struct.
      g << "        return <uintptr_t>" << p << "\n";
      // Kept only once packed and addressed: a value refused on the way leaves the field as it was.
      // A float truncates for extra and is refused for kernelParams, as in cuda.bindings.
      s << "        cdef void** _address\n"
        << "        packed = _support.kernel_params(_support.address_number(value, " << q << ", "
        << (f.name == "extra" ? "True" : "False") << "))\n"
        << "        _address = _support.kernel_params_pointer(packed)\n"
        << "        _support.keep(self, " << q << ", packed)\n"
        << "        " << p << " = <" << pointer_c << ">_address\n";
      break;
    case FieldPlan::Kind::StructList:
      // As cuda.bindings: a list (here also one struct), copied into an array the
      // struct keeps; read back as views of that array's items.
      g << "        array = _support.kept_array(self, " << q << ", <void*>" << p << ")\n"
        << "        if array is None:\n            return []\n"
        << "        return [" << t.py << "._view(<void*>&" << p << "[i], array) for i in range(len(array))]\n";
      s << "        " << p << " = <" << pointer_c << ">_support.struct_list_field(value, " << t.py << ", sizeof(" << t.c
        << "), self, " << q << ")\n";
      break;
    case FieldPlan::Kind::HandleList:
      if (!fp.count_field.empty()) {
        // Before the call that fills it the array is NULL: `size` null handles,
        // as cuda.bindings reads it; after, the handles the library wrote.
        g << "        if " << p << " == NULL:\n            return [_wrap_" << t.py << "(NULL) for i in range(" << self_c
          << "." << cython_member(fp.count_field) << ")]\n"
          << "        return [_wrap_" << t.py << "(<void*>" << p << "[i]) for i in range(" << self_c << "."
          << cython_member(fp.count_field) << ")]\n";
        break;
      }
      g << "        array = _support.kept_array(self, " << q << ", <void*>" << p << ")\n"
        << "        if array is None:\n            return []\n"
        << "        return [_wrap_" << t.py << "(<void*>" << p << "[i]) for i in range(len(array))]\n";
      s << "        " << p << " = <" << pointer_c << ">_support.handle_list_field(value, " << t.py << ", self, " << q
        << ")\n";
      break;
    case FieldPlan::Kind::Pointer:
      g << "        return <uintptr_t>" << p << "\n";
      s << "        " << p << " = <" << pointer_c << ">_support.field_address(value, self, " << q << ")\n";
      break;
    case FieldPlan::Kind::Scalar:
      // The exact type first: the common case costs one type check.
      g << "        return " << p << "\n";
      if (t.is_float) {
        s << "        if type(value) is float:\n            " << p << " = value\n"
          << "        else:\n            " << p << " = _support.float_field(value, " << q << ")\n";
      } else {
        s << "        if type(value) is int:\n            " << p << " = value\n"
          << "        else:\n            " << p << " = _support.int_field(value, " << q << ")\n";
      }
      break;
    case FieldPlan::Kind::Wrapped:
      g << "        return " << to_python(t, p) << "\n";
      switch (t.kind) {
        case TypeInfo::Kind::Enum: {
          // A plain int that is the value of a negative member (INVALID, -1) is
          // taken, as cuda.bindings takes it; other negative ints are refused.
          std::set<std::int64_t> negative;
          if (const Enum* e = m_.find_enum(f.type.spelling)) {
            for (const auto& x : e->enumerators) {
              if (x.value < 0) negative.insert(x.value);
            }
          }
          if (!negative.empty()) {
            s << "        if type(value) is int and value in (";
            for (const auto v : negative) s << v << ", ";
            s << "):\n            " << p << " = <" << t.c << "><long long>value\n            return\n";
          }
          s << "        " << p << " = <" << t.c << "><long long>_support.enum_field(value, " << q << ")\n";
          break;
        }
        case TypeInfo::Kind::Handle:
          s << "        " << p << " = <" << t.c << ">_support.handle_field(value, " << t.py << ", " << q << ")\n";
          break;
        case TypeInfo::Kind::Value:
          s << "        if type(value) is " << t.py << ":\n            " << p << " = (<" << t.py << ">value)._value\n"
            << "        elif type(value) is int:\n            " << p << " = value\n"
            << "        else:\n            " << p << " = _support.value_field(value, " << q << ")\n";
          break;
        case TypeInfo::Kind::FunctionPointer:
          // A function's address: a handle-like class, converted as handle fields are.
          s << "        " << p << " = <" << t.c << ">_support.handle_field(value, " << t.py << ", " << q << ")\n";
          break;
        default: s << "        " << p << " = " << to_c(t, "value", f.name) << "\n"; break;
      }
      break;
    case FieldPlan::Kind::Struct:
      g << "        return " << t.py << "._view(<void*>&" << p << ", self)\n";
      s << "        memcpy(&" << p << ", _support.struct_pointer_required(value, " << t.py << ", " << q
        << "), sizeof(" << p << "))\n";
      break;
    case FieldPlan::Kind::SharedList:  // shared_list_accessors
    case FieldPlan::Kind::None: break;
  }
}

// Trampolines for the callback types that functions take with user data.
void PyxWriter::callbacks() {
  std::set<std::string> types;
  for (const FunctionPlan& fp : plan_.functions) {
    for (const Plan& pl : fp.params) {
      if (pl.role == Role::Callback) types.insert(pl.type.py);
    }
  }
  if (types.empty()) return;
  o_ << "# Trampolines: CUDA calls these with the context made by _support.callback_context.\n";
  for (const auto& name : types) trampoline(name);
}

void PyxWriter::trampoline(const std::string& name) {
  const Typedef* td = m_.find_typedef(name);
  const int user = plan_.planner.callback_user_param(name);
  const auto& params = td->fn_params;
  o_ << "cdef " << m_.cython_c(td->fn_result.spelling) << " _callback_" << name << "(";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (i) o_ << ", ";
    o_ << m_.cython_c(params[i].type.spelling) << " " << python_identifier(params[i].name);
  }
  o_ << ") noexcept nogil:\n";
  const bool returns_value = td->fn_result.spelling != "void";
  // Through the callback gate of _support.callbacks: once it shut at exit (or
  // the interpreter finalizes), taking the GIL could end the calling thread,
  // which is the driver's: the callback is skipped, its context left. The
  // exit waits for the callbacks inside the gate.
  // A callback that returns a status (CUgraphRecaptureCallback) returns success:
  // the cast, since Cython assigns no int to an enum.
  const std::string zero = returns_value ? " <" + m_.cython_c(td->fn_result.spelling) + ">0" : "";
  o_ << "    if not _support.callback_enter():\n        return" << zero << "\n";
  o_ << "    with gil:\n";
  const std::string user_name = python_identifier(params[user].name);
  o_ << "        _support.callback_invoke(" << user_name << ", (";
  const std::string status_class = m_.resolve(plan_.status_type).py;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (static_cast<int>(i) == user) continue;
    const TypeInfo ti = m_.resolve(params[i].type.spelling);
    const std::string n = python_identifier(params[i].name);
    if (ti.kind == TypeInfo::Kind::Enum && ti.py == status_class) {
      o_ << "_status(" << n << "), ";
    } else if (ti.kind == TypeInfo::Kind::Unknown || ti.kind == TypeInfo::Kind::Void) {
      o_ << "<uintptr_t>" << n << ", ";
    } else {
      o_ << to_python(ti, n) << ", ";
    }
  }
  o_ << "))\n";
  if (one_shot_callback(name)) o_ << "        _support.callback_finished(" << user_name << ")\n";
  o_ << "    _support.callback_leave()\n";
  if (returns_value) o_ << "    return" << zero << "\n";
  o_ << "\n";
}

void PyxWriter::functions() {
  o_ << "# Functions\n";
  for (const FunctionPlan& fp : plan_.functions) {
    if (!fp.error.empty()) {
      errors_.push_back(fp.error);
      continue;
    }
    try {
      o_ << PyxFunction(m_, fp, fp.function->name, plan_.status_type).render();
      for (const auto& alias : fp.function->aliases) o_ << PyxFunction(m_, fp, alias, plan_.status_type).render();
    } catch (const std::runtime_error& e) {
      errors_.push_back(e.what());
    }
  }
}

// Helpers cuda.bindings offers beyond the headers (library.python.aliases):
// each calls the bound function it names with the same arguments.
void PyxWriter::helpers() {
  const Conventions& names = plan_.conventions;
  for (const auto& [helper, target] : lib_.python.aliases) {
    const auto fp = std::find_if(plan_.functions.begin(), plan_.functions.end(),
                                 [&](const FunctionPlan& p) { return p.function->name == target; });
    if (fp == plan_.functions.end() || !fp->error.empty()) {
      errors_.push_back("library.python.aliases: " + helper + " names " + target + ", which has no Python form");
      continue;
    }
    std::string params, args, shown;
    for (const Argument& a : fp->arguments) {
      params += (params.empty() ? "" : ", ") + a.name + (a.default_value.empty() ? "" : "=" + a.default_value);
      args += (args.empty() ? "" : ", ") + a.name;
      shown += (shown.empty() ? "" : ", ") + a.name + (a.annotation.empty() ? "" : ": " + a.annotation) +
               (a.default_value.empty() ? "" : " = " + a.default_value);
    }
    std::vector<std::string> outputs;
    for (const Output& out : fp->outputs) outputs.push_back(out.name);
    if (!names.raising()) outputs.insert(outputs.begin(), "status");
    const std::string shown_target = names.function_name(target);
    o_ << "def " << helper << "(" << params << "):\n";
    o_ << docstring(helper + "(" + shown + ")\n\n" + "The same call as " + shown_target +
                        ", under the name cuda.bindings also gives it.\n\n" + clean_doc(first_sentence(fp->function->doc)) +
                        "\n\nReturns: " + (names.raising() ? join(outputs) : "(" + join(outputs) + ")"),
                    "    ");
    o_ << "    return " << shown_target << "(" << args << ")\n\n";
  }
}

void PyxWriter::sizes() {
  o_ << "# sizeof(cls_or_obj): the size in bytes of a struct, union, handle or value type.\n";
  o_ << "cdef dict _SIZES = {\n";
  for (const auto& sc : m_.structs) o_ << "    " << sc.py << ": sizeof(" << m_.cy << "." << sc.record->name << "),\n";
  for (const auto& h : m_.handle_order) o_ << "    " << h << ": sizeof(void*),\n";
  for (const auto& h : m_.function_pointer_order) o_ << "    " << h << ": sizeof(void*),\n";
  for (const auto& v : m_.value_order) o_ << "    " << v << ": sizeof(" << m_.cy << "." << v << "),\n";
  o_ << "}\n\n";
  o_ << "def sizeof(objType):\n"
        "    \"\"\"sizeof(objType)\n\n    Size in bytes of a cubind struct, union, handle or value type (class or instance).\n    \"\"\"\n"
        "    cls = objType if isinstance(objType, type) else type(objType)\n"
        "    try:\n"
        "        return _SIZES[cls]\n"
        "    except KeyError:\n"
        "        raise TypeError(f\"sizeof() takes a cubind type of this module, got {cls.__name__}\") from None\n\n";
  attribute_types();
}

// void * values typed by an attribute: one table per attribute enum, its
// value -> C type; modules with no such value have none.
void PyxWriter::attribute_types() {
  if (plan_.attribute_enums.empty()) return;
  o_ << "# void * values typed by an attribute: per attribute enum, value -> C type,\n"
        "# each entry a prepared _support.TypedSpec from its first use.\n";
  for (const auto& e : plan_.attribute_enums) {
    o_ << "cdef _support.TypedTable " << typed_table(e) << " = _support.TypedTable(\"" << e << "\", {\n";
    const Enum* en = m_.find_enum(e);
    for (const auto& [member, type] : lib_.attribute_types.at(e)) {
      long long value = 0;
      for (const auto& v : en->enumerators) {
        if (v.name == member) value = v.value;
      }
      o_ << "    " << value << ": " << typed_spec(type) << ",  # " << member << "\n";
    }
    o_ << "}, _enums)\n";
  }
}

// (kind, size, format, class, count) for _support.TypedValue; count 0: sized by the caller.
std::string PyxWriter::typed_spec(const std::string& type) const {
  std::string base = type;
  std::string count = "1";
  if (auto b = type.find('['); b != std::string::npos) {
    base = type.substr(0, b);
    while (!base.empty() && base.back() == ' ') base.pop_back();
    const std::string extent = type.substr(b + 1, type.size() - b - 2);
    count = extent.empty() ? "0" : extent;
  }
  if (base == "void *") return "(\"pointer\", sizeof(void*), None, None, " + count + ")";
  // `T as bool`: the integer T, read as True/False and set from any truth value.
  static const std::string as_bool = " as bool";
  if (base.size() > as_bool.size() && base.compare(base.size() - as_bool.size(), as_bool.size(), as_bool) == 0) {
    const TypeInfo t = m_.resolve(base.substr(0, base.size() - as_bool.size()));
    return "(\"bool\", sizeof(" + t.c + "), \"" + t.format + "\", None, " + count + ")";
  }
  const TypeInfo t = m_.resolve(base);
  const std::string size = "sizeof(" + t.c + ")";
  switch (t.kind) {
    case TypeInfo::Kind::Scalar:
      if (t.is_char && count != "1") return "(\"bytes\", 1, \"b\", None, " + count + ")";
      return "(\"scalar\", " + size + ", \"" + t.format + "\", None, " + count + ")";
    case TypeInfo::Kind::Enum: return "(\"enum\", " + size + ", \"i\", \"" + t.py + "\", " + count + ")";
    case TypeInfo::Kind::Handle: return "(\"handle\", " + size + ", None, " + t.py + ", " + count + ")";
    case TypeInfo::Kind::Value: return "(\"value\", " + size + ", \"" + t.format + "\", " + t.py + ", " + count + ")";
    case TypeInfo::Kind::Struct: return "(\"struct\", " + size + ", None, " + t.py + ", " + count + ")";
    default: throw std::runtime_error("attribute type '" + type + "' has no Python form");
  }
}

}  // namespace codegen::python

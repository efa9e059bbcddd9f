// Device(n) as a vectorcall of the class itself (the type object's
// tp_vectorcall, which CPython calls for Device(...) before any of
// type.__call__'s machinery): with no keyword and at most one argument it
// goes straight to this thread's Device (made_device) or to the lookup
// _device registered, with no argument tuple, no __new__ lookup and no
// __init__ call; anything else takes the
// class's usual call, Device.__new__ in full. Subclasses do not inherit
// tp_vectorcall, so they are called the usual way. Included by _device only.
#pragma once

#include <Python.h>
#include <structmember.h>

#include <climits>
#include <exception>
#include <string>

#include "_launch_args.hpp"
#include "_owners.hpp"
#include "_translate.hpp"
#include "_type_call.hpp"

namespace cubind_core {

// Device's __slots__ read and written in place, for set_current: a slot's
// offset in the object, from the class's member descriptor, or -1 when the
// attribute is not a plain object slot (then the usual attribute access).
inline Py_ssize_t slot_offset(PyObject* cls, const char* name) {
  PyObject* descriptor = PyObject_GetAttrString(cls, name);
  if (descriptor == nullptr) {
    PyErr_Clear();
    return -1;
  }
  Py_ssize_t offset = -1;
  if (Py_TYPE(descriptor) == &PyMemberDescr_Type) {
    const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_member;
    // Py_T_OBJECT_EX (T_OBJECT_EX before 3.12): what __slots__ makes.
    if (member->type == 16 && !(member->flags & READONLY)) offset = member->offset;
  }
  Py_DECREF(descriptor);
  return offset;
}

// The object in o's slot at `offset` (borrowed), nullptr when it is unset.
inline PyObject* slot_get(PyObject* o, Py_ssize_t offset) {
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + offset);
}

// o's slot at `offset` set to None.
inline void slot_set_none(PyObject* o, Py_ssize_t offset) {
  PyObject** slot = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + offset);
  PyObject* old = *slot;
  if (old == Py_None) return;
  Py_INCREF(Py_None);
  *slot = Py_None;
  Py_XDECREF(old);
}

// Device(device_id) for the class `type`: a new reference, or nullptr with
// an error set. Set once, by install_device_call.
using DeviceLookup = PyObject* (*)(PyObject* type, PyObject* device_id);
static DeviceLookup device_lookup = nullptr;
// The key of this thread's list of Devices (index: ordinal; None where not
// made yet) in the thread state's dictionary, and the device count once
// _device has asked the driver (-1 before).
static PyObject* devices_key = nullptr;
static int known_device_count = -1;

// Device(n) for an exact int n already made on this thread, read without a
// call into _device: a new reference, or nullptr (no error set) for the
// lookup to do, which also explains a bad n.
inline PyObject* made_device(PyObject* arg) {
  if (Py_TYPE(arg) != &PyLong_Type || known_device_count < 0) return nullptr;
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(arg, &overflow);  // an exact int sets no error
  if (overflow != 0 || n < 0 || n >= known_device_count) return nullptr;
  PyObject* state = PyThreadState_GetDict();
  if (state == nullptr) return nullptr;
  PyObject* devices = PyDict_GetItemWithError(state, devices_key);
  if (devices == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  if (!PyList_CheckExact(devices) || n >= PyList_GET_SIZE(devices)) return nullptr;
  PyObject* device = PyList_GET_ITEM(devices, n);
  if (device == Py_None) return nullptr;
  Py_INCREF(device);
  return device;
}

inline PyObject* device_vectorcall(PyObject* type, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames == nullptr && n == 1) {
    if (PyObject* device = made_device(args[0])) return device;
    return device_lookup(type, args[0]);
  }
  if (kwnames == nullptr && n == 0) return device_lookup(type, Py_None);
  return usual_type_call(type, args, n, kwnames);
}

inline void install_device_call(PyObject* type, DeviceLookup lookup, PyObject* key) {
  device_lookup = lookup;
  Py_INCREF(key);
  devices_key = key;
  reinterpret_cast<PyTypeObject*>(type)->tp_vectorcall = device_vectorcall;
}

// Device's methods written in C (method descriptors, METH_FASTCALL |
// METH_KEYWORDS, which the interpreter calls directly): device.set_current()
// and device.create_stream() on a Device of the class itself whose ordinal
// is a small int take a path of their own, with no argument parsing; any
// other call (arguments, keywords, a subclass) is the Python method's, kept
// as the method's "usual". Set once, by install_device_methods.
static PyTypeObject* device_class = nullptr;
static Py_ssize_t device_id_slot = -1;
static Py_ssize_t device_current_slot = -1;
static PyObject* set_current_usual = nullptr;
static PyObject* create_stream_usual = nullptr;
// A new Stream on the device of this ordinal, with the default options: a
// new reference, or nullptr with an error set (_stream's _new_stream).
using NewStream = PyObject* (*)(int ordinal);
static NewStream new_stream = nullptr;

// The ordinal of a Device of the class itself, read from its slot, when it
// is a small int; false for any other object.
inline bool device_ordinal_of(PyObject* self, int* ordinal) {
  if (Py_TYPE(self) != device_class) return false;
  PyObject* id = slot_get(self, device_id_slot);
  long long value = -1;
  if (id == nullptr || !PyLong_CheckExact(id) || !read_small_int(id, &value) || value < 0 || value > INT_MAX) {
    return false;
  }
  *ordinal = static_cast<int>(value);
  return true;
}

// For create_stream and create_event: the ordinal, as device_ordinal_of,
// of a Device with no Context of its own current (its `_current` slot is
// None); false for any other object, which then takes the attribute reads.
inline bool plain_device_ordinal(PyObject* self, int* ordinal) {
  // device_ordinal_of checks the type before the slot below is read.
  return device_ordinal_of(self, ordinal) && slot_get(self, device_current_slot) == Py_None;
}

// The Python method `usual` called with self first and the caller's arguments.
inline PyObject* call_usual(PyObject* usual, PyObject* self, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  const Py_ssize_t nk = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* small[8];
  PyObject** full = n + nk + 1 <= 8 ? small : static_cast<PyObject**>(PyMem_Malloc((n + nk + 1) * sizeof(PyObject*)));
  if (full == nullptr) return PyErr_NoMemory();
  full[0] = self;
  for (Py_ssize_t i = 0; i < n + nk; ++i) full[i + 1] = args[i];
  PyObject* result = PyObject_Vectorcall(usual, full, n + 1, kwnames);
  if (full != small) PyMem_Free(full);
  return result;
}

// device.set_current(): the ordinal's primary context made current with the
// GIL released, and the `_current` slot cleared.
inline PyObject* set_current_method(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  int ordinal = -1;
  if (kwnames == nullptr && (n == 0 || (n == 1 && args[0] == Py_None)) && device_ordinal_of(self, &ordinal)) {
    std::exception_ptr failure;
    Py_BEGIN_ALLOW_THREADS
    try {
      device_set_current(ordinal);
    } catch (...) {
      failure = std::current_exception();
    }
    Py_END_ALLOW_THREADS
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (...) {
        translate();
      }
      return nullptr;
    }
    slot_set_none(self, device_current_slot);
    Py_RETURN_NONE;
  }
  return call_usual(set_current_usual, self, args, n, kwnames);
}

// device.create_stream(): a new stream with the default options, where no
// Context of the device's own is current (a green one makes its streams).
inline PyObject* create_stream_method(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                                      PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  int ordinal = -1;
  if (kwnames == nullptr && n == 0 && plain_device_ordinal(self, &ordinal)) return new_stream(ordinal);
  return call_usual(create_stream_usual, self, args, n, kwnames);
}

inline PyMethodDef set_current_def = {
    "set_current", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(set_current_method)),
    METH_FASTCALL | METH_KEYWORDS, nullptr};
inline PyMethodDef create_stream_def = {
    "create_stream", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(create_stream_method)),
    METH_FASTCALL | METH_KEYWORDS, nullptr};

// Puts the C method of `def` in the class in place of the Python method of
// its name (kept in *keep for the calls it leaves), with that method's
// docstring after `signature`, which inspect reads.
inline int install_device_method(PyObject* cls, PyMethodDef* def, const char* signature, std::string* doc,
                                 PyObject** keep) {
  PyObject* usual = PyDict_GetItemString(reinterpret_cast<PyTypeObject*>(cls)->tp_dict, def->ml_name);
  if (usual == nullptr) {
    PyErr_Format(PyExc_AttributeError, "Device has no method %s", def->ml_name);
    return -1;
  }
  PyObject* usual_doc = PyObject_GetAttrString(usual, "__doc__");
  if (usual_doc == nullptr) return -1;
  const char* text = PyUnicode_Check(usual_doc) ? PyUnicode_AsUTF8(usual_doc) : "";
  if (text == nullptr) {
    Py_DECREF(usual_doc);
    return -1;
  }
  *doc = std::string(signature) + "\n--\n\n" + text;
  Py_DECREF(usual_doc);
  def->ml_doc = doc->c_str();
  PyObject* method = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls), def);
  if (method == nullptr) return -1;
  Py_INCREF(usual);
  *keep = usual;
  const int status = PyObject_SetAttrString(cls, def->ml_name, method);
  Py_DECREF(method);
  return status;
}

// Installs both, given the slots where a Device keeps its ordinal and the
// Context set_current(ctx) made current; a class whose slots were not found
// (-1) keeps its Python methods.
inline int install_device_methods(PyObject* cls, Py_ssize_t id_slot, Py_ssize_t current_slot, NewStream make) {
  if (id_slot < 0 || current_slot < 0) return 0;
  static std::string set_current_doc;
  static std::string create_stream_doc;
  device_class = reinterpret_cast<PyTypeObject*>(cls);
  device_id_slot = id_slot;
  device_current_slot = current_slot;
  new_stream = make;
  if (install_device_method(cls, &set_current_def, "set_current($self, /, ctx=None)", &set_current_doc,
                            &set_current_usual) < 0) {
    return -1;
  }
  return install_device_method(cls, &create_stream_def, "create_stream($self, /, obj=None, options=None)",
                               &create_stream_doc, &create_stream_usual);
}

}  // namespace cubind_core

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

// Device.set_current as a method of the class written in C (a method
// descriptor, METH_FASTCALL | METH_KEYWORDS): device.set_current() on a Device of the class
// itself whose ordinal is a small int makes the ordinal's primary context
// current with the GIL released and clears the `_current` slot, with no
// argument parsing; any other call (a ctx, a keyword, a subclass) is the
// Python method's, kept in set_current_usual. Set once, by
// install_set_current.
static PyObject* set_current_usual = nullptr;
static PyTypeObject* set_current_class = nullptr;
static Py_ssize_t set_current_id_slot = -1;
static Py_ssize_t set_current_current_slot = -1;

// For create_stream and create_event: the ordinal of a Device of the class
// itself whose ordinal is a small int and which has no Context of its own
// current (its `_current` slot is None), read from its slots; false for any
// other object, which then takes the methods' attribute reads.
inline bool plain_device_ordinal(PyObject* self, int* ordinal) {
  if (Py_TYPE(self) != set_current_class) return false;
  PyObject* current = slot_get(self, set_current_current_slot);
  if (current != Py_None) return false;
  PyObject* id = slot_get(self, set_current_id_slot);
  long long value = -1;
  if (id == nullptr || !PyLong_CheckExact(id) || !read_small_int(id, &value) || value < 0 || value > INT_MAX) {
    return false;
  }
  *ordinal = static_cast<int>(value);
  return true;
}

inline PyObject* set_current_by_usual(PyObject* self, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  const Py_ssize_t nk = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  PyObject* small[8];
  PyObject** full = n + nk + 1 <= 8 ? small : static_cast<PyObject**>(PyMem_Malloc((n + nk + 1) * sizeof(PyObject*)));
  if (full == nullptr) return PyErr_NoMemory();
  full[0] = self;
  for (Py_ssize_t i = 0; i < n + nk; ++i) full[i + 1] = args[i];
  PyObject* result = PyObject_Vectorcall(set_current_usual, full, n + 1, kwnames);
  if (full != small) PyMem_Free(full);
  return result;
}

inline PyObject* set_current_method(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  long long ordinal = -1;
  if (kwnames == nullptr && (n == 0 || (n == 1 && args[0] == Py_None)) && Py_TYPE(self) == set_current_class) {
    PyObject* id = slot_get(self, set_current_id_slot);
    if (id != nullptr && PyLong_CheckExact(id) && read_small_int(id, &ordinal) && ordinal >= 0 && ordinal <= INT_MAX) {
      std::exception_ptr failure;
      Py_BEGIN_ALLOW_THREADS
      try {
        device_set_current(static_cast<int>(ordinal));
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
      slot_set_none(self, set_current_current_slot);
      Py_RETURN_NONE;
    }
  }
  return set_current_by_usual(self, args, n, kwnames);
}

inline PyMethodDef set_current_def = {
    "set_current", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(set_current_method)),
    METH_FASTCALL | METH_KEYWORDS, nullptr};

// Puts set_current_method in the class in place of `usual` (the Python
// method, kept for the calls it leaves), with usual's docstring after the
// signature inspect reads. A class whose slots were not found keeps usual.
inline int install_set_current(PyObject* cls, PyObject* usual, Py_ssize_t id_slot, Py_ssize_t current_slot) {
  if (id_slot < 0 || current_slot < 0) return 0;
  static std::string doc;
  PyObject* usual_doc = PyObject_GetAttrString(usual, "__doc__");
  if (usual_doc == nullptr) return -1;
  const char* text = PyUnicode_Check(usual_doc) ? PyUnicode_AsUTF8(usual_doc) : "";
  if (text == nullptr) {
    Py_DECREF(usual_doc);
    return -1;
  }
  doc = std::string("set_current($self, /, ctx=None)\n--\n\n") + text;
  Py_DECREF(usual_doc);
  set_current_def.ml_doc = doc.c_str();
  PyObject* method = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls), &set_current_def);
  if (method == nullptr) return -1;
  Py_INCREF(usual);
  set_current_usual = usual;
  set_current_class = reinterpret_cast<PyTypeObject*>(cls);
  set_current_id_slot = id_slot;
  set_current_current_slot = current_slot;
  const int status = PyObject_SetAttrString(cls, "set_current", method);
  Py_DECREF(method);
  return status;
}

}  // namespace cubind_core

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

}  // namespace cubind_core

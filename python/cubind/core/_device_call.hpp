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

#include "_type_call.hpp"

namespace cubind_core {

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

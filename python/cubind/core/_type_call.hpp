// A class's usual call (type.__call__: __new__, then __init__) from a
// vectorcall's arguments, as a tuple and a keyword dict: what a class's own
// tp_vectorcall falls back to for the calls it does not take itself.
// Included by _device_call.hpp and _launch_config_call.hpp.
#pragma once

#include <Python.h>

namespace cubind_core {

inline PyObject* usual_type_call(PyObject* type, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  PyObject* positional = PyTuple_New(n);
  if (positional == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SET_ITEM(positional, i, args[i]);
  }
  PyObject* keywords = nullptr;
  const Py_ssize_t nk = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nk > 0) {
    keywords = PyDict_New();
    for (Py_ssize_t i = 0; keywords != nullptr && i < nk; ++i) {
      if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[n + i]) != 0) Py_CLEAR(keywords);
    }
    if (keywords == nullptr) {
      Py_DECREF(positional);
      return nullptr;
    }
  }
  PyObject* result = PyType_Type.tp_call(type, positional, keywords);
  Py_DECREF(positional);
  Py_XDECREF(keywords);
  return result;
}

}  // namespace cubind_core

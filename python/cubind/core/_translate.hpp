// How a C++ exception of the core becomes a Python exception in cubind.core:
// the `except +cubind_core::translate` handler of every C++ call the Cython
// modules declare. CudaError and its NVRTC and nvJitLink subclasses become
// CUDAError, NVRTCError and NvJitLinkError, carrying the status and names the
// C++ error holds; argument errors become ValueError, as cuda.core raises for
// bad values; a closed or null object's std::logic_error becomes RuntimeError,
// as in cuda.core ("Program has been closed").
#pragma once

#include <Python.h>

#include <new>
#include <stdexcept>
#include <system_error>

#include "cubind/error.hpp"

namespace cubind_core {

// The exception class `name` of cubind.core._errors (a new reference), or
// null with no error set where it cannot be had. Looked up on each error, not
// kept: every cubind.core extension module has its own copy of this header.
inline PyObject* error_class(const char* name) {
  PyObject* module = PyImport_ImportModule("cubind.core._errors");
  PyObject* cls = module == nullptr ? nullptr : PyObject_GetAttrString(module, name);
  Py_XDECREF(module);
  if (cls == nullptr) PyErr_Clear();
  return cls;
}

inline void set_attribute(PyObject* object, const char* name, PyObject* value) {
  if (value == nullptr) {
    PyErr_Clear();
    return;
  }
  if (PyObject_SetAttrString(object, name, value) != 0) PyErr_Clear();
  Py_DECREF(value);
}

inline void raise_cuda_error(const char* class_name, const cubind::CudaError& error) {
  PyObject* cls = error_class(class_name);
  if (cls == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return;
  }
  PyObject* exception = PyObject_CallFunction(cls, "s", error.what());
  if (exception == nullptr) {  // the call's own error stands
    Py_DECREF(cls);
    return;
  }
  set_attribute(exception, "status", PyLong_FromLong(error.status()));
  set_attribute(exception, "api_function", PyUnicode_FromString(error.api_function().c_str()));
  set_attribute(exception, "error_name", PyUnicode_FromString(error.error_name().c_str()));
  set_attribute(exception, "error_string", PyUnicode_FromString(error.error_string().c_str()));
  PyErr_SetObject(cls, exception);
  Py_DECREF(exception);
  Py_DECREF(cls);
}

// Called inside the catch block Cython generates: rethrows to read the type.
inline void translate() {
  try {
    throw;
  } catch (const cubind::NvrtcError& error) {
    raise_cuda_error("NVRTCError", error);
  } catch (const cubind::NvJitLinkError& error) {
    raise_cuda_error("NvJitLinkError", error);
  } catch (const cubind::CudaError& error) {
    raise_cuda_error("CUDAError", error);
  } catch (const std::invalid_argument& error) {
    PyErr_SetString(PyExc_ValueError, error.what());
  } catch (const std::out_of_range& error) {
    PyErr_SetString(PyExc_ValueError, error.what());
  } catch (const std::system_error& error) {
    PyErr_SetString(PyExc_OSError, error.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "cubind.core: an unknown C++ exception");
  }
}

}  // namespace cubind_core

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

// The Python exception classes, set by the module at import (set_error_classes).
inline PyObject* cuda_error_class = nullptr;
inline PyObject* nvrtc_error_class = nullptr;
inline PyObject* nvjitlink_error_class = nullptr;

inline void set_error_classes(PyObject* cuda_error, PyObject* nvrtc_error, PyObject* nvjitlink_error) {
  Py_XINCREF(cuda_error);
  Py_XINCREF(nvrtc_error);
  Py_XINCREF(nvjitlink_error);
  cuda_error_class = cuda_error;
  nvrtc_error_class = nvrtc_error;
  nvjitlink_error_class = nvjitlink_error;
}

inline void set_attribute(PyObject* object, const char* name, PyObject* value) {
  if (value == nullptr) {
    PyErr_Clear();
    return;
  }
  if (PyObject_SetAttrString(object, name, value) != 0) PyErr_Clear();
  Py_DECREF(value);
}

inline void raise_cuda_error(PyObject* cls, const cubind::CudaError& error) {
  if (cls == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return;
  }
  PyObject* exception = PyObject_CallFunction(cls, "s", error.what());
  if (exception == nullptr) return;  // the call's own error stands
  set_attribute(exception, "status", PyLong_FromLong(error.status()));
  set_attribute(exception, "api_function", PyUnicode_FromString(error.api_function().c_str()));
  set_attribute(exception, "error_name", PyUnicode_FromString(error.error_name().c_str()));
  set_attribute(exception, "error_string", PyUnicode_FromString(error.error_string().c_str()));
  PyErr_SetObject(cls, exception);
  Py_DECREF(exception);
}

// Called inside the catch block Cython generates: rethrows to read the type.
inline void translate() {
  try {
    throw;
  } catch (const cubind::NvrtcError& error) {
    raise_cuda_error(nvrtc_error_class, error);
  } catch (const cubind::NvJitLinkError& error) {
    raise_cuda_error(nvjitlink_error_class, error);
  } catch (const cubind::CudaError& error) {
    raise_cuda_error(cuda_error_class, error);
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

// What cubind.core's graphs need beside the C++ core: owners moved to the
// heap for a Python object to hold, and the host-callback functions that run
// a Python callable and let go of it from a driver thread.
#pragma once

#include <Python.h>
#include <cuda.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/graph.hpp"
#include "cubind/graph_memory_resource.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind_core {

// Captures on any stream, owned by cubind or not.
inline void stream_begin_capture(CUstream stream, CUstreamCaptureMode mode) {
  cubind::detail::check(cubind::raw::cuStreamBeginCapture(stream, mode), "cuStreamBeginCapture");
}

inline cubind::Graph* stream_end_capture(CUstream stream) {
  CUgraph graph = nullptr;
  cubind::detail::check(cubind::raw::cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  return new cubind::Graph(cubind::Graph::from_native_handle(graph));
}

inline cubind::GraphExec* graph_instantiate(CUgraph graph, CUcontext context,
                                            const cubind::GraphInstantiateOptions& options) {
  return new cubind::GraphExec(cubind::instantiate(cubind::GraphRef(graph), context, options));
}

inline std::shared_ptr<cubind::GraphMemoryResource> graph_memory_resource_new(int ordinal) {
  return std::make_shared<cubind::GraphMemoryResource>(cubind::Device::get(ordinal));
}

// Python is gone, or going: touching an object then would crash the process,
// so a callback or release arriving that late does nothing.
inline bool python_is_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// CUhostFn of a graph's host node: calls the Python callable (no arguments);
// what it raises goes to sys.unraisablehook, as nothing waits for it.
inline void CUDA_CB run_python_callable(void* callable) {
  if (!python_is_alive()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  PyObject* result = PyObject_CallNoArgs(static_cast<PyObject*>(callable));
  if (result == nullptr) {
    PyErr_WriteUnraisable(static_cast<PyObject*>(callable));
  } else {
    Py_DECREF(result);
  }
  PyGILState_Release(state);
}

// The release function of the user object that keeps a callable alive for
// as long as the graph (cuUserObjectCreate).
inline void CUDA_CB release_python_object(void* object) {
  if (!python_is_alive()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(object));
  PyGILState_Release(state);
}

inline void CUDA_CB release_malloced(void* data) { std::free(data); }

inline void CUDA_CB release_nothing(void*) {}

}  // namespace cubind_core

// The host callbacks of Python callables (Stream.launch_host_func, graph
// host nodes, the user objects that keep Python objects alive for a graph),
// run on the driver's threads. Included by one extension module alone,
// cubind.core._host_callbacks, which exports these to the others: the gate
// and the queue of deferred references below must be one per process.
#pragma once

#include <Python.h>
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace cubind_core {

// The host callbacks of Python callables (Stream.launch_host_func, graph host
// nodes) pass through a gate. At exit, before the interpreter finalizes,
// close_python_callbacks() shuts it and waits for the callbacks running then:
// a callback still running when the interpreter finalizes would have its
// thread, the driver's, ended by CPython when it takes the GIL back, and the
// driver would wait for it forever (in the release of a context at exit).
// Callbacks that arrive after the gate shut do nothing; their references stay.
inline std::atomic<int> python_callbacks_running{0};
inline std::atomic<bool> python_callbacks_closed{false};

// Enters the gate: false (and not entered) once it shut, or once the
// interpreter is finalizing or gone. leave_python_callback() after a true.
inline bool enter_python_callback() noexcept {
  python_callbacks_running.fetch_add(1);
  bool alive = !python_callbacks_closed.load() && Py_IsInitialized();
#if PY_VERSION_HEX >= 0x030D0000
  alive = alive && !Py_IsFinalizing();
#else
  alive = alive && !_Py_IsFinalizing();
#endif
  if (!alive) python_callbacks_running.fetch_sub(1);
  return alive;
}

inline void leave_python_callback() noexcept { python_callbacks_running.fetch_sub(1); }

// Shuts the gate, then waits up to timeout_ms for the callbacks inside it
// (called without the GIL, which they need). False if some are still running.
inline bool close_python_callbacks(int timeout_ms) noexcept {
  python_callbacks_closed.store(true);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (python_callbacks_running.load() != 0) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A host function and a user object's destructor run on the driver's threads
// (or inside the driver call that dropped the last graph) and must not call
// CUDA. Dropping a Python reference there could: when it is the last one to
// a Buffer, an Event, a Kernel or a Stream, their destructors free, destroy or
// unload. So release_later() drops it there only when others remain; a last
// reference waits in deferred_objects for the interpreter's main thread,
// which drops it as a pending call (Py_AddPendingCall), out of the driver.
inline std::mutex deferred_mutex;
inline std::vector<PyObject*> deferred_objects;  // under deferred_mutex
inline bool deferred_drain_queued = false;       // under deferred_mutex

// A pending call, on the main thread with the GIL held.
inline int drain_deferred_objects(void*) {
  std::vector<PyObject*> objects;
  {
    std::lock_guard<std::mutex> lock(deferred_mutex);
    objects.swap(deferred_objects);
    deferred_drain_queued = false;
  }
  for (PyObject* object : objects) Py_DECREF(object);
  return 0;
}

// Drops a reference, with the GIL held, on whatever thread; never runs a
// destructor there unless others still hold the object.
inline void release_later(PyObject* object) {
#ifndef Py_GIL_DISABLED
  if (Py_REFCNT(object) > 1) {
    Py_DECREF(object);
    return;
  }
#endif
  bool queue;
  {
    std::lock_guard<std::mutex> lock(deferred_mutex);
    deferred_objects.push_back(object);
    queue = !deferred_drain_queued;
    deferred_drain_queued = true;
  }
  // A full queue of pending calls (rare) leaves the objects to the next
  // release_later, which tries again.
  if (queue && Py_AddPendingCall(drain_deferred_objects, nullptr) != 0) {
    std::lock_guard<std::mutex> lock(deferred_mutex);
    deferred_drain_queued = false;
  }
}

// CUhostFn of a graph's host node: calls the Python callable (no arguments);
// what it raises goes to sys.unraisablehook, as nothing waits for it.
inline void CUDA_CB run_python_callable(void* callable) {
  if (!enter_python_callback()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  PyObject* result = PyObject_CallNoArgs(static_cast<PyObject*>(callable));
  if (result == nullptr) {
    PyErr_WriteUnraisable(static_cast<PyObject*>(callable));
  } else {
    Py_DECREF(result);
  }
  PyGILState_Release(state);
  leave_python_callback();
}

// The release function of the user object that keeps a Python object (a
// callable, a kernel's arguments, an event) alive for as long as the graph
// (cuUserObjectCreate).
inline void CUDA_CB release_python_object(void* object) {
  if (!enter_python_callback()) return;
  const PyGILState_STATE state = PyGILState_Ensure();
  release_later(static_cast<PyObject*>(object));
  PyGILState_Release(state);
  leave_python_callback();
}

// A C function as a host function (a ctypes function pointer of CUhostFn's
// prototype): the driver calls run_c_function with this record, which calls
// fn(data). owner is a strong reference to the Python object whose code fn
// is (a ctypes CFUNCTYPE object frees its thunk when it dies), so the record
// keeps it alive for as long as the driver may call it; bytes-like user data
// is copied into the record's tail, and data points there. One malloc, freed
// with the record by release_c_function.
struct CHostFunction {
  CUhostFn fn;
  void* data;
  PyObject* owner;
};

// CUhostFn of a C function. fn runs without the GIL (a ctypes thunk takes it
// itself), inside the gate: once it shut at exit, a thunk taking the GIL
// could end the driver's thread, so the call is skipped.
inline void CUDA_CB run_c_function(void* record) {
  if (!enter_python_callback()) return;
  const CHostFunction* call = static_cast<const CHostFunction*>(record);
  call->fn(call->data);
  leave_python_callback();
}

// Releases a record: its owner through release_later, on whatever thread.
// Once the gate shut at exit the record is left, as a Python reference is.
inline void CUDA_CB release_c_function(void* record) {
  if (!enter_python_callback()) return;
  CHostFunction* call = static_cast<CHostFunction*>(record);
  const PyGILState_STATE state = PyGILState_Ensure();
  release_later(call->owner);
  PyGILState_Release(state);
  leave_python_callback();
  std::free(call);
}

// A C function queued once (cuLaunchHostFunc outside a capture): the record
// is released after the call.
inline void CUDA_CB run_c_function_once(void* record) {
  run_c_function(record);
  release_c_function(record);
}

inline void CUDA_CB release_malloced(void* data) { std::free(data); }

inline void CUDA_CB release_nothing(void*) {}

}  // namespace cubind_core

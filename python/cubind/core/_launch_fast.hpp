// launch() as the interpreter calls it: a C function over the caller's own
// argument array (METH_FASTCALL), with no tuple of kernel arguments made.
// Where the call is the usual one (an open Stream, a LaunchConfig already
// rendered, a Kernel whose parameter sizes are known, arguments of kinds
// pack_arguments packs that fit their parameters, no keywords), it packs the
// arguments on the stack and calls cuLaunchKernelEx as cubind::launch_rendered
// does. Anything else goes to the general launch of _launch.pyx with the
// same arguments, which converts, renders, loads or explains.
//
// Everything the usual call reads outside its arguments is in one cache
// line (launch_layout) and in the first lines of the Stream, LaunchConfig
// and Kernel objects (their .pxd files put those fields first): a driver
// launch leaves little of this process in the core's caches, so each line
// read again costs a trip to a farther cache.
#pragma once

#include <Python.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "_launch_args.hpp"
#include "_translate.hpp"
#include "cubind/error.hpp"
#include "cubind/launch.hpp"
#include "cubind/stream.hpp"

namespace cubind_core {

// The general launch (a builtin of _launch.pyx), called where the usual way
// does not apply. A reference held for the life of the process.
static PyObject* launch_general = nullptr;

template <typename T>
inline T& field(PyObject* o, std::uint8_t offset) {
  return *reinterpret_cast<T*>(reinterpret_cast<char*>(o) + offset);
}

// A launch the driver refused: the CUDAError cubind::launch_rendered's
// check gives, through the same translation as every core call.
[[gnu::cold, gnu::noinline]] inline PyObject* launch_failed(CUresult status) {
  try {
    cubind::detail::check(status, "cuLaunchKernelEx");
  } catch (...) {
    translate();
  }
  return nullptr;
}

// Gives launch_layout the driver's cuLaunchKernelEx, once a launch the
// general way has reached it (so the driver is loaded).
inline void remember_launch_entry() {
  if (launch_layout.launch_ex == nullptr) {
    launch_layout.launch_ex = cubind::launch_kernel_ex_entry();
  }
}

// Every call the usual way does not take, with the arguments as they came.
// Cold: its call and the tests that lead to it are laid out apart from the
// usual way, whose code then takes fewer cache lines.
[[gnu::cold, gnu::noinline]] inline PyObject* launch_general_call(PyObject* const* args, Py_ssize_t nargs,
                                                                 PyObject* kwnames) {
  return PyObject_Vectorcall(launch_general, args, static_cast<std::size_t>(nargs), kwnames);
}

// What launch_packed returns where the arguments are not all of kinds it packs.
inline PyObject* not_packed() { return reinterpret_cast<PyObject*>(&launch_layout); }

// The launch of the packed arguments (their `pointers`).
[[gnu::always_inline]] inline PyObject* launch_packed_pointers(void** pointers, CUstream stream,
                                                               const cubind::NativeLaunchConfig& rendered,
                                                               CUfunction f) {
  // Field by field: a copy of the whole struct is a string move, whose start
  // costs more than these few loads and stores.
  const CUlaunchConfig& from = rendered.config;
  CUlaunchConfig c;
  c.gridDimX = from.gridDimX;
  c.gridDimY = from.gridDimY;
  c.gridDimZ = from.gridDimZ;
  c.blockDimX = from.blockDimX;
  c.blockDimY = from.blockDimY;
  c.blockDimZ = from.blockDimZ;
  c.sharedMemBytes = from.sharedMemBytes;
  c.hStream = stream;
  c.attrs = const_cast<CUlaunchAttribute*>(rendered.attributes);
  c.numAttrs = from.numAttrs;
  PyThreadState* state = PyEval_SaveThread();
  const CUresult status = launch_layout.launch_ex(&c, f, pointers, nullptr);
  PyEval_RestoreThread(state);
  if (status != CUDA_SUCCESS) return launch_failed(status);
  Py_RETURN_NONE;
}

// The arguments (`Args` at most) packed into slots on the stack (`Slots` of
// 8 bytes at most), then the launch: what cubind::launch_rendered does, with
// the rendered config's copy given this call's stream (the config may be
// shared by threads launching at once).
// `count` and `plan`: the kernel's argument plan (ArgPlan), followed where it
// is one for n arguments and dropped where an argument does not fit it; null
// for a kernel of more than 32 slots or 16 arguments.
template <std::size_t Slots, std::size_t Args>
[[gnu::always_inline]] inline PyObject* launch_packed(PyObject* const* args, Py_ssize_t n, const std::size_t* sizes,
                                                      CUstream stream, const cubind::NativeLaunchConfig& rendered,
                                                      CUfunction f, std::int8_t* count, ArgPlan* plan) {
  // Not initialised: only the slots of this call's arguments are written and read.
  std::uint64_t storage[Slots];
  void* pointers[Args];
  char* at = reinterpret_cast<char*>(storage);
  if (count == nullptr || *count != n || !pack_planned(*plan, args, n, sizes, at, pointers)) {
    if (__builtin_expect(count != nullptr && *count == n, 0)) drop_plan(*count, *plan);
    if (pack_arguments(args, 0, n, sizes, at, pointers) != n) return not_packed();
  }
  return launch_packed_pointers(pointers, stream, rendered, f);
}

// A kernel of more than 32 slots or 16 arguments: its own frame, so that the
// usual one stays small (the driver's call runs below it, on stack lines the
// last launch left).
[[gnu::noinline]] inline PyObject* launch_packed_large(PyObject* const* args, Py_ssize_t n, const std::size_t* sizes,
                                                       CUstream stream, const cubind::NativeLaunchConfig& rendered,
                                                       CUfunction f) {
  return launch_packed<128, 128>(args, n, sizes, stream, rendered, f, nullptr, nullptr);
}

// Every call launch_function's first tests turn away: a kernel of more than
// 32 slots or 16 arguments, or a call the general way takes. Out of line, so
// that the usual way's code is short.
[[gnu::cold, gnu::noinline]] inline PyObject* launch_checked(PyObject* const* args, Py_ssize_t nargs,
                                                            PyObject* kwnames) {
  const LaunchLayout& l = launch_layout;
  const Py_ssize_t n = nargs - 3;
  if (kwnames == nullptr && n >= 0 && n <= 128) {
    PyObject* stream = args[0];
    PyObject* config = args[1];
    PyObject* kernel = args[2];
    // A Kernel's handle is set once its sizes are known.
    if (Py_TYPE(stream) == l.stream_type && Py_TYPE(config) == l.config_type && Py_TYPE(kernel) == l.kernel_type &&
        !field<int>(stream, l.stream_closed) && field<int>(config, l.config_rendered) &&
        field<CUkernel>(kernel, l.kernel_handle) != nullptr &&
        field<std::vector<std::size_t>>(kernel, l.kernel_sizes).size() == static_cast<std::size_t>(n) &&
        l.launch_ex != nullptr) {
      const CUstream handle = field<CUstream>(stream, l.stream_handle);
      const std::size_t slots = field<std::size_t>(kernel, l.kernel_slots);
      const std::size_t* sizes = field<std::vector<std::size_t>>(kernel, l.kernel_sizes).data();
      const cubind::NativeLaunchConfig& rendered = field<cubind::NativeLaunchConfig>(config, l.config_native);
      const CUfunction f = reinterpret_cast<CUfunction>(field<CUkernel>(kernel, l.kernel_handle));
      if (handle != cubind::detail::invalid_stream() && slots <= 128) {
        // A parameter takes one slot or more, but the pointers are counted too.
        PyObject* const result = launch_packed_large(args + 3, n, sizes, handle, rendered, f);
        if (result != not_packed()) return result;
      }
    }
  }
  return launch_general_call(args, nargs, kwnames);
}

// The usual way in two tests, one of the objects' types and one of their
// state, each a single branch: a driver call leaves the branch predictors
// little memory of this code, so each branch taken the unexpected way costs
// a pipeline's refill. (The types first: only then can the state be read.)
inline PyObject* launch_function(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const LaunchLayout& l = launch_layout;
  const Py_ssize_t n = nargs - 3;  // below 0 it is above 16 as a size_t
  if (__builtin_expect((kwnames == nullptr) & (static_cast<std::size_t>(n) <= 16), 1)) {
    PyObject* stream = args[0];
    PyObject* config = args[1];
    PyObject* kernel = args[2];
    if (__builtin_expect((Py_TYPE(stream) == l.stream_type) & (Py_TYPE(config) == l.config_type) &
                             (Py_TYPE(kernel) == l.kernel_type),
                         1)) {
      const CUstream handle = field<CUstream>(stream, l.stream_handle);
      const CUkernel k = field<CUkernel>(kernel, l.kernel_handle);
      const std::vector<std::size_t>& sizes = field<std::vector<std::size_t>>(kernel, l.kernel_sizes);
      // A Kernel's handle is set once its sizes are known. 32 slots take 16
      // parameters of up to 16 bytes (a double2, a NumPy complex128 or a
      // struct of two doubles each).
      if (__builtin_expect((field<int>(stream, l.stream_closed) == 0) & (field<int>(config, l.config_rendered) != 0) &
                               (k != nullptr) & (sizes.size() == static_cast<std::size_t>(n)) &
                               (field<std::size_t>(kernel, l.kernel_slots) <= 32) &
                               (handle != cubind::detail::invalid_stream()) & (l.launch_ex != nullptr),
                           1)) {
        const cubind::NativeLaunchConfig& rendered = field<cubind::NativeLaunchConfig>(config, l.config_native);
        // Kernel._plan_count lies 4 bytes before Kernel._handle, Kernel._plan
        // right after Kernel._sizes (_launch.pyx checks both as it loads).
        std::int8_t* const count = &field<std::int8_t>(kernel, static_cast<std::uint8_t>(l.kernel_handle - 4));
        ArgPlan* const plan = reinterpret_cast<ArgPlan*>(const_cast<std::vector<std::size_t>*>(&sizes) + 1);
        PyObject* const result = launch_packed<32, 16>(args + 3, n, sizes.data(), handle, rendered,
                                                   reinterpret_cast<CUfunction>(k), count, plan);
        if (__builtin_expect(result != not_packed(), 1)) return result;
        return launch_general_call(args, nargs, kwnames);
      }
    }
  }
  return launch_checked(args, nargs, kwnames);
}

static PyMethodDef launch_method = {
    "launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(launch_function)),
    METH_FASTCALL | METH_KEYWORDS,
    "launch(stream, config, kernel, *kernel_args)\n--\n\n"
    "Launches kernel on stream (a Stream or an object with __cuda_stream__)\n"
    "with config (a LaunchConfig) and kernel_args, each checked against the\n"
    "kernel's parameter of the same position (cuLaunchKernelEx)."};

// The builtin `launch` of module `module_name`, going to `general` where its
// usual way does not apply.
inline PyObject* make_launch_function(PyObject* general, PyObject* module_name) {
  Py_INCREF(general);
  Py_XSETREF(launch_general, general);
  return PyCFunction_NewEx(&launch_method, nullptr, module_name);
}

// The items of a tuple, as pack_arguments reads them.
inline PyObject* const* tuple_items(PyObject* tuple) { return &PyTuple_GET_ITEM(tuple, 0); }

}  // namespace cubind_core

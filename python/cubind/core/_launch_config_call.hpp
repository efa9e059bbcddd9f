// LaunchConfig(grid=g, block=b) and LaunchConfig(grid=g, block=b,
// shmem_size=s) as a vectorcall of the class itself (the type object's
// tp_vectorcall, which CPython calls for LaunchConfig(...) before any of
// type.__call__'s machinery). A LaunchConfig is immutable (read-only fields,
// its driver form rendered once), so one made from exact ints is kept and
// given again for the same three values, as a program that builds its config
// at every launch does: no argument tuple, keyword dict or __init__ per call.
// Any other call (positional arguments, cluster, is_cooperative, a tuple or
// a value out of range, which __init__ explains) takes the class's usual
// call. Subclasses do not inherit tp_vectorcall. Included by _launch only.
#pragma once

#include <Python.h>

#include "_launch_args.hpp"
#include "_type_call.hpp"

namespace cubind_core {

struct LaunchConfigKey {
  unsigned long long grid;
  unsigned long long block;
  unsigned long long shmem;
};

struct KeptLaunchConfig {
  LaunchConfigKey key;
  PyObject* config;  // a reference held while here, or nullptr
};

static KeptLaunchConfig kept_launch_configs[16];
static PyObject* launch_config_names[3];  // "grid", "block", "shmem_size", interned

// The last call that gave a kept config, by identity: a call site's keyword
// names are one constant tuple, and a loop passes the same int objects again.
// Ints are immutable, so the same objects (references held here) under the
// same names mean the same config, given again before any value is read.
struct LastLaunchConfigCall {
  PyObject* kwnames = nullptr;
  PyObject* values[3] = {nullptr, nullptr, nullptr};
  PyObject* config = nullptr;
};
static LastLaunchConfigCall last_launch_config_call;

inline void release_launch_config_call(const LastLaunchConfigCall& call) {
  Py_XDECREF(call.kwnames);
  for (PyObject* v : call.values) Py_XDECREF(v);
  Py_XDECREF(call.config);
}

// The last call is replaced (or forgotten) before the old one's references
// are let go: a config's deallocation may run a weakref callback that makes
// a config again, and that call then replaces and lets go of this one.
inline void forget_last_launch_config_call() {
  const LastLaunchConfigCall old = last_launch_config_call;
  last_launch_config_call = LastLaunchConfigCall{};
  release_launch_config_call(old);
}

inline void remember_last_launch_config_call(PyObject* kwnames, PyObject* const* values, Py_ssize_t nk,
                                             PyObject* config) {
  LastLaunchConfigCall now;
  now.kwnames = kwnames;
  Py_INCREF(kwnames);
  for (Py_ssize_t i = 0; i < nk; ++i) {
    now.values[i] = values[i];
    Py_INCREF(values[i]);
  }
  now.config = config;
  Py_INCREF(config);
  const LastLaunchConfigCall old = last_launch_config_call;
  last_launch_config_call = now;
  release_launch_config_call(old);
}

// An exact int within [low, high], into *out.
inline bool exact_int_in(PyObject* o, long long low, long long high, unsigned long long* out) {
  long long v;
  if (Py_TYPE(o) != &PyLong_Type || !read_small_int(o, &v) || v < low || v > high) return false;
  *out = static_cast<unsigned long long>(v);
  return true;
}

inline int launch_config_name(PyObject* name) {
  for (int i = 0; i < 3; ++i) {
    if (name == launch_config_names[i]) return i;
  }
  for (int i = 0; i < 3; ++i) {
    if (PyUnicode_Check(name) && PyUnicode_Compare(name, launch_config_names[i]) == 0) return i;
  }
  return -1;
}

inline KeptLaunchConfig& kept_launch_config(const LaunchConfigKey& key) {
  return kept_launch_configs[(key.grid * 31 + key.block * 7 + key.shmem) & 15];
}

inline PyObject* launch_config_vectorcall(PyObject* type, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n != 0 || kwnames == nullptr) return usual_type_call(type, args, n, kwnames);
  const Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
  if (nk > 3) return usual_type_call(type, args, n, kwnames);
  const LastLaunchConfigCall& last = last_launch_config_call;
  if (kwnames == last.kwnames && last.config != nullptr && args[0] == last.values[0] &&
      args[1] == last.values[1] && (nk < 3 || args[2] == last.values[2])) {
    Py_INCREF(last.config);
    return last.config;
  }
  LaunchConfigKey key{0, 0, 0};
  bool given[3] = {false, false, false};
  for (Py_ssize_t i = 0; i < nk; ++i) {
    const int which = launch_config_name(PyTuple_GET_ITEM(kwnames, i));
    bool ok = which >= 0;
    if (which == 0) ok = exact_int_in(args[i], 1, 0xFFFFFFFFLL, &key.grid);
    if (which == 1) ok = exact_int_in(args[i], 1, 0xFFFFFFFFLL, &key.block);
    if (which == 2) ok = exact_int_in(args[i], 0, 0xFFFFFFFFLL, &key.shmem);
    if (!ok) return usual_type_call(type, args, n, kwnames);
    given[which] = true;
  }
  if (!given[0] || !given[1]) return usual_type_call(type, args, n, kwnames);
  KeptLaunchConfig& kept = kept_launch_config(key);
  if (kept.config != nullptr && kept.key.grid == key.grid && kept.key.block == key.block &&
      kept.key.shmem == key.shmem) {
    PyObject* config = kept.config;
    Py_INCREF(config);
    remember_last_launch_config_call(kwnames, args, nk, config);
    return config;
  }
  PyObject* config = usual_type_call(type, args, n, kwnames);
  if (config == nullptr) return nullptr;
  PyObject* old = kept.config;
  Py_INCREF(config);
  kept.key = key;
  kept.config = config;
  Py_XDECREF(old);
  remember_last_launch_config_call(kwnames, args, nk, config);
  return config;
}

// Called by LaunchConfig.__init__ on an object it initializes again, so that
// no later call is given it for values it no longer holds.
inline void forget_launch_config(PyObject* config) {
  if (last_launch_config_call.config == config) forget_last_launch_config_call();
  for (KeptLaunchConfig& kept : kept_launch_configs) {
    if (kept.config == config) {
      kept.config = nullptr;
      Py_DECREF(config);
    }
  }
}

inline void install_launch_config_call(PyObject* type) {
  launch_config_names[0] = PyUnicode_InternFromString("grid");
  launch_config_names[1] = PyUnicode_InternFromString("block");
  launch_config_names[2] = PyUnicode_InternFromString("shmem_size");
  reinterpret_cast<PyTypeObject*>(type)->tp_vectorcall = launch_config_vectorcall;
}

}  // namespace cubind_core

// The kernel arguments launch() converts most often, packed in place: an
// exact Python int read without a call into the interpreter where it is
// small (as CPython stores it), a float. Each returns 0 for anything it does
// not take (another type, a size it does not fill, a value out of range), and
// launch() then goes the general way, which also explains every refusal.
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cubind_core {

inline bool read_small_int(PyObject* o, long long* out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o))) {
    *out = static_cast<long long>(PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o)));
    return true;
  }
#else
  const Py_ssize_t digits = Py_SIZE(o);
  if (digits == 0) {
    *out = 0;
    return true;
  }
  if (digits == 1 || digits == -1) {
    const long long magnitude = static_cast<long long>(reinterpret_cast<PyLongObject*>(o)->ob_digit[0]);
    *out = digits == 1 ? magnitude : -magnitude;
    return true;
  }
#endif
  int overflow = 0;
  *out = PyLong_AsLongLongAndOverflow(o, &overflow);  // an exact int sets no error
  return overflow == 0;
}

// An exact int into a 4-byte (signed or unsigned) or 8-byte parameter.
inline bool pack_int(PyObject* o, std::size_t size, char* slot) {
  long long v;
  if (!read_small_int(o, &v)) return false;
  if (size == 4) {
    if (v < INT32_MIN || v > static_cast<long long>(UINT32_MAX)) return false;
    const std::uint32_t low = static_cast<std::uint32_t>(v);
    std::memcpy(slot, &low, 4);
    return true;
  }
  if (size == 8) {
    std::memcpy(slot, &v, 8);
    return true;
  }
  return false;
}

// An exact float into a float (rounded) or double parameter.
inline bool pack_float(PyObject* o, std::size_t size, char* slot) {
  const double d = PyFloat_AS_DOUBLE(o);
  if (size == 8) {
    std::memcpy(slot, &d, 8);
    return true;
  }
  if (size == 4) {
    const float f = static_cast<float>(d);
    std::memcpy(slot, &f, 4);
    return true;
  }
  return false;
}

}  // namespace cubind_core

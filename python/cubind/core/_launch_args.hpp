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

// An int (or bool) into a parameter of 1, 2, 4 or 8 bytes, as a signed or
// an unsigned value of that size: the ranges launch's general way accepts
// (-2**(8n-1) .. 2**(8n) - 1), so either way packs the same bytes or refuses.
// An 8-byte parameter takes 2**63 .. 2**64 - 1 only the general way.
inline bool pack_int(PyObject* o, std::size_t size, char* slot) {
  long long v;
  if (!read_small_int(o, &v)) return false;
  // Little-endian: the low bytes are the value in that size. Each size is
  // its own constant copy, so none is a call to memcpy.
  switch (size) {
    case 8:
      std::memcpy(slot, &v, 8);
      return true;
    case 4:
      if (v < INT32_MIN || v > static_cast<long long>(UINT32_MAX)) return false;
      std::memcpy(slot, &v, 4);
      return true;
    case 2:
      if (v < INT16_MIN || v > static_cast<long long>(UINT16_MAX)) return false;
      std::memcpy(slot, &v, 2);
      return true;
    case 1:
      if (v < INT8_MIN || v > static_cast<long long>(UINT8_MAX)) return false;
      std::memcpy(slot, &v, 1);
      return true;
    default:
      return false;
  }
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

// The bytes of an object with the buffer protocol (NumPy scalars of every
// width and structured scalars, ctypes scalars, Structures and arrays,
// bytes) into a parameter of `size` bytes, taken as launch's general way
// takes them, memoryview(o).cast("B"), without making either memoryview: the
// same export (PyBUF_FULL_RO) and the conditions under which memoryview and
// its cast accept it (at most 64 dimensions, C-contiguous, no suboffsets, no
// zero in the shape unless 1-D). Returns false, with no error set, when the
// export fails, a condition does not hold or the length is not `size`:
// launch then goes the general way, which exports again and explains.
inline bool exports_buffer(PyTypeObject* t) {
  return t->tp_as_buffer != nullptr && t->tp_as_buffer->bf_getbuffer != nullptr;
}

inline bool pack_buffer(PyObject* o, std::size_t size, char* slot) {
  if (!exports_buffer(Py_TYPE(o))) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_FULL_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  bool ok = view.ndim >= 0 && view.ndim <= PyBUF_MAX_NDIM && view.suboffsets == nullptr &&
            static_cast<std::size_t>(view.len) == size;
  if (ok && view.ndim == 1) {
    // memoryview's test of one dimension (a missing shape or strides is contiguous).
    ok = view.shape == nullptr || view.strides == nullptr || view.shape[0] == 1 ||
         view.strides[0] == view.itemsize;
  } else if (ok && view.ndim > 1) {
    ok = PyBuffer_IsContiguous(&view, 'C') != 0;
    for (int i = 0; ok && view.shape != nullptr && i < view.ndim; ++i) ok = view.shape[i] != 0;
  }
  if (ok) {
    switch (size) {
      case 1: std::memcpy(slot, view.buf, 1); break;
      case 2: std::memcpy(slot, view.buf, 2); break;
      case 4: std::memcpy(slot, view.buf, 4); break;
      case 8: std::memcpy(slot, view.buf, 8); break;
      case 16: std::memcpy(slot, view.buf, 16); break;
      default: std::memcpy(slot, view.buf, size);
    }
  }
  PyBuffer_Release(&view);
  return ok;
}

}  // namespace cubind_core

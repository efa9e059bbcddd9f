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

// NumPy's numeric scalar types (np.bool_, np.int8 ... np.uint64, the floats
// and complexes) keep their value in the object itself at a fixed offset.
// launch looks at each type with the buffer protocol once (the first time
// pack_buffer packs one of its objects) and remembers it here, with that
// offset and size for those types, and with size 0 for any other, so that
// later arguments of the type cost one probe: a NumPy scalar's value is then
// copied from where its export would point. One entry per hash of the type;
// a type that loses its entry to another is looked at again.
struct BufferType {
  PyTypeObject* type;  // a reference held while here
  Py_ssize_t offset;
  Py_ssize_t size;     // 0: not an inline scalar type
};
static BufferType buffer_types[128];

inline BufferType& buffer_type_entry(PyTypeObject* t) {
  const auto p = reinterpret_cast<std::uintptr_t>(t);
  return buffer_types[((p >> 4) ^ (p >> 11)) & 127];
}

// -1: t has no entry (not looked at, or lost it); 0: its bytes go through
// pack_buffer; 1: an inline scalar type.
inline int buffer_type_kind(PyTypeObject* t) {
  const BufferType& known = buffer_type_entry(t);
  if (known.type != t) return -1;
  return known.size == 0 ? 0 : 1;
}

// For a type of kind 1.
inline bool pack_inline_scalar(PyObject* o, PyTypeObject* t, std::size_t size, char* slot) {
  const BufferType& known = buffer_type_entry(t);
  if (static_cast<std::size_t>(known.size) != size) return false;  // the general way explains
  const char* value = reinterpret_cast<const char*>(o) + known.offset;
  switch (size) {
    case 1: std::memcpy(slot, value, 1); break;
    case 2: std::memcpy(slot, value, 2); break;
    case 4: std::memcpy(slot, value, 4); break;
    case 8: std::memcpy(slot, value, 8); break;
    case 16: std::memcpy(slot, value, 16); break;
    default: std::memcpy(slot, value, size);
  }
  return true;
}

// Gives t its entry: an inline scalar type when `numeric` (the caller has
// checked that t is one of NumPy's numeric scalar types, whose instances all
// keep their value at the same place) and o's export is its whole value
// inside o (0-dimensional, within the object's fixed size); otherwise a type
// whose bytes go through pack_buffer.
inline void remember_buffer_type(PyObject* o, PyTypeObject* t, bool numeric) {
  BufferType entry{t, 0, 0};
  if (numeric) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_FULL_RO) == 0) {
      const char* start = reinterpret_cast<const char*>(o);
      const char* at = static_cast<const char*>(view.buf);
      if (view.ndim == 0 && view.len > 0 && at >= start && at + view.len <= start + t->tp_basicsize) {
        entry.offset = at - start;
        entry.size = view.len;
      }
      PyBuffer_Release(&view);
    } else {
      PyErr_Clear();
    }
  }
  BufferType& slot = buffer_type_entry(t);
  PyTypeObject* old = slot.type;
  Py_INCREF(reinterpret_cast<PyObject*>(t));
  slot = entry;
  Py_XDECREF(reinterpret_cast<PyObject*>(old));
}

}  // namespace cubind_core

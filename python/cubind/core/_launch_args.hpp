// The kernel arguments launch() converts most often, packed in place: an
// exact Python int read without a call into the interpreter where it is
// small (as CPython stores it), a float. Each returns 0 for anything it does
// not take (another type, a size it does not fill, a value out of range), and
// launch() then goes the general way, which also explains every refusal.
#pragma once

#include <Python.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cubind_core {

// An int beyond one digit, out of line: launch's usual way keeps its code short.
[[gnu::noinline]] inline bool read_large_int(PyObject* o, long long* out) {
  int overflow = 0;
  *out = PyLong_AsLongLongAndOverflow(o, &overflow);  // an exact int sets no error
  return overflow == 0;
}

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
  return read_large_int(o, out);
}

// An int (or bool) into a parameter of 1, 2, 4 or 8 bytes, as a signed or
// an unsigned value of that size: the ranges launch's general way accepts
// (-2**(8n-1) .. 2**(8n) - 1), so either way packs the same bytes or refuses.
// An 8-byte parameter takes 2**63 .. 2**64 - 1 only the general way. The
// slot is 8 bytes or more: all 8 are written, little-endian, so the value's
// `size` low bytes come first and the rest is padding the driver never reads.
inline bool pack_int(PyObject* o, std::size_t size, char* slot) {
  long long v;
  if (!read_small_int(o, &v)) return false;
  if (size == 4) {
    if (v < INT32_MIN || v > static_cast<long long>(UINT32_MAX)) return false;
  } else if (size == 2) {
    if (v < INT16_MIN || v > static_cast<long long>(UINT16_MAX)) return false;
  } else if (size == 1) {
    if (v < INT8_MIN || v > static_cast<long long>(UINT8_MAX)) return false;
  } else if (size != 8) {
    return false;
  }
  std::memcpy(slot, &v, 8);
  return true;
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

[[gnu::noinline]] inline bool pack_buffer(PyObject* o, std::size_t size, char* slot) {
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

// Types whose objects launch has looked at once: NumPy's numeric scalar
// types (np.bool_, np.int8 ... np.uint64, the floats and complexes) keep
// their value in the object itself at a fixed offset; NumPy's void scalars
// (structs) give their bytes through an export without a format string
// (PyBUF_SIMPLE), which costs a fraction of the full one; ctypes' data
// objects (c_int32 ... c_double, c_void_p, Structures, Unions, arrays,
// pointers) keep a pointer to their bytes and their size in the object.
// launch looks at each type with the buffer protocol once (the first time
// it packs one of its objects) and remembers how to find the bytes its
// export would give, so that later arguments of the type cost one probe and
// a copy.
// One entry per hash of the type; a type that loses its entry to another is
// looked at again.
enum BufferKind : int {
  kExported = 0,  // the bytes go through pack_buffer
  kInline = 1,    // NumPy numeric scalar: `size` bytes at `offset` in the object
  kCData = 2,     // ctypes data: the bytes at the object's b_ptr, b_size of them
  kSimple = 3,    // NumPy void scalar (a struct): the bytes of a PyBUF_SIMPLE export
};

struct BufferType {
  PyTypeObject* type;  // a reference held while here
  Py_ssize_t offset;
  Py_ssize_t size;
  BufferKind kind;
};
static BufferType buffer_types[128];

// The head of ctypes' CDataObject (Modules/_ctypes/ctypes.h), the same from
// CPython 2.5 to 3.14. It is not public API, so a type is taken as kCData
// only after one of its objects showed exactly the bytes its export gives
// where this layout says they are (remember_buffer_type).
struct CDataHead {
  PyObject_HEAD
  char* b_ptr;
  int b_needsfree;
  PyObject* b_base;
  Py_ssize_t b_size;
};

inline BufferType& buffer_type_entry(PyTypeObject* t) {
  const auto p = reinterpret_cast<std::uintptr_t>(t);
  return buffer_types[((p >> 4) ^ (p >> 11)) & 127];
}

[[gnu::always_inline]] inline void copy_argument(char* slot, const char* value, std::size_t size) {
  // Each common size is its own constant copy, so none is a call to memcpy;
  // tested in turn rather than through a jump table, whose own cache line a
  // launch would read too.
  if (size == 8) {
    std::memcpy(slot, value, 8);
  } else if (size == 4) {
    std::memcpy(slot, value, 4);
  } else if (size == 2) {
    std::memcpy(slot, value, 2);
  } else if (size == 1) {
    std::memcpy(slot, value, 1);
  } else if (size == 16) {
    std::memcpy(slot, value, 16);
  } else {
    std::memcpy(slot, value, size);
  }
}

// Whether launch has looked at t (it has an entry): pack_arguments packs its
// objects, and one it stopped at is refused there for good (the general way
// explains).
inline bool remembered(PyTypeObject* t) { return buffer_type_entry(t).type == t; }

// Gives t its entry, from o, an object of t whose bytes pack_buffer (or,
// for a NumPy struct, pack_simple) has just packed. `numpy_number`: the
// caller has checked that t is one of NumPy's numeric scalar types, whose
// instances all keep their value at the same place; it is kInline when o's
// export is its whole value inside o (0-dimensional, within the object's
// fixed size). `cdata`: t derives from ctypes' _CData; it is kCData when o's
// export is the b_size bytes at b_ptr (every object of a ctypes type has the
// export's shape, so the tests pack_buffer makes hold for all of them; only
// b_size varies, by ctypes.resize, and it is read per object). `numpy_void`:
// t is NumPy's void scalar type (np.void, np.record), kSimple, the export
// the general way takes a struct's bytes through too. Otherwise kExported.
inline void remember_buffer_type(PyObject* o, PyTypeObject* t, bool numpy_number, bool cdata, bool numpy_void) {
  BufferType entry{t, 0, 0, numpy_void ? kSimple : kExported};
  if (numpy_number || cdata) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_FULL_RO) == 0) {
      const char* start = reinterpret_cast<const char*>(o);
      const char* at = static_cast<const char*>(view.buf);
      if (numpy_number && view.ndim == 0 && view.len > 0 && at >= start &&
          at + view.len <= start + t->tp_basicsize) {
        entry.offset = at - start;
        entry.size = view.len;
        entry.kind = kInline;
      } else if (cdata && t->tp_basicsize >= static_cast<Py_ssize_t>(sizeof(CDataHead))) {
        const CDataHead* data = reinterpret_cast<const CDataHead*>(o);
        if (data->b_ptr == at && data->b_size == view.len && view.len > 0) entry.kind = kCData;
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

// A NumPy struct's bytes (kSimple), as the general way's _pack_struct takes
// them, false where the export fails or is not `size` bytes. Out of line:
// pack_remembered_other keeps no frame of its own for ctypes data.
[[gnu::noinline]] inline bool pack_simple(PyObject* o, std::size_t size, char* slot) {
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    return false;
  }
  const bool ok = static_cast<std::size_t>(view.len) == size;
  if (ok) copy_argument(slot, static_cast<const char*>(view.buf), size);
  PyBuffer_Release(&view);
  return ok;
}

// pack_remembered for a type other than a NumPy scalar's (ctypes data, any
// other export), out of line: launch's usual way keeps its code short.
[[gnu::noinline]] inline bool pack_remembered_other(PyObject* o, const BufferType& e, std::size_t size, char* slot) {
  if (e.kind == kCData) {
    const CDataHead* data = reinterpret_cast<const CDataHead*>(o);
    if (static_cast<std::size_t>(data->b_size) != size || data->b_ptr == nullptr) return false;
    copy_argument(slot, data->b_ptr, size);
    return true;
  }
  if (e.kind == kSimple) return pack_simple(o, size, slot);
  return pack_buffer(o, size, slot);
}

// The bytes of o, an object of a type launch has remembered (its entry e),
// into a parameter of `size` bytes; false where they do not fit it.
[[gnu::always_inline]] inline bool pack_remembered(PyObject* o, const BufferType& e, std::size_t size, char* slot) {
  if (e.kind == kInline) {
    if (static_cast<std::size_t>(e.size) != size) return false;
    copy_argument(slot, reinterpret_cast<const char*>(o) + e.offset, size);
    return true;
  }
  return pack_remembered_other(o, e, size, slot);
}

// What launch reads on its usual way besides its arguments, in one cache
// line: a launch finds little of this process left in the core's caches by
// the last launch's driver call, so each line read costs a trip to a farther
// cache. The types pack_arguments and launch_function tell apart (bool, the
// rarest, is compared last, with &PyBool_Type), and where their fields lie
// (byte offsets in the object), set once by _launch.pyx as it loads.
struct alignas(64) LaunchLayout {
  // The driver's cuLaunchKernelEx (cubind::launch_kernel_ex_entry), set by
  // the first launch made the general way (every Kernel's first launch is).
  CUresult (*launch_ex)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  PyTypeObject* long_type;
  PyTypeObject* float_type;
  PyTypeObject* buffer_type = nullptr;
  PyTypeObject* stream_type = nullptr;
  PyTypeObject* config_type = nullptr;
  PyTypeObject* kernel_type = nullptr;
  std::uint8_t buffer_address = 0;   // uintptr_t in a Buffer
  std::uint8_t stream_handle = 0;    // CUstream in a Stream
  std::uint8_t stream_closed = 0;    // int (bint)
  std::uint8_t config_rendered = 0;  // int (bint) in a LaunchConfig
  std::uint8_t config_native = 0;    // cubind::NativeLaunchConfig
  std::uint8_t kernel_handle = 0;    // CUkernel in a Kernel, set once its sizes are
  std::uint8_t kernel_slots = 0;     // size_t
  std::uint8_t kernel_sizes = 0;     // std::vector<size_t>
};
static_assert(sizeof(LaunchLayout) == 64, "launch_layout is one cache line");
static LaunchLayout launch_layout{nullptr, &PyLong_Type, &PyFloat_Type};

// The bytes of a slot: a parameter of `size` bytes, rounded up to 8.
constexpr std::size_t slot_bytes(std::size_t size) { return ((size + 7) >> 3) << 3; }

// From args[i] on, while each argument is of type t and its parameter takes
// N bytes: the N bytes at `offset` in it (a NumPy scalar's value) into the
// next slot. Returns the index of the first it did not copy (i itself where
// args[i]'s parameter is not N bytes).
template <std::size_t N>
[[gnu::always_inline]] inline Py_ssize_t copy_run(PyObject* const* args, Py_ssize_t i, Py_ssize_t n,
                                                  const std::size_t* sizes, char*& at, void** pointers,
                                                  PyTypeObject* t, Py_ssize_t offset) {
  while (sizes[i] == N) {
    std::memcpy(at, reinterpret_cast<const char*>(args[i]) + offset, N);
    pointers[i] = at;
    at += slot_bytes(N);
    if (++i == n || Py_TYPE(args[i]) != t) break;
  }
  return i;
}

// Packs kernel arguments args[i], args[i + 1], ... into their parameters'
// slots from `storage` on (each slot 8-byte aligned, sizes[i] bytes, rounded
// up to a multiple of 8), pointing pointers[i] at each, for as long as each
// is of a kind packed here: an int, bool or float, an exact Buffer (its
// address a uintptr_t in the object), or an object of a type launch has
// remembered. Returns the index of the first argument it did not pack (n
// when it packed them all), with `storage` moved past the slots it filled:
// launch packs that one its own way, explaining a refusal, and calls again
// from the next. Nothing here can fail or call into the interpreter's
// evaluation loop.
//
// Arguments come in runs of one type (16 NumPy int32 scalars are one run):
// a run's type is told apart once, and each argument of the run then costs a
// comparison of its type with the run's and its packing (for a NumPy
// scalar, a copy of its value's bytes, their count fixed for the run).
[[gnu::always_inline]] inline Py_ssize_t pack_arguments(PyObject* const* args, Py_ssize_t i, Py_ssize_t n,
                                                        const std::size_t* sizes, char*& storage, void** pointers) {
  const LaunchLayout& l = launch_layout;
  char* at = storage;
  while (i < n) {
    PyObject* o = args[i];
    PyTypeObject* const t = Py_TYPE(o);
    if (t == l.long_type) {
    ints:
      do {
        const std::size_t size = sizes[i];
        if (!pack_int(o, size, at)) goto done;
        pointers[i] = at;
        at += slot_bytes(size);
      } while (++i < n && Py_TYPE(o = args[i]) == t);
    } else if (t == l.buffer_type) {
      do {
        if (sizes[i] != 8) goto done;
        std::memcpy(at, reinterpret_cast<const char*>(o) + l.buffer_address, 8);
        pointers[i] = at;
        at += 8;
      } while (++i < n && Py_TYPE(o = args[i]) == t);
    } else if (t == l.float_type) {
      do {
        const std::size_t size = sizes[i];
        if (!pack_float(o, size, at)) goto done;
        pointers[i] = at;
        at += slot_bytes(size);
      } while (++i < n && Py_TYPE(o = args[i]) == t);
    } else {
      const BufferType& e = buffer_type_entry(t);
      if (e.type != t) {
        if (t == &PyBool_Type) goto ints;
        break;
      }
      const Py_ssize_t from = i;
      if (e.kind == kInline) {
        const Py_ssize_t offset = e.offset;
        switch (e.size) {  // no jump table: this module is compiled with -fno-jump-tables
          case 4: i = copy_run<4>(args, i, n, sizes, at, pointers, t, offset); break;
          case 8: i = copy_run<8>(args, i, n, sizes, at, pointers, t, offset); break;
          case 2: i = copy_run<2>(args, i, n, sizes, at, pointers, t, offset); break;
          case 1: i = copy_run<1>(args, i, n, sizes, at, pointers, t, offset); break;
          case 16: i = copy_run<16>(args, i, n, sizes, at, pointers, t, offset); break;
          default:
            do {
              const std::size_t size = sizes[i];
              if (!pack_remembered(o, e, size, at)) break;
              pointers[i] = at;
              at += slot_bytes(size);
            } while (++i < n && Py_TYPE(o = args[i]) == t);
        }
      } else {
        do {
          const std::size_t size = sizes[i];
          if (!pack_remembered_other(o, e, size, at)) break;
          pointers[i] = at;
          at += slot_bytes(size);
        } while (++i < n && Py_TYPE(o = args[i]) == t);
      }
      if (i == from) break;  // the run's first argument does not fit its parameter
    }
  }
done:
  storage = at;
  return i;
}

// A Kernel's argument plan: the type of each argument of a launch and how
// it was packed, so that a later launch with arguments of the same types,
// position by position, packs each with one comparison of its type and its
// copy. It is made for arguments of mixed types with NumPy scalars among
// them, where pack_arguments looks each NumPy scalar's type up (each a run
// of its own); runs of one type, a single NumPy scalar, and plain ints,
// floats and Buffers pack_arguments packs with less. Made by the general
// way's launch (every kernel's first, and any with a type launch has not
// seen), which then sets the kernel's handle that opens the usual way to it;
// followed by the usual way while it fits; dropped for good where it does
// not (a kernel whose argument types change from launch to launch is packed
// the usual way, without a plan, rather than planned again and again). The
// Kernel keeps it after its parameter sizes (Kernel._plan), and its count in
// a byte 4 bytes before its handle, which the usual way reads anyway
// (Kernel._plan_count: n, a plan for n arguments; -1, none yet; -2, none,
// the arguments looked at not planned or the plan dropped). Read and written
// with the GIL held.
struct ArgPlan {
  static constexpr int kMax = 16;
  // op: a NumPy scalar of that many bytes, its value at offset[i] (1, 2, 4,
  // 8, 16), or one of these.
  static constexpr std::uint8_t kBuffer = 0x20;  // an exact Buffer: its address
  static constexpr std::uint8_t kInt = 0x21;     // an int or bool: pack_int
  static constexpr std::uint8_t kFloat = 0x22;   // a float: pack_float
  std::uint8_t op[kMax];
  std::uint8_t offset[kMax];
  PyTypeObject* type[kMax];  // a reference held to each of the first `held`
  int held = 0;

  ArgPlan() = default;
  ArgPlan(const ArgPlan&) = delete;
  ArgPlan& operator=(const ArgPlan&) = delete;
  ~ArgPlan() { release(); }
  void release() {
    for (int i = 0; i < held; ++i) Py_DECREF(reinterpret_cast<PyObject*>(type[i]));
    held = 0;
  }
};

// Plans the n arguments of a launch just packed (their parameters' sizes
// `sizes`) where each is of a kind the plan takes, two NumPy scalars or more
// are among them and they are mixed (more runs of one type than half their
// count); `count` becomes n, or -2 where they are not planned.
inline void make_plan(std::int8_t& count, ArgPlan& plan, PyObject* const* args, Py_ssize_t n,
                      const std::size_t* sizes) {
  const LaunchLayout& l = launch_layout;
  plan.release();
  count = -2;
  if (n > ArgPlan::kMax) return;
  // Written into the plan as it goes (it holds nothing until the end).
  Py_ssize_t runs = 0;
  int numpy = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyTypeObject* const t = Py_TYPE(args[i]);
    runs += i == 0 || Py_TYPE(args[i - 1]) != t;
    plan.type[i] = t;
    plan.offset[i] = 0;
    if (t == l.long_type || t == &PyBool_Type) {
      plan.op[i] = ArgPlan::kInt;
    } else if (t == l.float_type) {
      plan.op[i] = ArgPlan::kFloat;
    } else if (t == l.buffer_type) {
      plan.op[i] = ArgPlan::kBuffer;
    } else {
      const BufferType& e = buffer_type_entry(t);
      const Py_ssize_t size = e.size;
      if (e.type != t || e.kind != kInline || static_cast<std::size_t>(size) != sizes[i] || e.offset > 255 ||
          !(size == 1 || size == 2 || size == 4 || size == 8 || size == 16)) {
        return;
      }
      plan.op[i] = static_cast<std::uint8_t>(size);
      plan.offset[i] = static_cast<std::uint8_t>(e.offset);
      ++numpy;
    }
  }
  if (numpy < 2 || 2 * runs <= n) return;
  for (Py_ssize_t i = 0; i < n; ++i) Py_INCREF(reinterpret_cast<PyObject*>(plan.type[i]));
  plan.held = static_cast<int>(n);
  count = static_cast<std::int8_t>(n);
}

// Drops a plan an argument did not fit (its type changed). Out of line.
[[gnu::cold, gnu::noinline]] inline void drop_plan(std::int8_t& count, ArgPlan& plan) {
  plan.release();
  count = -2;
}

// Packs args[0..n) as a plan for n arguments says, where each argument's
// type is the plan's and its value fits its parameter; false at the first
// that does not.
[[gnu::always_inline]] inline bool pack_planned(const ArgPlan& plan, PyObject* const* args, Py_ssize_t n,
                                                const std::size_t* sizes, char* at, void** pointers) {
  const std::uint8_t buffer_address = launch_layout.buffer_address;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* const o = args[i];
    if (Py_TYPE(o) != plan.type[i]) return false;
    const std::uint8_t op = plan.op[i];
    const std::size_t size = sizes[i];
    pointers[i] = at;
    if (op == 8 || op == ArgPlan::kBuffer) {
      if (size != 8) return false;
      std::memcpy(at, reinterpret_cast<const char*>(o) + (op == 8 ? plan.offset[i] : buffer_address), 8);
    } else if (op == 4) {
      if (size != 4) return false;
      std::memcpy(at, reinterpret_cast<const char*>(o) + plan.offset[i], 4);
    } else if (op == ArgPlan::kInt) {
      if (!pack_int(o, size, at)) return false;
    } else if (op == ArgPlan::kFloat) {
      if (!pack_float(o, size, at)) return false;
    } else if (op == size) {  // 1, 2 or 16 bytes
      copy_argument(at, reinterpret_cast<const char*>(o) + plan.offset[i], size);
    } else {
      return false;
    }
    at += slot_bytes(size);
  }
  return true;
}

}  // namespace cubind_core

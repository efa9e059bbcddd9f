"""The NumPy side of the struct classes of modules generated with
`structs: numpy` (cubind.bindings.nvml): each module's dtypes, built on first
use, and the checks of from_ptr, from_data and from_buffer.

NumPy is imported only here and only when a dtype, from_data or a field of an
array of structs is asked for: the modules import, and their functions and
struct fields work, without it.
"""

from operator import index as _index

_ADDRESS_MAX = (1 << 64) - 1


def numpy():
    """The numpy module, or an ImportError that says what needs it."""
    try:
        import numpy
    except ImportError as e:
        raise ImportError("the struct classes' dtypes, from_data and array fields need NumPy, which is not "
                          "installed (pip install numpy)") from e
    return numpy


class DtypeTable:
    """A module's dtypes by name (pci_info_dtype), each built once from its
    spec: (names, formats, offsets, itemsize), the offsets and itemsize as the
    C compiler laid the struct out. A format is a NumPy format ("<u4"), the
    name of another dtype of the table (a nested struct), or (format, shape)."""

    def __init__(self, specs):
        self._specs = specs
        self._built = {}

    def __contains__(self, name):
        return name in self._specs

    def get(self, name):
        dtype = self._built.get(name)
        if dtype is None:
            np = numpy()
            names, formats, offsets, itemsize = self._specs[name]()
            dtype = np.dtype({"names": list(names), "formats": [self._format(np, f) for f in formats],
                              "offsets": list(offsets), "itemsize": itemsize})
            self._built[name] = dtype
        return dtype

    def _format(self, np, f):
        if isinstance(f, tuple):
            return (self._format(np, f[0]), f[1])
        if f in self._specs:
            return self.get(f)
        return np.dtype(f)


def address(ptr, cls_name):
    """The address from_ptr is given, checked: an int (or __index__) in
    1..2**64-1. Zero, negative numbers and other types raise here rather than
    crash on the first field read."""
    if isinstance(ptr, bool) or not hasattr(type(ptr), "__index__"):
        raise TypeError(f"{cls_name}.from_ptr: ptr must be an int address, got {type(ptr).__name__} {ptr!r}")
    value = _index(ptr)
    if value == 0:
        raise ValueError(f"{cls_name}.from_ptr: ptr is 0 (NULL)")
    if value < 0 or value > _ADDRESS_MAX:
        raise ValueError(f"{cls_name}.from_ptr: ptr {value} is not an address (1..{_ADDRESS_MAX})")
    return value


def count(size, cls_name, what="size"):
    """A number of structs: an int of 0 or more (an empty array of structs, as
    for an array of 0 items in the calls that fill one)."""
    if isinstance(size, bool) or not hasattr(type(size), "__index__"):
        raise TypeError(f"{cls_name}: {what} must be an int, got {type(size).__name__} {size!r}")
    n = _index(size)
    if n < 0:
        raise ValueError(f"{cls_name}: {what} must be 0 or more, got {n}")
    return n


def data_memory(data, cls_name, dtype_name, dtype, many):
    """(address, count, readonly) of a NumPy array handed to from_data: of
    exactly the class's dtype, contiguous, and of one element unless the class
    is an array of structs."""
    np = numpy()
    if not isinstance(data, np.ndarray):
        raise TypeError(f"{cls_name}.from_data: data must be a numpy.ndarray of dtype {dtype_name}, "
                        f"got {type(data).__name__}")
    if data.dtype != dtype:
        raise ValueError(f"{cls_name}.from_data: data must be of dtype {dtype_name}, got dtype {data.dtype}")
    if not data.flags.c_contiguous:
        raise ValueError(f"{cls_name}.from_data: data must be C-contiguous")
    if many:
        if data.size < 1:
            raise ValueError(f"{cls_name}.from_data: data is empty")
    elif data.size != 1:
        raise ValueError(f"{cls_name}.from_data: data must hold one element (a {cls_name} holds one struct), "
                         f"got {data.size}")
    return data.ctypes.data, data.size, not data.flags.writeable


def buffer_memory(buffer, itemsize, cls_name, many):
    """(memoryview, count) of a buffer handed to from_buffer: contiguous, of
    exactly one struct's size, or of a whole number of them for an array of
    structs. The memoryview holds the buffer's export while the struct lives."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise TypeError(f"{cls_name}.from_buffer: buffer must support the buffer protocol, "
                        f"got {type(buffer).__name__}") from None
    if not view.contiguous:
        raise ValueError(f"{cls_name}.from_buffer: buffer must be contiguous")
    nbytes = view.nbytes
    if many:
        if nbytes < itemsize or nbytes % itemsize:
            raise ValueError(f"{cls_name}.from_buffer: buffer length must be a multiple of {itemsize} bytes "
                             f"(one struct), got {nbytes}")
    elif nbytes != itemsize:
        raise ValueError(f"{cls_name}.from_buffer: buffer length must be {itemsize} bytes, got {nbytes}")
    return view.cast("B"), nbytes // itemsize


def refuse_write(cls_name, field):
    raise ValueError(f"{cls_name}.{field}: this {cls_name} is read-only (from_ptr(..., readonly=True) "
                     f"or a read-only buffer)")


class _Memory:
    """Exposes `count` structs at an address to NumPy, keeping their owner alive."""

    def __init__(self, addr, nbytes, readonly, owner):
        self.__array_interface__ = {"data": (addr, bool(readonly)), "shape": (nbytes,), "typestr": "|u1",
                                    "version": 3}
        self.owner = owner


def view(obj, addr, n, dtype, readonly):
    """A NumPy array of `n` structs of `dtype` at addr, viewing obj's memory."""
    np = numpy()
    return np.asarray(_Memory(addr, n * dtype.itemsize, readonly, obj)).view(dtype)


def read_column(obj, addr, n, dtype, readonly, field):
    """A field over an array of structs: a NumPy array with one item per struct,
    a numpy.recarray where the field is a struct (its fields are attributes)."""
    column = view(obj, addr, n, dtype, readonly)[field]
    if column.dtype.names is not None:
        return column.view(numpy().recarray)
    return column


def counted_numbers(obj, addr, n, fmt, readonly):
    """The n used items of a counted array field (numbers of struct format fmt,
    or bytes as "B"): a NumPy array over obj's memory that writes through."""
    np = numpy()
    dtype = np.dtype(fmt)
    return np.asarray(_Memory(addr, n * dtype.itemsize, readonly, obj)).view(dtype)


def write_column(obj, addr, n, dtype, readonly, field, value, cls_name):
    if readonly:
        refuse_write(cls_name, field)
    column = view(obj, addr, n, dtype, False)[field]
    try:
        column[...] = value
    except (TypeError, ValueError) as e:
        raise type(e)(f"{cls_name}.{field}: {e} (value {value!r})") from None


def counted_items(value, capacity, field):
    """The items assigned to a counted array field (its count field is set to
    how many): a sequence of at most `capacity`."""
    if value is None or isinstance(value, (int, float, str, bytes, bytearray)):
        raise TypeError(f"{field}: expected a sequence of at most {capacity} items, got {type(value).__name__}")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{field}: expected a sequence of at most {capacity} items, "
                        f"got {type(value).__name__}") from None
    if len(items) > capacity:
        raise ValueError(f"{field}: at most {capacity} items, got {len(items)}")
    return items


def counted_bytes(value, capacity, field):
    """The bytes assigned to a counted byte array: a bytes-like object (a
    uint8 NumPy array too) or a sequence of numbers in 0..255, of at most
    `capacity` bytes."""
    if isinstance(value, str) or value is None or isinstance(value, (int, float)):
        raise TypeError(f"{field}: expected bytes or a sequence of numbers in 0..255, got {type(value).__name__}")
    try:
        data = bytes(memoryview(value).cast("B"))
    except TypeError:
        try:
            data = bytes(list(value))
        except (TypeError, ValueError) as e:
            raise type(e)(f"{field}: expected bytes or a sequence of numbers in 0..255 ({e})") from None
    if len(data) > capacity:
        raise ValueError(f"{field}: at most {capacity} bytes, got {len(data)}")
    return data

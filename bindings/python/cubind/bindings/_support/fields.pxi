# Fields of the struct classes that need more than a C assignment: numbers
# converted as cuda.bindings converts them, pointer fields (and what they keep
# alive), fields that point to arrays of structs or handles (Python lists), array
# fields (lists that write through), and the text of a struct.

from cpython.buffer cimport PyObject_CheckBuffer
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset


cdef object _ADDRESS_MAX = <uintptr_t>-1


# -- numbers

cdef object _refuse_number(object value, str name, str expected):
    raise TypeError(f"{name}: expected {expected}, got {type(value).__name__}")


cdef object _other_int(object value, str name):
    # __index__ (operator.index), then __int__ as cuda.bindings takes it (its
    # setters convert as int() does, without parsing text).
    if value is None or isinstance(value, (str, bytes, bytearray)):
        return _refuse_number(value, name, "an int")
    try:
        return _index(value)
    except TypeError:
        pass
    if hasattr(type(value), "__int__"):
        return int(value)
    return _refuse_number(value, name, "an int")


cdef object int_field(object value, str name):
    # The generated setters try the exact int first; this is the rest: a float
    # is truncated and anything with __index__ or __int__ converts (as
    # cuda.bindings does), a str, bytes or None is refused.
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return _other_int(value, name)


cdef object value_field(object value, str name):
    # Value types (CUdeviceptr, cuuint64_t): None is 0, as a NULL handle is.
    if value is None:
        return 0
    return int_field(value, name)


cdef object enum_field(object value, str name):
    # Converted as cuda.bindings 13.5 converts an enum field: a member keeps its
    # value (some enums have negative members); otherwise the value as int()
    # gives it (a float truncates), NaN, text and negative numbers are a
    # ValueError, numbers beyond 32 bits (and infinities) an OverflowError, and
    # None a TypeError. Unlike cuda.bindings, a value that is no member of the
    # field's enum is written (a value newer than these bindings' headers).
    if isinstance(value, int) and not type(value) is int and not isinstance(value, bool):
        return value
    if value is None:
        return _refuse_number(value, name, "an enum member or an int")
    if isinstance(value, float):
        if value != value:
            raise ValueError(f"{name}: NaN is not an enum value")
        if value in (float("inf"), float("-inf")):
            raise OverflowError(f"{name}: {value} is not an enum value")
        number = int(value)
    elif isinstance(value, (str, bytes, bytearray)):
        raise ValueError(f"{name}: expected an enum member or an int, got {type(value).__name__} {value!r}")
    else:
        try:
            number = _index(value)
        except TypeError:
            if not hasattr(type(value), "__int__"):
                return _refuse_number(value, name, "an enum member or an int")
            number = int(value)
    if number < 0:
        raise ValueError(f"{name}: {number} is not a value of this enum (a plain int cannot be negative)")
    if number > 0xFFFFFFFF:
        raise OverflowError(f"{name}: {number} does not fit an enum (32 bits)")
    return number


cdef double float_field(object value, str name) except? -1.0:
    if isinstance(value, float):
        return value
    if value is None or isinstance(value, (str, bytes, bytearray)):
        _refuse_number(value, name, "a float")
    return float(value)


cdef void* handle_field(object value, type cls, str name) except? NULL:
    # The common cases first: the handle's own class, None, a plain int.
    if type(value) is cls:
        return (<Handle>value)._value
    if value is None:
        return NULL
    if isinstance(value, float):
        value = int(value)
    if isinstance(value, int):
        if value < 0:
            raise OverflowError(f"{name}: a {cls.__name__} address cannot be negative ({value})")
        if value > _ADDRESS_MAX:
            raise OverflowError(f"{name}: {value} is too large for a {cls.__name__} address")
    elif isinstance(value, (str, bytes, bytearray)):
        _refuse_number(value, name, f"{cls.__name__}, an int or None")
    return handle_value(value, cls, name)


# -- pointer fields

cdef object _holder(Struct owner, str name):
    # What a pointer field keeps belongs to the outermost struct whose memory
    # holds the field: a view of a nested struct (params.memcpyBatch) may be
    # gone long before the struct the library is given. Keys of nested fields
    # carry the view's address, so that two nested structs' fields of one name
    # stay apart.
    cdef Struct root = owner
    while isinstance(root._owner, Struct):
        root = <Struct>root._owner
    if root is owner:
        return root, name
    return root, (<uintptr_t>owner._ptr, name)


cdef void keep(Struct owner, str name, object value):
    cdef Struct root
    root, key = _holder(owner, name)
    if root._refs is None:
        root._refs = {}
    if value is None:
        root._refs.pop(key, None)
    else:
        root._refs[key] = value


# The pointer fields below change what the struct keeps only once the new
# value is accepted: a refused value leaves the field and what it points at
# as they were.
cdef object address_number(object value, str name, bint truncate=False):
    # An address given as a number: a negative one is an OverflowError, as
    # cuda.bindings converts a pointer field; floats truncate where it
    # truncates them (kernel parameters' extra), and are refused elsewhere.
    if truncate and isinstance(value, float):
        value = int(value)
    if isinstance(value, int) and value < 0:
        raise OverflowError(f"{name}: an address cannot be negative ({value})")
    return value


cdef object _field_address_number(object value, str name):
    # A number written to a pointer field, converted as cuda.bindings 13.5
    # converts it: a finite float truncates toward zero, anything with __int__
    # converts, and a value outside 0..2**64-1 (or a NaN or infinity) is a
    # TypeError, as it is there, naming the field and the value.
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TypeError(f"{name}: {value} is not an address")
        value = int(value)
    elif not isinstance(value, int) and not isinstance(value, (str, bytes, bytearray, Handle, Struct)) \
            and not PyObject_CheckBuffer(value) and hasattr(type(value), "__int__") \
            and not hasattr(type(value), "__index__"):
        value = int(value)
    if isinstance(value, int) and not (0 <= value <= _ADDRESS_MAX):
        raise TypeError(f"{name}: {value} is not an address (0..{_ADDRESS_MAX})")
    return value


cdef void* field_address(object value, Struct owner, str name) except? NULL:
    cdef void* p
    if type(value) is not int or not (0 <= value <= _ADDRESS_MAX):
        value = _field_address_number(value, name)
    if not (value is None or isinstance(value, (int, Handle, Struct))) and PyObject_CheckBuffer(value):
        # The struct holds the buffer export until the field changes, so the
        # object cannot be resized under the pointer.
        pinned = _Pinned(value, name)
        keep(owner, name, pinned)
        return (<_Pinned>pinned).ref.view.buf
    p = plain_address(value, name)
    keep(owner, name, value if isinstance(value, Struct) else None)
    return p


cdef class _Pinned:
    """A buffer export held for as long as this object lives."""
    cdef BufferRef ref
    cdef object obj

    def __cinit__(self, obj, str name):
        self.ref.held = False
        address(obj, &self.ref, False, name)
        self.obj = obj

    def __dealloc__(self):
        release_address(&self.ref)


cdef class FieldArray:
    """The items a pointer field points to (structs or handles), copied into
    one C array that the struct keeps; views of its items keep it alive."""

    def __dealloc__(self):
        free(self.data)

    def __len__(self):
        return self.n


cdef list _sequence_items(object value, str name, str expected):
    # cuda.bindings takes a sequence here: None, a number or a str is a TypeError.
    if value is None or isinstance(value, (int, float, str, bytes, bytearray)):
        raise TypeError(f"{name}: expected {expected}, got {type(value).__name__}")
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{name}: expected {expected}, got {type(value).__name__}") from None


cdef list field_items(object value, Py_ssize_t n, str name):
    cdef list items = _sequence_items(value, name, f"a list of {n} items")
    if len(items) != n:
        raise ValueError(f"{name}: expected {n} items, got {len(items)}")
    return items


cdef void* struct_list_field(object value, type cls, size_t size, Struct owner, str name) except? NULL:
    cdef FieldArray array
    cdef Py_ssize_t i
    cdef list items
    cdef Py_ssize_t count
    expected = f"a list of {cls.__name__}"
    if isinstance(value, cls) and hasattr(type(value), "__len__") and len(value) != 1:
        # An array of structs (the NumPy layer's ProcessDetail_v1(2)): all of them.
        count = len(value)
        if count == 0:
            keep(owner, name, None)
            return NULL
        array = FieldArray.__new__(FieldArray)
        array.data = <char*>alloc_array(count, size)
        array.n = count
        memcpy(array.data, (<Struct>value)._ptr, count * size)
        keep(owner, name, array)
        return array.data
    if isinstance(value, cls):
        items = [value]
    elif isinstance(value, Struct):
        raise TypeError(f"{name}: expected {expected}, got {type(value).__name__}")
    else:
        items = _sequence_items(value, name, expected)
    for i in range(len(items)):
        struct_pointer_required(items[i], cls, f"{name}[{i}]")
    if not items:
        keep(owner, name, None)
        return NULL
    array = FieldArray.__new__(FieldArray)
    array.data = <char*>alloc_array(len(items), size)
    array.n = len(items)
    for i in range(array.n):
        memcpy(array.data + i * size, (<Struct>items[i])._ptr, size)
    keep(owner, name, array)
    return array.data


cdef void* handle_list_field(object value, type cls, Struct owner, str name) except? NULL:
    cdef FieldArray array
    cdef Py_ssize_t i
    cdef list items = _sequence_items(value, name, f"a list of {cls.__name__}")
    if not items:
        keep(owner, name, None)
        return NULL
    array = FieldArray.__new__(FieldArray)
    array.data = <char*>alloc_array(len(items), sizeof(void*))
    array.n = len(items)
    for i in range(array.n):
        (<void**>array.data)[i] = handle_field(items[i], cls, f"{name}[{i}]")
    keep(owner, name, array)
    return array.data


cdef object kept_array(Struct owner, str name, const void* current):
    # The array this struct made for the field, while the field still points
    # to it (the memory may have been written through another view).
    cdef Struct root
    if current == NULL:
        return None
    root, key = _holder(owner, name)
    if root._refs is None:
        return None
    array = root._refs.get(key)
    if isinstance(array, FieldArray) and <const void*>(<FieldArray>array).data == current:
        return array
    return None


# -- array fields

cdef object _element_in(object item, str fmt, str name):
    if fmt == "f" or fmt == "d":
        return float_field(item, name)
    number = int_field(item, name)
    if fmt == "b":
        # char arrays take bytes as -128..127 or as 0..255, as cuda.bindings does.
        if number < -128 or number > 255:
            raise OverflowError(f"{name}: {number} does not fit in a char (-128..255)")
        return number - 256 if number > 127 else number
    if fmt == "P":
        if number < 0:
            raise OverflowError(f"{name}: an address cannot be negative ({number})")
        return number
    return number


cdef int _store_number(void* ptr, Py_ssize_t itemsize, str fmt, object number) except -1:
    if fmt == "P":
        (<uintptr_t*>ptr)[0] = number
        return 0
    store_scalar(ptr, ord(fmt), number)
    return 0


cdef object _load(const void* ptr, str fmt):
    if fmt == "P":
        return (<const uintptr_t*>ptr)[0]
    return load_scalar(ptr, ord(fmt))


cdef class ArrayList(list):
    """An array field as a list: compares, prints and iterates as one, and an
    item assigned (l[i] = v) is written through to the struct as well."""

    def __setitem__(self, index, value):
        items = list(self)
        items[index] = value
        if len(items) != self._n:
            raise ValueError(f"{self._name}: expected {self._n} items, got {len(items)}")
        cdef Py_ssize_t i
        converted = [_element_in(items[i], self._fmt, f"{self._name}[{i}]") for i in range(self._n)]
        for i in range(self._n):
            _store_number(<char*>self._ptr + i * self._itemsize, self._itemsize, self._fmt, converted[i])
        loaded = [_load(<char*>self._ptr + i * self._itemsize, self._fmt) for i in range(self._n)]
        list.__setitem__(self, slice(None), loaded if self._wrap is None else [self._wrap(v) for v in loaded])

    def __delitem__(self, index):
        raise TypeError(f"{self._name}: an array field has a fixed length")

    def append(self, value):
        raise TypeError(f"{self._name}: an array field has a fixed length")

    def extend(self, values):
        raise TypeError(f"{self._name}: an array field has a fixed length")

    def __reduce__(self):
        return (list, (list(self),))


cdef object array_list(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object owner, str name,
                       object wrap=None):
    cdef ArrayList out
    if wrap is None:
        out = ArrayList([_load(<char*>ptr + i * itemsize, fmt) for i in range(n)])
    else:
        out = ArrayList([wrap(_load(<char*>ptr + i * itemsize, fmt)) for i in range(n)])
    out._wrap = wrap
    out._ptr = ptr
    out._n = n
    out._itemsize = itemsize
    out._fmt = fmt
    out._owner = owner
    out._name = name
    return out


cdef int array_assign(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object value, str name) except -1:
    cdef Py_ssize_t i
    items = _sequence_items(value, name, f"a list of {n} numbers")
    if len(items) != n:
        raise ValueError(f"{name}: expected {n} items, got {len(items)}")
    # Every item converts and is stored into a scratch copy before the field
    # changes: a refused list (an item out of its C type's range included)
    # leaves the field as it was.
    converted = [_element_in(items[i], fmt, f"{name}[{i}]") for i in range(n)]
    if n == 0:
        return 0
    cdef char* scratch = <char*>alloc_array(n, itemsize)
    try:
        for i in range(n):
            try:
                _store_number(scratch + i * itemsize, itemsize, fmt, converted[i])
            except OverflowError as e:
                raise OverflowError(f"{name}[{i}]: {converted[i]} does not fit ({e})") from None
        memcpy(ptr, scratch, n * itemsize)
    finally:
        free(scratch)
    return 0


cdef int char_array_assign(void* ptr, Py_ssize_t n, object value, bint text, str name) except -1:
    # bytes (or str) of exactly n bytes, or for text up to n (the rest zeroed);
    # else a list of n numbers in -128..255.
    cdef Py_ssize_t i
    if isinstance(value, (bytes, bytearray, memoryview, str)):
        data = value.encode() if isinstance(value, str) else bytes(value)
        if len(data) > n or (len(data) != n and not text):
            raise ValueError(f"{name}: expected {n} bytes, got {len(data)}")
        memset(ptr, 0, n)
        memcpy(ptr, <const char*>data, len(data))
        return 0
    return array_assign(ptr, n, 1, "b", value, name)


# -- text

cdef str struct_text(object obj, tuple fields):
    # As cuda.bindings prints a struct: `name : value` per field, nested
    # structs on the lines below their name, indented four spaces; pointers
    # in hex; enum members as their repr.
    lines = []
    for name, hexa in fields:
        try:
            value = getattr(obj, name)
        except Exception as e:
            lines.append(f"{name} : <{type(e).__name__}>")
            continue
        if isinstance(value, Struct):
            inner = str(value)
            lines.append(f"{name} :")
            lines.extend("    " + line for line in inner.splitlines())
        elif isinstance(value, list) and value and isinstance(value[0], Struct):
            # A list of structs: below its name, the items' lines joined by ", " inside [ ].
            inner = "[" + ", ".join(str(item) for item in value) + "]"
            lines.append(f"{name} :")
            lines.extend("    " + line for line in inner.splitlines())
        elif hexa and isinstance(value, int):
            lines.append(f"{name} : {value:#x}")
        elif isinstance(value, Enum):
            # An enum member as cuda.bindings 13.5 prints one: <Type.NAME: value>.
            lines.append(f"{name} : {value!r}")
        else:
            lines.append(f"{name} : {value}")
    return "\n".join(lines)

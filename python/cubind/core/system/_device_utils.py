"""Argument checks and conversions shared by the modules of cubind.core.system."""

from __future__ import annotations

import operator
from typing import Iterable, cast

from cubind.core.system import _nvml_values as V


def _choice(mapping, value, parameter, enum):
    """mapping[value], or an error that names the parameter, the value and the choices."""
    try:
        return mapping[value]
    except KeyError:
        choices = ", ".join(repr(member.value) for member in enum)
        raise ValueError(
            f"Invalid {parameter}: {value!r}. Must be one of the {enum.__name__} values: {choices}"
        ) from None
    except TypeError:
        raise TypeError(f"{parameter} must be a {enum.__name__} or str, got {type(value).__name__} {value!r}") from None


def _int(value, parameter):
    if isinstance(value, int):
        return value
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{parameter} must be an int, got {type(value).__name__} {value!r}") from None


def _unsigned(value, parameter):
    value = _int(value, parameter)
    if value < 0:
        raise OverflowError(f"{parameter} must be >= 0, got {value}")
    return value


def _pstate_to_int(pstate):
    if int(pstate) == V.PSTATE_UNKNOWN:
        return None
    return int(pstate) - V.PSTATE_0


def _pstate_to_enum(pstate):
    pstate = _int(pstate, "pstate")
    if not 0 <= pstate <= 15:
        raise ValueError(f"Invalid pstate: {pstate}. Must be between 0 and 15 inclusive (0 is P0, the fastest)")
    return pstate + V.PSTATE_0


def _unpack_bitmask(arr: object) -> list[int]:
    """The indices of the bits set in a sequence of 64-bit masks (bit j of
    element i is index 64 * i + j)."""
    found: list[int] = []
    for i, item in enumerate(cast("Iterable[int]", arr)):
        word = int(item)
        bit = 0
        while word:
            if word & 1:
                found.append(64 * i + bit)
            word >>= 1
            bit += 1
    return found


def _bits_to_members(mask, mapping, what):
    members = []
    for bit in _unpack_bitmask([mask]):
        try:
            members.append(mapping[1 << bit])
        except KeyError:
            raise ValueError(f"Unknown {what} bit: {1 << bit}") from None
    return members


def _enabled(state):
    return int(state) == V.FEATURE_ENABLED


def _address(struct):
    """The address of a bindings struct (``ptr``, or ``getPtr()`` in cuda.bindings'
    driver style)."""
    ptr = getattr(struct, "ptr", None)
    return int(ptr if ptr is not None else struct.getPtr())


def _element_address(array, index, size):
    """The address of element ``index`` of a struct array field: a list of
    struct views, or one object over the whole array."""
    if isinstance(array, (list, tuple)):
        return _address(array[index])
    return _address(array) + index * size


def _scalar(value):
    """A union member that the bindings give as a one-element array or as a number."""
    return value if isinstance(value, (int, float)) else value[0]


def _device_from_handle(handle):
    from cubind.core.system._device import Device  # imported here: _device imports this module

    device = Device.__new__(Device)
    device._handle = int(handle)
    return device


def _text(value, parameter):
    if isinstance(value, bytes):
        return value.decode("ascii")
    if isinstance(value, str):
        return value
    raise TypeError(f"{parameter} must be a str or bytes, got {type(value).__name__} {value!r}")


def _field_ids(field_ids):
    """field_ids as a list of ints and (int, int) pairs, or a TypeError naming the bad item."""
    try:
        items = list(field_ids)
    except TypeError:
        raise TypeError(
            f"field_ids must be a list of FieldId or (FieldId, scope_id) pairs, got {type(field_ids).__name__}"
        ) from None
    checked = []
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError(f"field_ids items must be a FieldId or a (FieldId, scope_id) pair, got {item!r}")
            checked.append((_int(item[0], "field_ids item"), _int(item[1], "field_ids scope id")))
        else:
            checked.append(_int(item, "field_ids item"))
    return checked

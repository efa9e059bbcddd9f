"""NVML field values (Device.get_field_values)."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system._device_utils import _scalar
from cubind.core.system.typing import FieldId


def _field_value_of(field_value):
    nvml.check_status(int(field_value.nvml_return))
    kind = int(field_value.value_type)
    value = field_value.value
    ValueType = nvml.ValueType
    if kind == ValueType.DOUBLE:
        return float(_scalar(value.d_val))
    readers = {
        ValueType.UNSIGNED_INT: "ui_val",
        ValueType.UNSIGNED_LONG: "ul_val",
        ValueType.UNSIGNED_LONG_LONG: "ull_val",
        ValueType.SIGNED_LONG_LONG: "sll_val",
        ValueType.SIGNED_INT: "si_val",
        ValueType.UNSIGNED_SHORT: "us_val",
    }
    try:
        name = readers[kind]
    except KeyError:
        raise ValueError(f"NVML returned a field value of unknown type {kind}") from None
    return int(_scalar(getattr(value, name)))


class FieldValue:
    """One field of :meth:`Device.get_field_values`."""

    def __init__(self, field_value: nvml.FieldValue):
        self._field_value = field_value

    @property
    def field_id(self) -> FieldId:
        """The field's identifier."""
        field_id = int(self._field_value.field_id)
        return FieldId(field_id) if FieldId is not None else field_id

    @property
    def scope_id(self) -> int:
        """The scope asked for (e.g. an NVLink number)."""
        return int(self._field_value.scope_id)

    @property
    def timestamp(self) -> int:
        """When the value was sampled, in microseconds since 1970 (CPU time)."""
        return int(self._field_value.timestamp)

    @property
    def latency_usec(self) -> int:
        """How long NVML took to update the value, in microseconds."""
        return int(self._field_value.latency_usec)

    @property
    def value(self) -> int | float:
        """The value; raises the NVML error of this field if NVML could not read it."""
        return _field_value_of(self._field_value)


class FieldValues:
    """The fields of one :meth:`Device.get_field_values` call, in the order asked."""

    def __init__(self, field_values: list[nvml.FieldValue]):
        self._field_values = field_values

    def __getitem__(self, idx: int) -> FieldValue:
        return FieldValue(self._field_values[idx])

    def __len__(self) -> int:
        return len(self._field_values)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def validate(self) -> None:
        """Raise the NVML error of the first field NVML could not read, if any."""
        for i in range(len(self)):
            nvml.check_status(int(self._field_values[i].nvml_return))

    def get_all_values(self) -> list[int | float]:
        """Every field's value, in order; raises the first field's NVML error."""
        return [field.value for field in self]

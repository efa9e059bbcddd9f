"""System events: GPUs bound to and unbound from the driver."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system import _device
from cubind.core.system._device_utils import _choice, _int, _unsigned
from cubind.core.system._nvml_context import initialize
from cubind.core.system.typing import SystemEventType

__all__ = ["register_events"]

_SYSTEM_EVENT_TYPE_MAPPING = {
    V.SYSTEM_EVENT_GPU_DRIVER_UNBIND: SystemEventType.UNBIND,
    V.SYSTEM_EVENT_GPU_DRIVER_BIND: SystemEventType.BIND,
}
_SYSTEM_EVENT_TYPE_INV_MAPPING = {member: bit for bit, member in _SYSTEM_EVENT_TYPE_MAPPING.items()}


def _pci_bus_id_from_gpu_id(gpu_id: int) -> str:
    """The PCI bus id NVML writes, ``"DDDDDDDD:BB:dd.0"``, of a system event's
    ``gpu_id`` (domain in the high 16 bits, then bus, then device)."""
    gpu_id = int(gpu_id) & 0xFFFFFFFF
    return f"{gpu_id >> 16:08X}:{(gpu_id >> 8) & 0xFF:02X}:{gpu_id & 0xFF:02X}.0"


class SystemEvent:
    """One system event."""

    def __init__(self, event_data: nvml.SystemEventData_v1):
        self._event_data = event_data

    @property
    def event_type(self) -> SystemEventType:
        """What happened (bind or unbind)."""
        return _SYSTEM_EVENT_TYPE_MAPPING[int(self._event_data.event_type)]

    @property
    def gpu_id(self) -> int:
        """The GPU's PCI location, packed (domain, bus, device)."""
        return int(self._event_data.gpu_id)

    @property
    def device(self) -> _device.Device:
        """The :class:`Device` the event is about."""
        return _device.Device(pci_bus_id=_pci_bus_id_from_gpu_id(self.gpu_id))


class SystemEvents:
    """The events one :meth:`RegisteredSystemEvents.wait` returned."""

    def __init__(self, event_data: list[nvml.SystemEventData_v1]):
        self._event_data = event_data

    def __len__(self) -> int:
        return len(self._event_data)

    def __getitem__(self, idx: int) -> SystemEvent:
        """The event at ``idx``."""
        return SystemEvent(self._event_data[idx])


class RegisteredSystemEvents:
    """System events recorded since :func:`register_events` (an NVML system
    event set, freed with this object)."""

    _event_set = 0

    def __init__(self, events: SystemEventType | str | list[SystemEventType | str]):
        if isinstance(events, str):
            events = [events]
        if not isinstance(events, list):
            raise TypeError(
                f"events must be a SystemEventType, str, or list of SystemEventType or str, got {type(events).__name__}"
            )
        mask = 0
        for event in events:
            mask |= _choice(_SYSTEM_EVENT_TYPE_INV_MAPPING, event, "event type", SystemEventType)
        initialize()
        self._event_set = nvml.system_event_set_create()
        nvml.system_register_events(mask, self._event_set)

    def __del__(self):
        event_set, self._event_set = self._event_set, 0
        if event_set:
            try:
                nvml.system_event_set_free(event_set)
            except Exception:  # noqa: BLE001 - NVML may be shut down at exit
                pass

    def wait(self, timeout_ms: int = 0, buffer_size: int = 1) -> SystemEvents:
        """Up to ``buffer_size`` events, waiting up to ``timeout_ms`` milliseconds
        for the first (0: without limit) (nvmlSystemEventSetWait).

        Raises
        ------
        cubind.core.system.TimeoutError
            No event came in time.
        """
        timeout_ms = _unsigned(timeout_ms, "timeout_ms")
        buffer_size = _int(buffer_size, "buffer_size")
        if buffer_size < 1:
            raise ValueError(f"buffer_size must be at least 1, got {buffer_size}")
        return SystemEvents(nvml.system_event_set_wait(self._event_set, timeout_ms, buffer_size))


def register_events(events: SystemEventType | str | list[SystemEventType | str]) -> RegisteredSystemEvents:
    """Start recording system events (Linux only): GPUs bound to or unbound
    from the driver (nvmlSystemEventSetCreate, nvmlSystemRegisterEvents).

    Raises
    ------
    cubind.core.system.NotSupportedError
        None of the events asked for can be recorded.
    """
    return RegisteredSystemEvents(events)

"""Device events (Device.register_events): the NVML event set and the events it delivers."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V

from cubind.core.system._device_utils import _choice, _device_from_handle, _unsigned
from cubind.core.system.typing import EventType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core.system._device import Device


_EVENT_TYPE_MAPPING = {getattr(V, "EVENT_" + member.name): member for member in EventType}


_EVENT_TYPE_INV_MAPPING = {member: bit for bit, member in _EVENT_TYPE_MAPPING.items()}


class EventData:
    """One event that :meth:`DeviceEvents.wait` returned."""

    def __init__(self, event_data: nvml.EventData):
        self._event_data = event_data

    def _xid_only(self, name):
        if int(self._event_data.event_type) != V.EVENT_XID_CRITICAL_ERROR:
            raise ValueError(
                f"{name} is only available for Xid critical error events; this event is {self.event_type!s}"
            )

    @property
    def device(self) -> Device:
        """The device the event happened on."""
        return _device_from_handle(self._event_data.device_)

    @property
    def event_type(self) -> EventType:
        """What happened."""
        return _EVENT_TYPE_MAPPING[int(self._event_data.event_type)]

    @property
    def event_data(self) -> int:
        """The Xid of an :attr:`EventType.XID_CRITICAL_ERROR` event; ValueError for
        other events."""
        self._xid_only("event_data")
        return self._event_data.event_data

    @property
    def gpu_instance_id(self) -> int:
        """The MIG GPU instance of an Xid event; ValueError for other events."""
        self._xid_only("gpu_instance_id")
        return self._event_data.gpu_instance_id

    @property
    def compute_instance_id(self) -> int:
        """The MIG compute instance of an Xid event; ValueError for other events."""
        self._xid_only("compute_instance_id")
        return self._event_data.compute_instance_id


class DeviceEvents:
    """Events recorded on one device since :meth:`Device.register_events`
    (an NVML event set, freed with this object)."""

    _event_set = 0

    def __init__(self, device_handle: int, events: EventType | str | list[EventType | str]):
        if isinstance(events, str):
            events = [events]
        if not isinstance(events, list):
            raise TypeError(
                f"events must be an EventType, str, or list of EventType or str, got {type(events).__name__}"
            )
        mask = 0
        for event in events:
            mask |= _choice(_EVENT_TYPE_INV_MAPPING, event, "event type", EventType)
        self._device_handle = device_handle
        self._event_set = nvml.event_set_create()
        nvml.device_register_events(device_handle, mask, self._event_set)

    def __del__(self):
        event_set, self._event_set = self._event_set, 0
        if event_set:
            try:
                nvml.event_set_free(event_set)
            except Exception:  # noqa: BLE001 - NVML may be shut down at exit
                pass

    def wait(self, timeout_ms: int = 0) -> EventData:
        """The next event, waiting up to ``timeout_ms`` milliseconds for one (0:
        without limit) (nvmlEventSetWait_v2).

        Raises
        ------
        cubind.core.system.TimeoutError
            No event came in time.
        cubind.core.system.GpuIsLostError
            The GPU fell off the bus.
        """
        timeout_ms = _unsigned(timeout_ms, "timeout_ms")
        return EventData(nvml.event_set_wait_v2(self._event_set, timeout_ms))

"""The enumerations of cubind.core.system's signatures: cuda.core 1.2's
``cuda.core.system.typing``.

Each enum but DeviceArch is a ``StrEnum`` whose members compare equal to the
strings the API also takes (``ClockType.SM == "sm"``); DeviceArch is an
``IntEnum`` ordered as the architectures are ("Ampere or newer" is
``arch >= DeviceArch.AMPERE``). FieldId is NVML's field identifiers, as
cubind.bindings.nvml defines them. Importing this module loads no library.
"""

from __future__ import annotations

import enum
import sys

from cubind.bindings import nvml as _nvml

from cubind.core.system import _nvml_values

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - Python 3.9 and 3.10

    class StrEnum(str, enum.Enum):
        def __str__(self):
            return str(self.value)


__all__ = [
    "AddressingMode",
    "AffinityScope",
    "ClockId",
    "ClockType",
    "ClocksEventReasons",
    "CoolerControl",
    "CoolerTarget",
    "DeviceArch",
    "EventType",
    "FanControlPolicy",
    "FieldId",
    "GpuP2PCapsIndex",
    "GpuP2PStatus",
    "GpuTopologyLevel",
    "InforomObject",
    "SystemEventType",
    "TemperatureThresholds",
    "ThermalController",
    "ThermalTarget",
]


class AddressingMode(StrEnum):
    """How system memory (malloc, mmap) is addressable from the device."""

    HMM = "hmm"
    ATS = "ats"


AddressingMode.HMM.__doc__ = "Heterogeneous memory management: the driver mirrors the CPU's page tables on the GPU."
AddressingMode.ATS.__doc__ = "Address translation services: the CPU and the GPU share one set of page tables."


class AffinityScope(StrEnum):
    """What an affinity query reports: NUMA nodes or CPU sockets."""

    NODE = "node"
    SOCKET = "socket"


AffinityScope.NODE.__doc__ = "NUMA nodes (the default scope)."
AffinityScope.SOCKET.__doc__ = "CPU sockets."


class ClockId(StrEnum):
    """Which value of a clock domain to read (with a :class:`ClockType`)."""

    CURRENT = "current"
    CUSTOMER_BOOST_MAX = "customer_boost_max"


ClockId.CURRENT.__doc__ = "The clock's current value."
ClockId.CUSTOMER_BOOST_MAX.__doc__ = "The maximum clock the board's maker allows."


class ClocksEventReasons(StrEnum):
    """Why the clocks are held below their maximum."""

    NONE = "none"
    GPU_IDLE = "gpu_idle"
    APPLICATIONS_CLOCKS_SETTING = "applications_clocks_setting"
    SW_POWER_CAP = "sw_power_cap"
    HW_SLOWDOWN = "hw_slowdown"
    SYNC_BOOST = "sync_boost"
    SW_THERMAL_SLOWDOWN = "sw_thermal_slowdown"
    HW_THERMAL_SLOWDOWN = "hw_thermal_slowdown"
    HW_POWER_BRAKE_SLOWDOWN = "hw_power_brake_slowdown"
    DISPLAY_CLOCK_SETTING = "display_clock_setting"
    BOARD_LIMIT = "board_limit"
    RELIABILITY = "reliability"


class ClockType(StrEnum):
    """Clock domains; every speed is in MHz."""

    GRAPHICS = "graphics"
    SM = "sm"
    MEMORY = "memory"
    VIDEO = "video"


class CoolerControl(StrEnum):
    """How a cooler is driven."""

    TOGGLE = "toggle"
    VARIABLE = "variable"


CoolerControl.TOGGLE.__doc__ = "On or off only."
CoolerControl.VARIABLE.__doc__ = "Adjustable between a minimum and a maximum."


class CoolerTarget(StrEnum):
    """What a cooler cools."""

    NONE = "none"
    GPU = "gpu"
    MEMORY = "memory"
    POWER_SUPPLY = "power_supply"


CoolerTarget.NONE.__doc__ = "Nothing."
CoolerTarget.GPU.__doc__ = "The GPU."
CoolerTarget.MEMORY.__doc__ = "The memory."
CoolerTarget.POWER_SUPPLY.__doc__ = "The power supply."


class EventType(StrEnum):
    """Device events that :meth:`Device.register_events` can record."""

    NONE = "none"
    SINGLE_BIT_ECC_ERROR = "single_bit_ecc_error"
    DOUBLE_BIT_ECC_ERROR = "double_bit_ecc_error"
    PSTATE = "pstate"
    XID_CRITICAL_ERROR = "xid_critical_error"
    CLOCK = "clock"
    POWER_SOURCE_CHANGE = "power_source_change"
    MIG_CONFIG_CHANGE = "mig_config_change"
    SINGLE_BIT_ECC_ERROR_STORM = "single_bit_ecc_error_storm"
    DRAM_RETIREMENT_EVENT = "dram_retirement_event"
    DRAM_RETIREMENT_FAILURE = "dram_retirement_failure"
    NON_FATAL_POISON_ERROR = "non_fatal_poison_error"
    FATAL_POISON_ERROR = "fatal_poison_error"
    GPU_UNAVAILABLE_ERROR = "gpu_unavailable_error"
    GPU_RECOVERY_ACTION = "gpu_recovery_action"


EventType.PSTATE.__doc__ = "The performance state changed (on older GPUs also a sign of throttling)."
EventType.XID_CRITICAL_ERROR.__doc__ = "A critical Xid error; the event's data is the Xid."


class FanControlPolicy(StrEnum):
    """Who sets a fan's speed."""

    TEMPERATURE_CONTROLLED = "temperature_controlled"
    MANUAL = "manual"


class GpuP2PCapsIndex(StrEnum):
    """The peer-to-peer capability :func:`get_p2p_status` asks about."""

    READ = "read"
    WRITE = "write"
    NVLINK = "nvlink"
    ATOMICS = "atomics"
    PCI = "pci"
    PROP = "prop"
    UNKNOWN = "unknown"


class GpuP2PStatus(StrEnum):
    """The answer of :func:`get_p2p_status`."""

    OK = "ok"
    CHIPSET_NOT_SUPPORTED = "chipset not supported"
    GPU_NOT_SUPPORTED = "GPU not supported"
    IOH_TOPOLOGY_NOT_SUPPORTED = "IOH topology not supported"
    DISABLED_BY_REGKEY = "disabled by regkey"
    NOT_SUPPORTED = "not supported"
    UNKNOWN = "unknown"


class GpuTopologyLevel(StrEnum):
    """How close two GPUs are, from the same board to across the system."""

    INTERNAL = "internal"
    SINGLE = "single"
    MULTIPLE = "multiple"
    HOSTBRIDGE = "hostbridge"
    NODE = "node"
    SYSTEM = "system"


GpuTopologyLevel.INTERNAL.__doc__ = "The same board (e.g. two GPUs of one card)."
GpuTopologyLevel.SINGLE.__doc__ = "Connected through one PCIe switch."
GpuTopologyLevel.MULTIPLE.__doc__ = "Connected through several PCIe switches, without the host bridge."
GpuTopologyLevel.HOSTBRIDGE.__doc__ = "Connected through the same host bridge."
GpuTopologyLevel.NODE.__doc__ = "Connected through host bridges of one NUMA node."
GpuTopologyLevel.SYSTEM.__doc__ = "Connected across NUMA nodes (e.g. over QPI/UPI)."


class InforomObject(StrEnum):
    """Objects stored in a board's InfoROM."""

    OEM = "oem"
    ECC = "ecc"
    POWER = "power"
    DEN = "den"


InforomObject.OEM.__doc__ = "The object the board's maker defines."
InforomObject.ECC.__doc__ = "The ECC object, which says the level of ECC support."
InforomObject.POWER.__doc__ = "The power management object."
InforomObject.DEN.__doc__ = "The DRAM encryption object."


class SystemEventType(StrEnum):
    """System events that :func:`register_events` can record."""

    UNBIND = "unbind"
    BIND = "bind"


SystemEventType.UNBIND.__doc__ = "A GPU was unbound from the driver."
SystemEventType.BIND.__doc__ = "A GPU was bound to the driver."


class TemperatureThresholds(StrEnum):
    """Temperature thresholds of :meth:`Temperature.get_threshold`."""

    SHUTDOWN = "shutdown"
    SLOWDOWN = "slowdown"
    MEM_MAX = "mem_max"
    GPU_MAX = "gpu_max"
    ACOUSTIC_MIN = "acoustic_min"
    ACOUSTIC_CURR = "acoustic_curr"
    ACOUSTIC_MAX = "acoustic_max"
    GPS_CURR = "gps_curr"


class ThermalController(StrEnum):
    """The chip that reads a thermal sensor."""

    GPU_INTERNAL = "gpu_internal"
    ADM1032 = "adm1032"
    ADT7461 = "adt7461"
    MAX6649 = "max6649"
    MAX1617 = "max1617"
    LM99 = "lm99"
    LM89 = "lm89"
    LM64 = "lm64"
    G781 = "g781"
    ADT7473 = "adt7473"
    SBMAX6649 = "sbmax6649"
    VBIOSEVT = "vbiosevt"
    OS = "os"
    NVSYSCON_CANOAS = "nvsyscon_canoas"
    NVSYSCON_E551 = "nvsyscon_e551"
    MAX6649R = "max6649r"
    ADT7473S = "adt7473s"
    UNKNOWN = "unknown"


class ThermalTarget(StrEnum):
    """What a thermal sensor measures."""

    NONE = "none"
    GPU = "gpu"
    MEMORY = "memory"
    POWER_SUPPLY = "power_supply"
    BOARD = "board"
    VCD_BOARD = "vcd_board"
    VCD_INLET = "vcd_inlet"
    VCD_OUTLET = "vcd_outlet"
    ALL = "all"


ThermalTarget.GPU.__doc__ = "The GPU core (a physical GPU's handle)."
ThermalTarget.MEMORY.__doc__ = "The GPU's memory (a physical GPU's handle)."
ThermalTarget.POWER_SUPPLY.__doc__ = "The GPU's power supply (a physical GPU's handle)."
ThermalTarget.BOARD.__doc__ = "The board's ambient temperature (a physical GPU's handle)."
ThermalTarget.VCD_BOARD.__doc__ = "A visual computing device's board."
ThermalTarget.VCD_INLET.__doc__ = "A visual computing device's inlet."
ThermalTarget.VCD_OUTLET.__doc__ = "A visual computing device's outlet."


DeviceArch = enum.IntEnum("DeviceArch", dict(_nvml_values.DEVICE_ARCH), module=__name__)
DeviceArch.__doc__ = "A device's architecture, in the order they came (NVML's values)."

# NVML's field identifiers, where the bindings group them into an enum.
FieldId = getattr(_nvml, "FieldId", None)
if FieldId is None:
    __all__.remove("FieldId")

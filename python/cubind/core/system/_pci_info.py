"""A device's PCI identity and link (Device.pci_info)."""

from __future__ import annotations

from cubind.bindings import nvml

from cubind.core.system import _nvml_values as V


class PciInfo:
    """A device's PCI identity and link (nvmlDeviceGetPciInfoExt, and one call per link query)."""

    def __init__(self, pci_info_ext: nvml.PciInfoExt_v1, handle: int):
        self._pci_info_ext = pci_info_ext
        self._handle = handle

    @property
    def bus(self) -> int:
        """The bus number, 0 to 255."""
        return self._pci_info_ext.bus

    @property
    def bus_id(self) -> str:
        """``"domain:bus:device.function"``, e.g. ``"00000000:3B:00.0"``."""
        return self._pci_info_ext.bus_id

    @property
    def device(self) -> int:
        """The device number on the bus, 0 to 31."""
        return self._pci_info_ext.device_

    @property
    def domain(self) -> int:
        """The PCI domain, 0 to 0xffffffff."""
        return self._pci_info_ext.domain

    @property
    def vendor_id(self) -> int:
        """The PCI vendor id (0x10de for NVIDIA)."""
        return self._pci_info_ext.pci_device_id & 0xFFFF

    @property
    def device_id(self) -> int:
        """The PCI device id."""
        return self._pci_info_ext.pci_device_id >> 16

    @property
    def subsystem_id(self) -> int:
        """The PCI subsystem id."""
        return self._pci_info_ext.pci_sub_system_id

    @property
    def base_class(self) -> int:
        """The 8-bit PCI base class code."""
        return self._pci_info_ext.base_class

    @property
    def sub_class(self) -> int:
        """The 8-bit PCI sub class code."""
        return self._pci_info_ext.sub_class

    @property
    def link_generation(self) -> int:
        """The highest PCIe generation this device and system allow together
        (nvmlDeviceGetMaxPcieLinkGeneration)."""
        return nvml.device_get_max_pcie_link_generation(self._handle)

    @property
    def max_link_generation(self) -> int:
        """The highest PCIe generation the GPU supports (nvmlDeviceGetGpuMaxPcieLinkGeneration)."""
        return nvml.device_get_gpu_max_pcie_link_generation(self._handle)

    @property
    def max_link_width(self) -> int:
        """The widest PCIe link this device and system allow together
        (nvmlDeviceGetMaxPcieLinkWidth)."""
        return nvml.device_get_max_pcie_link_width(self._handle)

    @property
    def current_link_generation(self) -> int:
        """The PCIe generation the link runs at now (nvmlDeviceGetCurrPcieLinkGeneration)."""
        return nvml.device_get_curr_pcie_link_generation(self._handle)

    @property
    def current_link_width(self) -> int:
        """The PCIe link's width now (nvmlDeviceGetCurrPcieLinkWidth)."""
        return nvml.device_get_curr_pcie_link_width(self._handle)

    @property
    def rx_throughput(self) -> int:
        """Bytes received over PCIe in the last 20 ms, in KB/s (nvmlDeviceGetPcieThroughput)."""
        return nvml.device_get_pcie_throughput(self._handle, V.PCIE_UTIL_RX_BYTES)

    @property
    def tx_throughput(self) -> int:
        """Bytes sent over PCIe in the last 20 ms, in KB/s (nvmlDeviceGetPcieThroughput)."""
        return nvml.device_get_pcie_throughput(self._handle, V.PCIE_UTIL_TX_BYTES)

    @property
    def replay_counter(self) -> int:
        """The PCIe replay counter (nvmlDeviceGetPcieReplayCounter)."""
        return nvml.device_get_pcie_replay_counter(self._handle)

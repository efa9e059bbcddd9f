"""Performance states and utilization (Device.dynamic_pstates_info, Device.utilization)."""

from __future__ import annotations

import ctypes

from cubind.bindings import nvml

from cubind.core.system._device_utils import _element_address, _int


class _GpuDynamicPstatesUtilizationStruct(ctypes.Structure):
    # One element of nvmlGpuDynamicPstatesInfo_t's utilization array.
    _fields_ = [
        ("bIsPresent", ctypes.c_uint),
        ("percentage", ctypes.c_uint),
        ("incThreshold", ctypes.c_uint),
        ("decThreshold", ctypes.c_uint),
    ]


class GpuDynamicPstatesUtilization:
    """One utilization domain of :attr:`Device.dynamic_pstates_info`, read where
    NVML wrote it (``ptr``, inside ``owner``, which this object keeps alive)."""

    def __init__(self, ptr: int, owner: object):
        self._owner = owner
        self._data = _GpuDynamicPstatesUtilizationStruct.from_address(ptr)

    @property
    def is_present(self) -> bool:
        """Whether the GPU has this domain."""
        return bool(self._data.bIsPresent)

    @property
    def percentage(self) -> int:
        """Percent of the last second the domain was busy."""
        return self._data.percentage

    @property
    def inc_threshold(self) -> int:
        """Utilization above which the GPU moves to a faster P-state."""
        return self._data.incThreshold

    @property
    def dec_threshold(self) -> int:
        """Utilization below which the GPU moves to a slower P-state."""
        return self._data.decThreshold


class GpuDynamicPstatesInfo:
    """The utilization domains that drive P-state changes (nvmlDeviceGetDynamicPstatesInfo)."""

    def __init__(self, gpu_dynamic_pstates_info: nvml.GpuDynamicPstatesInfo):
        self._gpu_dynamic_pstates_info = gpu_dynamic_pstates_info

    def __len__(self) -> int:
        return nvml.MAX_GPU_UTILIZATIONS

    def __getitem__(self, idx: int) -> GpuDynamicPstatesUtilization:
        idx = _int(idx, "idx")
        if not 0 <= idx < nvml.MAX_GPU_UTILIZATIONS:
            raise IndexError(f"GPU dynamic P-states index {idx} out of range [0, {nvml.MAX_GPU_UTILIZATIONS})")
        address = _element_address(self._gpu_dynamic_pstates_info.utilization, idx,
                                   ctypes.sizeof(_GpuDynamicPstatesUtilizationStruct))
        return GpuDynamicPstatesUtilization(address, self._gpu_dynamic_pstates_info)


class Utilization:
    """How busy a device was over NVML's last sample period (nvmlDeviceGetUtilizationRates)."""

    def __init__(self, utilization: nvml.Utilization):
        self._utilization = utilization

    @property
    def gpu(self) -> int:
        """Percent of the time one or more kernels ran."""
        return self._utilization.gpu

    @property
    def memory(self) -> int:
        """Percent of the time device memory was read or written."""
        return self._utilization.memory

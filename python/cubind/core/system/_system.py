"""System-wide NVML queries: driver and NVML versions, the device count, and
process names."""

from __future__ import annotations

import operator

from cubind.bindings import nvml

from cubind.core.system._nvml_context import initialize

# cuda.core says with this whether its cuda.bindings has the NVML bindings the
# rest of cuda.core.system needs; cubind.bindings always has them.
CUDA_BINDINGS_NVML_IS_COMPATIBLE = True

__all__ = [
    "get_driver_branch",
    "get_kernel_mode_driver_version",
    "get_user_mode_driver_version",
    "get_nvml_version",
    "get_num_devices",
    "get_process_name",
    "CUDA_BINDINGS_NVML_IS_COMPATIBLE",
]


def _version_tuple(text):
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def get_user_mode_driver_version() -> tuple[int, ...]:
    """The CUDA version of the installed driver, as ``(major, minor)``: ``(13, 0)``
    for CUDA 13.0 (nvmlSystemGetCudaDriverVersion_v2).

    This is the version that says which CUDA programs the driver can run.
    """
    initialize()
    version = nvml.system_get_cuda_driver_version_v2()
    return (version // 1000, (version % 1000) // 10)


def get_kernel_mode_driver_version() -> tuple[int, ...]:
    """The kernel-mode driver's version, e.g. ``(580, 65, 6)`` for 580.65.06
    (nvmlSystemGetDriverVersion); a 2-tuple on WSL.
    """
    initialize()
    return _version_tuple(nvml.system_get_driver_version())


def get_nvml_version() -> tuple[int, ...]:
    """The NVML library's version, e.g. ``(13, 580, 65, 6)``
    (nvmlSystemGetNVMLVersion)."""
    initialize()
    return _version_tuple(nvml.system_get_nvml_version())


def get_driver_branch() -> str:
    """The driver's branch, e.g. ``"r580_00"`` (nvmlSystemGetDriverBranch)."""
    initialize()
    return nvml.system_get_driver_branch()


def get_num_devices() -> int:
    """The number of GPUs NVML sees (nvmlDeviceGetCount_v2).

    NVML counts every GPU of the machine; CUDA_VISIBLE_DEVICES does not hide
    any, so this may exceed ``len(cubind.core.Device.get_all_devices())``.
    """
    initialize()
    return nvml.device_get_count_v2()


def get_process_name(pid: int) -> str:
    """The name of the process ``pid`` (nvmlSystemGetProcessName).

    Parameters
    ----------
    pid: int
        The process's identifier.
    """
    if isinstance(pid, bool) or not isinstance(pid, int):
        try:
            pid = operator.index(pid)
        except TypeError:
            raise TypeError(f"pid must be an int, got {type(pid).__name__} {pid!r}") from None
    if pid < 0:
        raise OverflowError(f"pid must be a process id (>= 0), got {pid}")
    initialize()
    return nvml.system_get_process_name(pid)

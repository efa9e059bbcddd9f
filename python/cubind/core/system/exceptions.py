"""NVML's exception classes, as cuda.core 1.2's ``cuda.core.system.exceptions``.

The classes themselves are cubind.bindings.nvml's: an error raised by any NVML
call, through cubind.core.system or cubind.bindings.nvml, is caught by the same
class. ``NvmlError`` is the base of all; each subclass is one ``nvmlReturn_t``
(``NotSupportedError`` is ``NVML_ERROR_NOT_SUPPORTED``). ``MemoryError`` and
``TimeoutError`` are NVML's, not Python's built-ins of the same names.
"""

from cubind.bindings import nvml

AlreadyInitializedError = nvml.AlreadyInitializedError
ArgumentVersionMismatchError = nvml.ArgumentVersionMismatchError
CorruptedInforomError = nvml.CorruptedInforomError
DeprecatedError = nvml.DeprecatedError
DriverNotLoadedError = nvml.DriverNotLoadedError
FreqNotSupportedError = nvml.FreqNotSupportedError
FunctionNotFoundError = nvml.FunctionNotFoundError
GpuIsLostError = nvml.GpuIsLostError
GpuNotFoundError = nvml.GpuNotFoundError
InUseError = nvml.InUseError
InsufficientPowerError = nvml.InsufficientPowerError
InsufficientResourcesError = nvml.InsufficientResourcesError
InsufficientSizeError = nvml.InsufficientSizeError
InvalidArgumentError = nvml.InvalidArgumentError
InvalidStateError = nvml.InvalidStateError
IrqIssueError = nvml.IrqIssueError
LibRmVersionMismatchError = nvml.LibRmVersionMismatchError
LibraryNotFoundError = nvml.LibraryNotFoundError
MemoryError = nvml.MemoryError
NoDataError = nvml.NoDataError
NoPermissionError = nvml.NoPermissionError
NotFoundError = nvml.NotFoundError
NotReadyError = nvml.NotReadyError
NotSupportedError = nvml.NotSupportedError
NvmlError = nvml.NvmlError
OperatingSystemError = nvml.OperatingSystemError
ResetRequiredError = nvml.ResetRequiredError
ResetTypeNotSupportedError = nvml.ResetTypeNotSupportedError
TimeoutError = nvml.TimeoutError
UninitializedError = nvml.UninitializedError
UnknownError = nvml.UnknownError
VgpuEccNotSupportedError = nvml.VgpuEccNotSupportedError

__all__ = [
    "AlreadyInitializedError",
    "ArgumentVersionMismatchError",
    "CorruptedInforomError",
    "DeprecatedError",
    "DriverNotLoadedError",
    "FreqNotSupportedError",
    "FunctionNotFoundError",
    "GpuIsLostError",
    "GpuNotFoundError",
    "InUseError",
    "InsufficientPowerError",
    "InsufficientResourcesError",
    "InsufficientSizeError",
    "InvalidArgumentError",
    "InvalidStateError",
    "IrqIssueError",
    "LibRmVersionMismatchError",
    "LibraryNotFoundError",
    "MemoryError",
    "NoDataError",
    "NoPermissionError",
    "NotFoundError",
    "NotReadyError",
    "NotSupportedError",
    "NvmlError",
    "OperatingSystemError",
    "ResetRequiredError",
    "ResetTypeNotSupportedError",
    "TimeoutError",
    "UninitializedError",
    "UnknownError",
    "VgpuEccNotSupportedError",
]

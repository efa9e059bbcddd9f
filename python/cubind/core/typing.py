"""Type aliases, protocols and enumerations of cubind.core's signatures.

The names and values of cuda.core 1.2's ``cuda.core.typing``: each enum is a
``StrEnum`` whose members compare equal to the strings the API also takes
(``SourceCodeType.CXX == "c++"``). Importing this module loads no CUDA library.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from enum import StrEnum as _StrEnum
else:  # pragma: no cover - Python 3.10
    from enum import Enum as _Enum

    class _StrEnum(str, _Enum):
        def __str__(self):
            return str(self.value)


TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core._type_aliases import DevicePointerType, DeviceResourcesType, IsStreamType, ProcessStateType

__all__ = [
    "AddressModeType",
    "ArrayFormatType",
    "CompilerBackendType",
    "DevicePointerType",
    "DeviceResourcesType",
    "FilterModeType",
    "GraphConditionalType",
    "GraphMemoryType",
    "IsStreamType",
    "ManagedMemoryLocationType",
    "ObjectCodeFormatType",
    "PCHStatusType",
    "ProcessStateType",
    "ReadModeType",
    "SourceCodeType",
    "VirtualMemoryAccessType",
    "VirtualMemoryAllocationType",
    "VirtualMemoryGranularityType",
    "VirtualMemoryHandleType",
    "VirtualMemoryLocationType",
    "WorkqueueSharingScopeType",
]


# The protocol and the aliases live in _type_aliases, imported at their first
# use here: they need the typing module and cubind.bindings.driver, which
# `import cubind.core` does not otherwise load.
_LAZY = ("DevicePointerType", "DeviceResourcesType", "IsStreamType", "ProcessStateType")


def __getattr__(name):
    if name in _LAZY:
        from cubind.core import _type_aliases

        value = getattr(_type_aliases, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


class SourceCodeType(_StrEnum):
    """The language of a Program's source: C++, PTX or NVVM IR."""

    CXX = "c++"
    PTX = "ptx"
    NVVM = "nvvm"


class ObjectCodeFormatType(_StrEnum):
    """What Program.compile and Linker.link produce."""

    PTX = "ptx"
    CUBIN = "cubin"
    LTOIR = "ltoir"
    FATBIN = "fatbin"
    OBJECT = "object"
    LIBRARY = "library"


class CompilerBackendType(_StrEnum):
    """The compiler behind a Program (Program.backend)."""

    NVRTC = "NVRTC"
    NVVM = "NVVM"
    NVJITLINK = "nvJitLink"
    DRIVER = "driver"


class PCHStatusType(_StrEnum):
    """What became of a precompiled header during a compile."""

    CREATED = "created"
    NOT_ATTEMPTED = "not_attempted"
    FAILED = "failed"


class GraphConditionalType(_StrEnum):
    """The kind of a conditional graph node."""

    IF = "if"
    WHILE = "while"
    SWITCH = "switch"


class GraphMemoryType(_StrEnum):
    """Where a graph's memory node allocates."""

    DEVICE = "device"
    HOST = "host"
    MANAGED = "managed"


class ManagedMemoryLocationType(_StrEnum):
    """Where managed memory is prefetched or advised to."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"


class VirtualMemoryHandleType(_StrEnum):
    """The operating-system handle a virtual memory allocation exports."""

    POSIX_FD = "posix_fd"
    WIN32_KMT = "win32_kmt"
    FABRIC = "fabric"


class VirtualMemoryLocationType(_StrEnum):
    """Where a virtual memory allocation's physical memory lives."""

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"
    HOST_NUMA_CURRENT = "host_numa_current"


class VirtualMemoryGranularityType(_StrEnum):
    """Which allocation granularity to ask for."""

    MINIMUM = "minimum"
    RECOMMENDED = "recommended"


class VirtualMemoryAccessType(_StrEnum):
    """The access a virtual memory mapping grants."""

    READ_WRITE = "rw"
    READ = "r"


class VirtualMemoryAllocationType(_StrEnum):
    """The kind of physical memory behind a virtual memory allocation."""

    PINNED = "pinned"
    MANAGED = "managed"


class ArrayFormatType(_StrEnum):
    """The element format of a CUDA array (CUarray_format)."""

    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    FLOAT16 = "float16"
    FLOAT32 = "float32"


class AddressModeType(_StrEnum):
    """What a texture read outside its bounds returns (CUaddress_mode)."""

    WRAP = "wrap"
    CLAMP = "clamp"
    MIRROR = "mirror"
    BORDER = "border"


class FilterModeType(_StrEnum):
    """How a texture is sampled (CUfilter_mode)."""

    POINT = "point"
    LINEAR = "linear"


class ReadModeType(_StrEnum):
    """Whether integer texels are read as they are or as normalised floats."""

    ELEMENT_TYPE = "element_type"
    NORMALIZED_FLOAT = "normalized_float"


class WorkqueueSharingScopeType(_StrEnum):
    """How a green context shares the device's work queues."""

    DEVICE_CTX = "device_ctx"
    GREEN_CTX_BALANCED = "green_ctx_balanced"

"""cubind.core: the pythonic layer of cubind, over its C++ core.

The public API of NVIDIA's cuda.core 1.2 (Device, Context and green contexts,
Stream, Event, Buffer, memory resources, Program, Linker, ObjectCode, Kernel,
LaunchConfig, launch),
so that code written for cuda.core runs by changing the import. What differs,
and why, is listed in docs/migration-from-cuda-core.md.

Importing cubind.core loads no CUDA library and imports no NumPy; the first
call that needs a library loads it.
"""

__version__ = "0.1.0"

# The cubind.bindings versions this cubind.core is built and tested with: the
# two subpackages are versioned apart (bindings follow the CUDA headers).
_BINDINGS_RANGE = ((13, 0), (14, 0))


def _check_bindings_version():
    from cubind.bindings import __version__ as bindings_version

    try:
        found = tuple(int(part) for part in bindings_version.split(".")[:2])
    except ValueError:
        found = None
    low, high = _BINDINGS_RANGE
    if found is None or not low <= found < high:
        raise ImportError(
            f"cubind.core {__version__} works with cubind.bindings >= {low[0]}.{low[1]} and < "
            f"{high[0]}.{high[1]}, but cubind.bindings {bindings_version} is installed; "
            "install matching versions of both"
        )


_check_bindings_version()
del _check_bindings_version

from cubind.core._options import (  # noqa: E402
    ContextOptions,
    DeviceMemoryResourceOptions,
    EventOptions,
    LinkerOptions,
    PinnedMemoryResourceOptions,
    ProgramOptions,
    SMResourceOptions,
    StreamOptions,
    WorkqueueResourceOptions,
)
from cubind.core._host import Host  # noqa: E402
from cubind.core._context import Context  # noqa: E402
from cubind.core._device import ComputeCapability, Device  # noqa: E402
from cubind.core._device_properties import DeviceProperties  # noqa: E402
from cubind.core._device_resources import DeviceResources, SMResource, WorkqueueResource  # noqa: E402
from cubind.core._errors import CUDAError, NVRTCError, NvJitLinkError  # noqa: E402
from cubind.core._event import Event  # noqa: E402
from cubind.core._graph._graph_builder import GraphMemoryResource  # noqa: E402
from cubind.core._launch import LaunchConfig, launch  # noqa: E402
from cubind.core._linker import Linker  # noqa: E402
from cubind.core._memory._buffer import Buffer, MemoryResource  # noqa: E402
from cubind.core._memory._ipc import IPCAllocationHandle, IPCBufferDescriptor, IPCEventDescriptor  # noqa: E402
from cubind.core._memory._managed import ManagedBuffer, ManagedMemoryResource  # noqa: E402
from cubind.core._memory._memory_pool import (  # noqa: E402
    DeviceMemoryResource,
    LegacyPinnedMemoryResource,
    PinnedMemoryResource,
)
from cubind.core._memory._virtual_memory import VirtualMemoryResource  # noqa: E402
from cubind.core._module import Kernel, ObjectCode  # noqa: E402
from cubind.core._program import Program  # noqa: E402
from cubind.core._stream import LEGACY_DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM, Stream  # noqa: E402
from cubind.core._tensor_map import TensorMapDescriptor  # noqa: E402
from cubind.core._tensor_map_options import TensorMapDescriptorOptions  # noqa: E402
# After the compiled modules: they import _memory_options, whose enums come
# from typing, which names their classes.
from cubind.core._memory_options import (  # noqa: E402
    ManagedMemoryResourceOptions,
    VirtualMemoryResourceOptions,
)

from cubind.core import graph  # noqa: E402

__all__ = [
    "LEGACY_DEFAULT_STREAM",
    "PER_THREAD_DEFAULT_STREAM",
    "Buffer",
    "CUDAError",
    "ComputeCapability",
    "Context",
    "ContextOptions",
    "Device",
    "DeviceMemoryResource",
    "DeviceMemoryResourceOptions",
    "DeviceProperties",
    "DeviceResources",
    "Event",
    "EventOptions",
    "GraphMemoryResource",
    "Host",
    "IPCAllocationHandle",
    "IPCBufferDescriptor",
    "IPCEventDescriptor",
    "Kernel",
    "LaunchConfig",
    "LegacyPinnedMemoryResource",
    "Linker",
    "LinkerOptions",
    "ManagedBuffer",
    "ManagedMemoryResource",
    "ManagedMemoryResourceOptions",
    "MemoryResource",
    "NVRTCError",
    "NvJitLinkError",
    "ObjectCode",
    "PinnedMemoryResource",
    "PinnedMemoryResourceOptions",
    "Program",
    "ProgramOptions",
    "SMResource",
    "SMResourceOptions",
    "Stream",
    "StreamOptions",
    "VirtualMemoryResource",
    "VirtualMemoryResourceOptions",
    "TensorMapDescriptor",
    "TensorMapDescriptorOptions",
    "WorkqueueResource",
    "WorkqueueResourceOptions",
    "graph",
    "launch",
]

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
from cubind.core._device_resources import DeviceResources, SMResource, WorkqueueResource  # noqa: E402
from cubind.core._errors import CUDAError, CUDAWarning, NVRTCError, NvJitLinkError  # noqa: E402
from cubind.core._event import Event  # noqa: E402
from cubind.core._launch import LaunchConfig, launch  # noqa: E402
from cubind.core._linker import Linker  # noqa: E402
from cubind.core._memory._buffer import Buffer, MemoryResource  # noqa: E402
from cubind.core._memory._ipc import IPCAllocationHandle, IPCBufferDescriptor, IPCEventDescriptor  # noqa: E402
from cubind.core._memory._memory_pool import (  # noqa: E402
    DeviceMemoryResource,
    LegacyPinnedMemoryResource,
    PinnedMemoryResource,
)
from cubind.core._module import Kernel, ObjectCode  # noqa: E402
from cubind.core._program import Program  # noqa: E402
from cubind.core._stream import LEGACY_DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM, Stream  # noqa: E402

# What only some programs use is imported at its first use (module
# __getattr__, PEP 562), so that `import cubind.core` loads neither it nor
# what it needs (graphs, tensor maps and strided views, managed and virtual
# memory, the device attribute table, textures, NVML's system view):
# `cubind.core.GraphMemoryResource`, `from cubind.core import *`,
# `import cubind.core.graph`, `cubind.core.texture` and
# `from cubind.core import system` all work as if it were imported here.
_LAZY = {
    "DeviceProperties": "cubind.core._device_properties",
    "GraphicsResource": "cubind.core._graphics",
    "GraphMemoryResource": "cubind.core._graph._graph_builder",
    "ManagedBuffer": "cubind.core._memory._managed",
    "ManagedMemoryResource": "cubind.core._memory._managed",
    "ManagedMemoryResourceOptions": "cubind.core._memory_options",
    "TensorMapDescriptor": "cubind.core._tensor_map",
    "TensorMapDescriptorOptions": "cubind.core._tensor_map_options",
    "VirtualMemoryResource": "cubind.core._memory._virtual_memory",
    "VirtualMemoryResourceOptions": "cubind.core._memory_options",
    "checkpoint": "cubind.core.checkpoint",
    "graph": "cubind.core.graph",
    "system": "cubind.core.system",
    "texture": "cubind.core.texture",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cubind.core import checkpoint, graph, system, texture
    from cubind.core._device_properties import DeviceProperties
    from cubind.core._graph._graph_builder import GraphMemoryResource
    from cubind.core._graphics import GraphicsResource
    from cubind.core._memory._managed import ManagedBuffer, ManagedMemoryResource
    from cubind.core._memory._virtual_memory import VirtualMemoryResource
    from cubind.core._memory_options import ManagedMemoryResourceOptions, VirtualMemoryResourceOptions
    from cubind.core._tensor_map import TensorMapDescriptor
    from cubind.core._tensor_map_options import TensorMapDescriptorOptions


def __getattr__(name):
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'cubind.core' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name)
    value = module if module_name == f"cubind.core.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "LEGACY_DEFAULT_STREAM",
    "PER_THREAD_DEFAULT_STREAM",
    "Buffer",
    "CUDAError",
    "CUDAWarning",
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
    "GraphicsResource",
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

"""The protocol and type aliases of cubind.core.typing, which imports this
module at their first use (see its __getattr__)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, TypeAlias, Union, runtime_checkable

from cubind.bindings.driver import CUdeviceptr
from cubind.core._device_resources import SMResource, WorkqueueResource


@runtime_checkable
class IsStreamType(Protocol):
    """Anything that names a CUDA stream through ``__cuda_stream__()``, which
    returns ``(version, address)``; cubind.core's calls that take a stream
    take one of these too."""

    def __cuda_stream__(self) -> tuple[int, int]: ...


# Shown, pickled and documented as cubind.core.typing's.
IsStreamType.__module__ = "cubind.core.typing"

DevicePointerType: TypeAlias = Union[CUdeviceptr, int, None]
DeviceResourcesType: TypeAlias = Sequence[Union[SMResource, WorkqueueResource]]
ProcessStateType: TypeAlias = Literal["running", "locked", "checkpointed", "failed"]

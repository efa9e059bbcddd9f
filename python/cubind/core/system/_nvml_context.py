"""NVML's initialization, once per process.

nvmlInit_v2 is called at the first query that needs it, never at import, so
that ``import cubind.core.system`` works on a machine without the NVIDIA
driver. A child made by fork() calls it again: NVML's state does not survive
a fork. A failed initialization is not remembered; each later query tries
again and raises the same clear error (where the library was looked for, or
which NVML error the driver gave).
"""

import os
import threading

from cubind.bindings import nvml

UNINITIALIZED = 0
INITIALIZED = 1

_state = UNINITIALIZED
_owner_pid = 0
_lock = threading.Lock()


def _get_nvml_state():
    """UNINITIALIZED (0) or INITIALIZED (1) for this process."""
    return INITIALIZED if is_initialized() else UNINITIALIZED


def is_initialized():
    """Whether NVML is initialized in this process."""
    return _state == INITIALIZED and _owner_pid == os.getpid()


def initialize():
    """Initialize NVML (nvmlInit_v2) unless this process already did."""
    if _state == INITIALIZED and _owner_pid == os.getpid():
        return
    _initialize()


def _initialize():
    global _state, _owner_pid
    with _lock:
        pid = os.getpid()
        if _state == INITIALIZED and _owner_pid == pid:
            return
        nvml.init_v2()
        _state = INITIALIZED
        _owner_pid = pid


def validate():
    """Check that NVML is initialized in this process and sees at least one GPU.

    Raises
    ------
    cubind.core.system.UninitializedError
        NVML has not been initialized in this process.
    cubind.core.system.GpuNotFoundError
        NVML sees no GPU.
    """
    if not is_initialized():
        nvml.check_status(int(nvml.Return.ERROR_UNINITIALIZED))
    if nvml.device_get_count_v2() == 0:
        nvml.check_status(int(nvml.Return.ERROR_GPU_NOT_FOUND))

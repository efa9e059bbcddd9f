# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
"""Checkpointing other CUDA processes (cubind::checkpoint::Process): lock one,
save its GPU memory to host memory, restore it (onto other GPUs if asked) and
unlock it, through the driver's cuCheckpointProcess* calls (CUDA 12.8, r570,
on Linux). As cuda.core.checkpoint: Process(pid) with lock, checkpoint,
restore, unlock, state and restore_thread_id."""

from collections.abc import Mapping

from libcpp.memory cimport unique_ptr
from libcpp.string cimport string

cimport cubind.core._cpp as cpp

from cubind.core._errors import CUDAError

__all__ = ["Process"]

_NOT_SUPPORTED = ("CUDA checkpointing is not supported by the installed NVIDIA driver. "
                  "Upgrade to a driver version with CUDA checkpoint API support.")
# CUDA_ERROR_NOT_FOUND and CUDA_ERROR_NOT_SUPPORTED: the driver has no
# checkpointing here; cuda.core raises RuntimeError for them, not CUDAError.
_UNSUPPORTED_STATUSES = (500, 801)
_STATE_NAMES = {
    <int>cpp.ProcessState.running: "running",
    <int>cpp.ProcessState.locked: "locked",
    <int>cpp.ProcessState.checkpointed: "checkpointed",
    <int>cpp.ProcessState.failed: "failed",
}

cdef bint _driver_checked = False


cdef int _require_driver(int pid, str operation) except -1:
    # Once per process: a driver older than CUDA 12.8 has no checkpoint calls.
    global _driver_checked
    if _driver_checked:
        return 0
    if not cpp.driver_supports_checkpoint():
        raise RuntimeError(f"{_NOT_SUPPORTED} (Process(pid={pid}).{operation}: the checkpoint API came in "
                           "CUDA 12.8, driver r570; this driver is older)")
    _driver_checked = True
    return 0


cdef object _refused(object error):
    # The driver's refusal, as cuda.core raises it: RuntimeError where it has
    # no checkpointing at all, else the CUDAError, whose message already
    # names the operation and the pid.
    if isinstance(error, CUDAError) and getattr(error, "status", None) in _UNSUPPORTED_STATUSES:
        return RuntimeError(f"{_NOT_SUPPORTED} ({error})")
    return error


cdef bytes _uuid_bytes(object value, str role):
    # A GPU UUID: its text ("GPU-" prefix and hyphens optional), 16 bytes, or
    # a CUuuid of cubind.bindings or cuda.bindings (its .bytes).
    if isinstance(value, str):
        return cpp.checkpoint_uuid_bytes(value.encode())
    raw = value if isinstance(value, (bytes, bytearray)) else getattr(value, "bytes", None)
    if isinstance(raw, (bytes, bytearray)) and len(raw) == 16:
        return bytes(raw)
    if isinstance(raw, (bytes, bytearray)):
        raise ValueError(f"Process.restore: the {role} GPU UUID {value!r} has {len(raw)} bytes; a GPU UUID has 16")
    raise TypeError(f"GPU UUID values must be CUDA UUID objects or UUID strings; the {role} GPU UUID is "
                    f"{type(value).__name__}")


cdef class Process:
    """Process(pid)
--

A CUDA process, named by pid, to lock, checkpoint, restore and unlock.

Locking blocks the process's further CUDA calls; checkpointing saves its GPU
memory to host memory and releases its GPUs; restoring brings it back (the
process stays locked); unlocking lets it run. The process must be one this
one may trace (the same user, or CAP_SYS_PTRACE); a refusal raises an error
naming the operation and the pid."""

    def __init__(self, pid):
        if isinstance(pid, bool) or not isinstance(pid, int):
            raise TypeError(f"Process: pid must be an int, not {type(pid).__name__}")
        if pid <= 0:
            raise ValueError(f"Process: pid must be a positive int, got {pid}")
        if pid > 2**31 - 1:
            raise ValueError(f"Process: pid must be a positive int of at most 2**31 - 1, got {pid}")
        self._pid = pid
        self._cpp.reset(new cpp.Process(<int>pid))

    @property
    def pid(self):
        """Process ID of the CUDA process."""
        return self._pid

    @property
    def state(self):
        """The process's checkpoint state (cuCheckpointProcessGetState):
        "running", "locked", "checkpointed" or "failed"."""
        cdef cpp.ProcessState state
        _require_driver(self._pid, "state")
        try:
            with nogil:
                state = self._cpp.get().state()
        except CUDAError as error:
            raise _refused(error) from None
        name = _STATE_NAMES.get(<int>state)
        if name is None:
            raise RuntimeError(f"Unknown CUDA checkpoint process state: {<int>state} (Process(pid={self._pid}).state; "
                               "the driver is newer than cubind's CUDA headers)")
        return name

    @property
    def restore_thread_id(self):
        """The id of the thread that restores the process (cuCheckpointProcessGetRestoreThreadId)."""
        cdef int tid = 0
        _require_driver(self._pid, "restore_thread_id")
        try:
            with nogil:
                tid = self._cpp.get().restore_thread_id()
        except CUDAError as error:
            raise _refused(error) from None
        return tid

    def lock(self, timeout_ms=0):
        """Blocks the process's further CUDA calls (cuCheckpointProcessLock),
        waiting up to timeout_ms milliseconds for its work in flight; 0 waits
        without limit."""
        cdef unsigned int timeout
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
            raise TypeError(f"Process.lock: timeout_ms must be an int, not {type(timeout_ms).__name__}")
        if timeout_ms < 0:
            raise ValueError(f"Process.lock: timeout_ms must be >= 0, got {timeout_ms}")
        if timeout_ms > 2**32 - 1:
            raise ValueError(f"Process.lock: timeout_ms is {timeout_ms}; it must be at most 2**32 - 1 (about 49 days)")
        timeout = timeout_ms
        _require_driver(self._pid, "lock")
        try:
            with nogil:
                self._cpp.get().lock(timeout)
        except CUDAError as error:
            raise _refused(error) from None

    def checkpoint(self):
        """Saves the GPU memory of the locked process to host memory and
        releases its GPUs (cuCheckpointProcessCheckpoint)."""
        _require_driver(self._pid, "checkpoint")
        try:
            with nogil:
                self._cpp.get().checkpoint()
        except CUDAError as error:
            raise _refused(error) from None

    def restore(self, gpu_mapping=None):
        """Restores the checkpointed process (cuCheckpointProcessRestore); it
        stays locked. gpu_mapping maps each checkpointed GPU's UUID to the UUID
        of the GPU to restore onto (strings as Device.uuid gives them, or
        CUuuid objects); a remapping must name every GPU the kernel-mode
        driver sees, whatever CUDA_VISIBLE_DEVICES says."""
        cdef string pairs
        if gpu_mapping is not None and not isinstance(gpu_mapping, Mapping):
            raise TypeError("gpu_mapping must be a mapping from checkpointed GPU UUID to restore GPU UUID, not "
                            f"{type(gpu_mapping).__name__}")
        if gpu_mapping:
            pairs = b"".join(_uuid_bytes(old, "checkpointed") + _uuid_bytes(new, "restore")
                             for old, new in gpu_mapping.items())
        _require_driver(self._pid, "restore")
        try:
            with nogil:
                cpp.checkpoint_restore(self._cpp.get()[0], pairs)
        except CUDAError as error:
            raise _refused(error) from None

    def unlock(self):
        """Lets the locked process run its CUDA calls again (cuCheckpointProcessUnlock)."""
        _require_driver(self._pid, "unlock")
        try:
            with nogil:
                self._cpp.get().unlock()
        except CUDAError as error:
            raise _refused(error) from None

    def __reduce__(self):
        return Process, (self._pid,)

    def __repr__(self):
        return f"<Process pid={self._pid}>"

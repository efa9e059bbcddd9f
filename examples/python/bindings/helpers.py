"""Helpers shared by the samples, written the way cuda.bindings programs write them.

Only `cuda.bindings` is imported: run through ../run_example.py, the same text
runs on NVIDIA's cuda.bindings or on cubind.bindings.
"""

import os
import sys
from typing import Any, NoReturn, Sequence

from cuda.bindings import driver, nvrtc, runtime


def _error_name(status: object) -> str:
    if isinstance(status, driver.CUresult):
        err, name = driver.cuGetErrorName(status)
        return name.decode() if err == driver.CUresult.CUDA_SUCCESS and name is not None else "<unknown>"
    if isinstance(status, runtime.cudaError_t):
        return (runtime.cudaGetErrorName(status)[1] or b"<unknown>").decode()
    if isinstance(status, nvrtc.nvrtcResult):
        return (nvrtc.nvrtcGetErrorString(status)[1] or b"<unknown>").decode()
    raise RuntimeError(f"not a CUDA status: {status!r}")


def checkCudaErrors(result: tuple[Any, ...]) -> Any:
    """Raises on a failed (status, *outputs) tuple; returns None, the one output or the rest."""
    status = result[0]
    if status.value:
        raise RuntimeError(f"CUDA error {status.value} ({_error_name(status)})")
    if len(result) == 1:
        return None
    if len(result) == 2:
        return result[1]
    return result[1:]


def skip(reason: object) -> NoReturn:
    """Ends a sample that cannot run here; a missing GPU or feature is not a failure."""
    # One line, also when the reason is a loader's multi-line message.
    reason = " ".join(line.strip() for line in str(reason).splitlines() if line.strip())
    print(f"{reason}; skipped")
    sys.exit(0)


def findCudaDevice(min_count: int = 1) -> Any:
    """Initialises the driver and returns device 0, or ends the sample with a 'no GPU' line."""
    try:
        err, = driver.cuInit(0)
    except (RuntimeError, OSError) as exc:
        # The driver library itself is missing: a machine without an NVIDIA driver.
        skip(f"no GPU: {exc}")
    if err != driver.CUresult.CUDA_SUCCESS:
        skip(f"no GPU: cuInit returned {_error_name(err)}")
    err, count = driver.cuDeviceGetCount()
    if err != driver.CUresult.CUDA_SUCCESS or count == 0:
        skip("no GPU: the driver reports no CUDA device")
    if count < min_count:
        skip(f"needs {min_count} GPUs, this machine has {count}")
    device = checkCudaErrors(driver.cuDeviceGet(0))
    name = checkCudaErrors(driver.cuDeviceGetName(128, device))
    name = name.split(b"\0")[0].decode()
    print(f"GPU device 0: {name}")
    return device


def compute_capability(device: Any) -> str:
    major = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    minor = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    return f"{major}{minor}"


def cuda_include_dirs() -> list[str]:
    """Where NVRTC finds cooperative_groups.h and, since CUDA 13 under include/cccl, libcu++."""
    root = "/usr/local/cuda"
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var) and os.path.isdir(os.path.join(os.environ[var], "include")):
            root = os.environ[var]
            break
    include = os.path.join(root, "include")
    return [d for d in (include, os.path.join(include, "cccl")) if os.path.isdir(d)]


def compile_ptx(source: str, name: str, arch: str, options: Sequence[str] = (),
                name_expressions: Sequence[str] = ()) -> tuple[bytes, dict[str, Any]]:
    """Compiles CUDA C++ with NVRTC for compute_<arch> and returns (ptx, lowered names).

    `arch` is the compute capability without a dot ("90"). The PTX and log
    buffers are `bytes` objects of the size NVRTC reports, filled in place.
    """
    err, prog = nvrtc.nvrtcCreateProgram(str.encode(source), str.encode(name), 0, [], [])
    checkCudaErrors((err,))
    for expression in name_expressions:
        checkCudaErrors(nvrtc.nvrtcAddNameExpression(prog, str.encode(expression)))
    opts = [f"--gpu-architecture=compute_{arch}".encode(), b"--std=c++17"]
    opts += [f"--include-path={d}".encode() for d in cuda_include_dirs()]
    opts += [str.encode(o) for o in options]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        logSize = checkCudaErrors(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * logSize
        checkCudaErrors(nvrtc.nvrtcGetProgramLog(prog, log))
        raise RuntimeError(f"NVRTC could not compile {name}:\n{log.decode(errors='replace')}")
    lowered: dict[str, Any] = {}
    for expression in name_expressions:
        lowered[expression] = checkCudaErrors(nvrtc.nvrtcGetLoweredName(prog, str.encode(expression)))
    ptxSize = checkCudaErrors(nvrtc.nvrtcGetPTXSize(prog))
    ptx = b" " * ptxSize
    checkCudaErrors(nvrtc.nvrtcGetPTX(prog, ptx))
    checkCudaErrors(nvrtc.nvrtcDestroyProgram(prog))
    return ptx, lowered


def load_module(ptx: bytes, *names: str) -> tuple[Any, list[Any]]:
    """Loads PTX into the current context; returns the module and the named kernels."""
    module = checkCudaErrors(driver.cuModuleLoadData(ptx))
    kernels = [checkCudaErrors(driver.cuModuleGetFunction(module, str.encode(n))) for n in names]
    return module, kernels

"""A fat binary built with nvFatbin: one kernel compiled by NVRTC to PTX for
compute_75 and to a cubin for the device's own architecture, packed into one fat
binary, which the driver loads with cuModuleLoadData and picks the cubin from
(the PTX would serve a newer GPU); the kernel squares a vector, checked on the host."""

import ctypes
import sys

from cuda.bindings import driver, nvfatbin, nvrtc

from helpers import checkCudaErrors, compute_capability, findCudaDevice

N = 2048
THREADS = 128
PTX_ARCH = "75"

KERNEL_SOURCE = """
extern "C" __global__ void square(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}
"""


def nvrtc_compile(arch_option: str, cubin: bool) -> bytes:
    """KERNEL_SOURCE through NVRTC: PTX, or with cubin=True the cubin of an sm_ arch."""
    err, prog = nvrtc.nvrtcCreateProgram(str.encode(KERNEL_SOURCE), b"square.cu", 0, [], [])
    checkCudaErrors((err,))
    opts = [str.encode(arch_option)]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        logSize = checkCudaErrors(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * logSize
        checkCudaErrors(nvrtc.nvrtcGetProgramLog(prog, log))
        raise RuntimeError(f"NVRTC could not compile square.cu:\n{log.decode(errors='replace')}")
    size: int = checkCudaErrors(nvrtc.nvrtcGetCUBINSize(prog) if cubin else nvrtc.nvrtcGetPTXSize(prog))
    code = b" " * size
    checkCudaErrors(nvrtc.nvrtcGetCUBIN(prog, code) if cubin else nvrtc.nvrtcGetPTX(prog, code))
    checkCudaErrors(nvrtc.nvrtcDestroyProgram(prog))
    return code


def compile_kernels(arch: str) -> bytes:
    """The fat binary: PTX for compute_75 and a cubin for sm_<arch>."""
    ptx = nvrtc_compile(f"--gpu-architecture=compute_{PTX_ARCH}", cubin=False)
    cubin = nvrtc_compile(f"--gpu-architecture=sm_{arch}", cubin=True)
    handle = nvfatbin.create([], 0)
    try:
        nvfatbin.add_ptx(handle, ptx, len(ptx), PTX_ARCH, "square.ptx", "")
        nvfatbin.add_cubin(handle, cubin, len(cubin), arch, "square.cubin")
        fatbin = bytearray(nvfatbin.size(handle))
        nvfatbin.get(handle, fatbin)
    finally:
        nvfatbin.destroy(handle)
    return bytes(fatbin)


def main() -> None:
    major, minor = nvfatbin.version()
    print(f"nvFatbin {major}.{minor}")
    device = findCudaDevice()
    context = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    fatbin = compile_kernels(compute_capability(device))
    print(f"fat binary of {len(fatbin)} bytes")
    module = checkCudaErrors(driver.cuModuleLoadData(fatbin))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"square"))

    hin = (ctypes.c_int * N)(*range(-N // 2, N // 2))
    din = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(hin)))
    dout = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(hin)))
    checkCudaErrors(driver.cuMemcpyHtoD(din, hin, ctypes.sizeof(hin)))
    args = ((din, dout, N), (None, None, ctypes.c_int))
    blocks = (N + THREADS - 1) // THREADS
    checkCudaErrors(driver.cuLaunchKernel(kernel, blocks, 1, 1, THREADS, 1, 1, 0, 0, args, 0))
    checkCudaErrors(driver.cuCtxSynchronize())
    hout = (ctypes.c_int * N)()
    checkCudaErrors(driver.cuMemcpyDtoH(hout, dout, ctypes.sizeof(hout)))

    checkCudaErrors(driver.cuMemFree(din))
    checkCudaErrors(driver.cuMemFree(dout))
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(context))

    wrong = [i for i in range(N) if hout[i] != hin[i] * hin[i]]
    if wrong:
        print(f"nvfatbin_build: FAILED: {len(wrong)} wrong values, first at {wrong[0]}")
        sys.exit(1)
    print(f"nvfatbin_build: {N} squares from the fat binary's kernel verified; PASSED")


if __name__ == "__main__":
    main()

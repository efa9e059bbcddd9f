"""Vector addition through the driver API: NVRTC to PTX, a context made with
cuCtxCreate, cuMemAlloc, cuMemcpyHtoD, and cuLaunchKernel with the arguments
passed as a NumPy array of pointers to NumPy scalars."""

import sys
from typing import Any

import numpy as np
from cuda.bindings import driver

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

KERNEL_SOURCE = """
extern "C" __global__ void VecAdd_kernel(const float *A, const float *B, float *C, int N)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < N)
        C[i] = A[i] + B[i];
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "vectorAdd_kernel.cu", arch)[0]


def main() -> None:
    N = 50000
    device = findCudaDevice()
    cuContext = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    ptx = compile_kernels(compute_capability(device))
    module = checkCudaErrors(driver.cuModuleLoadData(ptx))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"VecAdd_kernel"))

    rng = np.random.default_rng(1)
    h_A = rng.random(N, dtype=np.float32)
    h_B = rng.random(N, dtype=np.float32)
    h_C = np.zeros(N, dtype=np.float32)
    size = N * np.dtype(np.float32).itemsize

    d_A = checkCudaErrors(driver.cuMemAlloc(size))
    d_B = checkCudaErrors(driver.cuMemAlloc(size))
    d_C = checkCudaErrors(driver.cuMemAlloc(size))
    checkCudaErrors(driver.cuMemcpyHtoD(d_A, h_A, size))
    checkCudaErrors(driver.cuMemcpyHtoD(d_B, h_B, size))

    threadsPerBlock = 256
    # A float, as the C sample's integer division reads in Python; the binding
    # truncates it to an unsigned int, which rounds the ceiling division down.
    blocksPerGrid = (N + threadsPerBlock - 1) // threadsPerBlock

    dA = np.array([int(d_A)], dtype=np.uint64)
    dB = np.array([int(d_B)], dtype=np.uint64)
    dC = np.array([int(d_C)], dtype=np.uint64)
    n = np.array(N, dtype=np.uint32)
    values: list[Any] = [dA, dB, dC, n]
    args = np.array([arg.ctypes.data for arg in values], dtype=np.uint64)

    checkCudaErrors(driver.cuLaunchKernel(kernel,
                                          blocksPerGrid, 1, 1,
                                          threadsPerBlock, 1, 1,
                                          0, 0,
                                          args.ctypes.data, 0))
    checkCudaErrors(driver.cuCtxSynchronize())
    checkCudaErrors(driver.cuMemcpyDtoH(h_C, d_C, size))

    expected = h_A + h_B
    bad = np.flatnonzero(np.abs(h_C - expected) > 1e-6)

    checkCudaErrors(driver.cuMemFree(d_A))
    checkCudaErrors(driver.cuMemFree(d_B))
    checkCudaErrors(driver.cuMemFree(d_C))
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(cuContext))

    if bad.size:
        i = bad[0]
        print(f"vectorAddDrv: FAILED: {bad.size} wrong sums, C[{i}] = {h_C[i]}, expected {expected[i]}")
        sys.exit(1)
    print(f"vectorAddDrv: {N} sums verified; PASSED")


if __name__ == "__main__":
    main()

"""Stream-ordered allocation: cudaMallocAsync and cudaFreeAsync on a stream made
with cudaStreamCreateWithFlags, then the device's default memory pool kept from
giving memory back between iterations by its release threshold."""

import ctypes
import random
import sys
from typing import Any

from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice, skip

KERNEL_SOURCE = """
extern "C" __global__ void vectorAddGPU(const float *a, const float *b, float *c, int N)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N)
        c[idx] = a[idx] + b[idx];
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "streamOrderedAllocation_kernel.cu", arch)[0]


def run_once(kernel: Any, stream: Any, a: Any, b: Any, c: Any, nelem: int) -> None:
    """One round of allocate, copy in, add, copy out and free, all ordered on `stream`."""
    nbytes = nelem * ctypes.sizeof(ctypes.c_float)
    d_a = checkCudaErrors(runtime.cudaMallocAsync(nbytes, stream))
    d_b = checkCudaErrors(runtime.cudaMallocAsync(nbytes, stream))
    d_c = checkCudaErrors(runtime.cudaMallocAsync(nbytes, stream))
    checkCudaErrors(runtime.cudaMemcpyAsync(d_a, a, nbytes, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice, stream))
    checkCudaErrors(runtime.cudaMemcpyAsync(d_b, b, nbytes, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice, stream))
    block = 256
    grid = (nelem + block - 1) // block
    kernelArgs = ((d_a, d_b, d_c, nelem),
                  (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int))
    checkCudaErrors(driver.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, stream, kernelArgs, 0))
    checkCudaErrors(runtime.cudaFreeAsync(d_a, stream))
    checkCudaErrors(runtime.cudaFreeAsync(d_b, stream))
    checkCudaErrors(runtime.cudaMemcpyAsync(c, d_c, nbytes, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost, stream))
    checkCudaErrors(runtime.cudaFreeAsync(d_c, stream))
    checkCudaErrors(runtime.cudaStreamSynchronize(stream))


def count_errors(a: Any, b: Any, c: Any, nelem: int) -> int:
    return sum(1 for i in range(nelem) if c[i] != ctypes.c_float(a[i] + b[i]).value)


def main() -> None:
    device = findCudaDevice()
    pools = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, device))
    if not pools:
        skip("device 0 does not support memory pools (cudaMallocAsync)")
    checkCudaErrors(runtime.cudaSetDevice(0))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"vectorAddGPU"))

    nelem = 1 << 18
    nbytes = nelem * ctypes.sizeof(ctypes.c_float)
    # Pinned host buffers, so the asynchronous copies are asynchronous.
    a_ptr = checkCudaErrors(runtime.cudaMallocHost(nbytes))
    b_ptr = checkCudaErrors(runtime.cudaMallocHost(nbytes))
    c_ptr = checkCudaErrors(runtime.cudaMallocHost(nbytes))
    a = (ctypes.c_float * nelem).from_address(a_ptr)
    b = (ctypes.c_float * nelem).from_address(b_ptr)
    c = (ctypes.c_float * nelem).from_address(c_ptr)
    rng = random.Random(11)
    for i in range(nelem):
        a[i] = rng.random()
        b[i] = rng.random()

    stream = checkCudaErrors(runtime.cudaStreamCreateWithFlags(runtime.cudaStreamNonBlocking))

    # Basic: every round's memory goes back to the pool at its cudaFreeAsync.
    run_once(kernel, stream, a_ptr, b_ptr, c_ptr, nelem)
    errors = count_errors(a, b, c, nelem)
    print(f"basicStreamOrderedAllocation: {'PASSED' if errors == 0 else 'FAILED'}")

    # With a release threshold as high as it goes, the pool keeps what it reserved
    # across synchronisations, so later rounds reuse memory instead of asking the OS.
    memPool = checkCudaErrors(runtime.cudaDeviceGetDefaultMemPool(0))
    thresholdVal = driver.cuuint64_t(0xFFFFFFFFFFFFFFFF)
    checkCudaErrors(runtime.cudaMemPoolSetAttribute(
        memPool, runtime.cudaMemPoolAttr.cudaMemPoolAttrReleaseThreshold, thresholdVal))
    for _ in range(10):
        for i in range(0, nelem, 4096):
            c[i] = -1.0
        run_once(kernel, stream, a_ptr, b_ptr, c_ptr, nelem)
    reserved = checkCudaErrors(runtime.cudaMemPoolGetAttribute(
        memPool, runtime.cudaMemPoolAttr.cudaMemPoolAttrReservedMemCurrent))
    errors2 = count_errors(a, b, c, nelem)
    kept = int(reserved) >= 3 * nbytes
    print(f"streamOrderedAllocationPostSync: reserved {int(reserved)} bytes after the last round; "
          f"{'PASSED' if errors2 == 0 and kept else 'FAILED'}")

    # Leave the pool as other programs expect it.
    checkCudaErrors(runtime.cudaMemPoolSetAttribute(
        memPool, runtime.cudaMemPoolAttr.cudaMemPoolAttrReleaseThreshold, driver.cuuint64_t(0)))
    checkCudaErrors(runtime.cudaMemPoolTrimTo(memPool, 0))
    checkCudaErrors(runtime.cudaStreamDestroy(stream))
    checkCudaErrors(runtime.cudaFreeHost(a_ptr))
    checkCudaErrors(runtime.cudaFreeHost(b_ptr))
    checkCudaErrors(runtime.cudaFreeHost(c_ptr))
    checkCudaErrors(driver.cuModuleUnload(module))

    if errors or errors2 or not kept:
        print(f"streamOrderedAllocation: FAILED: {errors} + {errors2} wrong sums, "
              f"pool kept {int(reserved)} of {3 * nbytes} bytes")
        sys.exit(1)
    print("streamOrderedAllocation: both variants verified; PASSED")


if __name__ == "__main__":
    main()

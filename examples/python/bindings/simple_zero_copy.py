"""Zero-copy host memory: cudaSetDeviceFlags(cudaDeviceMapHost), cudaHostAlloc
with cudaHostAllocMapped, and a kernel that reads and writes host memory through
the device pointer cudaHostGetDevicePointer gives."""

import ctypes
import math
import random
import sys

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
    return compile_ptx(KERNEL_SOURCE, "simpleZeroCopy_kernel.cu", arch)[0]


def main() -> None:
    device = findCudaDevice()
    canMap = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, device))
    if not canMap:
        skip("device 0 cannot map host memory (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)")

    # The flag must be set before the runtime makes the primary context current.
    checkCudaErrors(runtime.cudaSetDeviceFlags(runtime.cudaDeviceMapHost))
    checkCudaErrors(runtime.cudaSetDevice(0))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"vectorAddGPU"))

    nelem = 262144
    nbytes = nelem * ctypes.sizeof(ctypes.c_float)
    flags = runtime.cudaHostAllocMapped
    a = checkCudaErrors(runtime.cudaHostAlloc(nbytes, flags))
    b = checkCudaErrors(runtime.cudaHostAlloc(nbytes, flags))
    c = checkCudaErrors(runtime.cudaHostAlloc(nbytes, flags))
    a_host = (ctypes.c_float * nelem).from_address(a)
    b_host = (ctypes.c_float * nelem).from_address(b)
    c_host = (ctypes.c_float * nelem).from_address(c)
    rng = random.Random(7)
    for n in range(nelem):
        a_host[n] = rng.random()
        b_host[n] = rng.random()

    d_a = checkCudaErrors(runtime.cudaHostGetDevicePointer(a, 0))
    d_b = checkCudaErrors(runtime.cudaHostGetDevicePointer(b, 0))
    d_c = checkCudaErrors(runtime.cudaHostGetDevicePointer(c, 0))

    block = runtime.dim3()
    block.x = 256
    grid = runtime.dim3()
    grid.x = math.ceil(nelem / block.x)
    kernelArgs = ((d_a, d_b, d_c, nelem),
                  (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int))
    checkCudaErrors(driver.cuLaunchKernel(kernel, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                          0, 0, kernelArgs, 0))
    checkCudaErrors(runtime.cudaDeviceSynchronize())

    # The kernel wrote host memory directly: no copy back.
    errorNorm = 0.0
    refNorm = 0.0
    for n in range(nelem):
        ref = ctypes.c_float(a_host[n] + b_host[n]).value
        diff = c_host[n] - ref
        errorNorm += diff * diff
        refNorm += ref * ref
    errorNorm = math.sqrt(errorNorm)
    refNorm = math.sqrt(refNorm)

    checkCudaErrors(runtime.cudaFreeHost(a))
    checkCudaErrors(runtime.cudaFreeHost(b))
    checkCudaErrors(runtime.cudaFreeHost(c))
    checkCudaErrors(driver.cuModuleUnload(module))

    if errorNorm / refNorm >= 1.0e-7:
        print(f"simpleZeroCopy: FAILED: relative error {errorNorm / refNorm}")
        sys.exit(1)
    print(f"simpleZeroCopy: {nelem} sums read from mapped host memory verified; PASSED")


if __name__ == "__main__":
    main()

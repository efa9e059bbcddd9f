"""Virtual memory management: vector addition on buffers built from physical
allocations (cuMemCreate) mapped into a reserved address range (cuMemAddressReserve,
cuMemMap) and made accessible with cuMemSetAccess."""

import ctypes
import random
import sys
from typing import Any

from cuda.bindings import driver

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice, skip

KERNEL_SOURCE = """
extern "C" __global__ void VecAdd_kernel(const float *A, const float *B, float *C, int N)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < N)
        C[i] = A[i] + B[i];
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "vectorAddMMAP_kernel.cu", arch)[0]


def round_up(x: int, y: int) -> int:
    return ((x + y - 1) // y) * y


def simpleMallocMultiDeviceMmap(size: int, device: Any) -> tuple[Any, int]:
    """Returns (address, reserved size) of `size` bytes backed by device memory."""
    prop = driver.CUmemAllocationProp()
    prop.type = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = int(device)
    granularity = checkCudaErrors(driver.cuMemGetAllocationGranularity(
        prop, driver.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM))
    size = round_up(size, granularity)

    dptr = checkCudaErrors(driver.cuMemAddressReserve(size, 0, 0, 0))
    allocationHandle = checkCudaErrors(driver.cuMemCreate(size, prop, 0))
    checkCudaErrors(driver.cuMemMap(dptr, size, 0, allocationHandle, 0))
    # The mapping holds the physical memory; the handle is no longer needed.
    checkCudaErrors(driver.cuMemRelease(allocationHandle))

    accessDescriptor = driver.CUmemAccessDesc()
    accessDescriptor.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    accessDescriptor.location.id = int(device)
    accessDescriptor.flags = driver.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    checkCudaErrors(driver.cuMemSetAccess(dptr, size, [accessDescriptor], 1))
    return dptr, size


def simpleFreeMultiDeviceMmap(dptr: Any, size: int) -> None:
    checkCudaErrors(driver.cuMemUnmap(dptr, size))
    checkCudaErrors(driver.cuMemAddressFree(dptr, size))


def main() -> None:
    N = 50000
    device = findCudaDevice()
    supported = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device))
    if not supported:
        skip("device 0 does not support virtual memory management")
    cuContext = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"VecAdd_kernel"))

    size = N * ctypes.sizeof(ctypes.c_float)
    h_A = (ctypes.c_float * N)()
    h_B = (ctypes.c_float * N)()
    h_C = (ctypes.c_float * N)()
    rng = random.Random(3)
    for i in range(N):
        h_A[i] = rng.random()
        h_B[i] = rng.random()

    d_A, allocationSize = simpleMallocMultiDeviceMmap(size, device)
    d_B, _ = simpleMallocMultiDeviceMmap(size, device)
    d_C, _ = simpleMallocMultiDeviceMmap(size, device)
    checkCudaErrors(driver.cuMemcpyHtoD(d_A, h_A, size))
    checkCudaErrors(driver.cuMemcpyHtoD(d_B, h_B, size))

    threadsPerBlock = 256
    blocksPerGrid = (N + threadsPerBlock - 1) // threadsPerBlock
    # None as the type: the value is a binding object (CUdeviceptr) passed by its address.
    kernelArgs = ((d_A, d_B, d_C, N), (None, None, None, ctypes.c_int))
    checkCudaErrors(driver.cuLaunchKernel(kernel, blocksPerGrid, 1, 1, threadsPerBlock, 1, 1,
                                          0, 0, kernelArgs, 0))
    checkCudaErrors(driver.cuCtxSynchronize())
    checkCudaErrors(driver.cuMemcpyDtoH(h_C, d_C, size))

    bad = [i for i in range(N) if h_C[i] != ctypes.c_float(h_A[i] + h_B[i]).value]

    simpleFreeMultiDeviceMmap(d_A, allocationSize)
    simpleFreeMultiDeviceMmap(d_B, allocationSize)
    simpleFreeMultiDeviceMmap(d_C, allocationSize)
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(cuContext))

    if bad:
        i = bad[0]
        print(f"vectorAddMMAP: FAILED: {len(bad)} wrong sums, C[{i}] = {h_C[i]}")
        sys.exit(1)
    print(f"vectorAddMMAP: {N} sums in cuMemMap-ed memory verified; PASSED")


if __name__ == "__main__":
    main()

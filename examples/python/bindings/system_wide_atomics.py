"""System-wide atomics: atomicAdd_system and its siblings on managed memory
(cudaMallocManaged) that the host reads back with no copy, checked against the
values the host computes. Needs concurrent managed access."""

import ctypes
import functools
import sys
from typing import Any

from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice, skip

KERNEL_SOURCE = """
extern "C" __global__ void atomicKernel(int *atom_arr)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    atomicAdd_system(&atom_arr[0], 10);
    atomicExch_system(&atom_arr[1], tid);
    atomicMax_system(&atom_arr[2], tid);
    atomicMin_system(&atom_arr[3], tid);
    atomicInc_system((unsigned int *)&atom_arr[4], 17);
    atomicDec_system((unsigned int *)&atom_arr[5], 137);
    atomicCAS_system(&atom_arr[6], tid - 1, tid);
    atomicAnd_system(&atom_arr[7], 2 * tid + 7);
    atomicOr_system(&atom_arr[8], 1 << (tid % 31));
    atomicXor_system(&atom_arr[9], tid);
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "systemWideAtomics_kernel.cu", arch)[0]


def int32(value: int) -> int:
    return ctypes.c_int32(value).value


def verify(data: Any, nthreads: int) -> list[str]:
    """Returns the names of the operations whose final value is wrong."""
    wrong = []
    if data[0] != int32(10 * nthreads):
        wrong.append("atomicAdd_system")
    if not 0 <= data[1] < nthreads:
        wrong.append("atomicExch_system")
    if data[2] != nthreads - 1:
        wrong.append("atomicMax_system")
    if data[3] != 0:
        wrong.append("atomicMin_system")
    # atomicInc wraps to 0 after the limit; atomicDec wraps to the limit after 0.
    if data[4] != nthreads % 18:
        wrong.append("atomicInc_system")
    if data[5] != (-nthreads) % 138:
        wrong.append("atomicDec_system")
    # The compare-and-swap chain runs as far as the threads happened to come in order.
    if not 0 <= data[6] < nthreads:
        wrong.append("atomicCAS_system")
    if data[7] != int32(functools.reduce(lambda a, t: a & (2 * t + 7), range(nthreads), 0xFF)):
        wrong.append("atomicAnd_system")
    if data[8] != int32(functools.reduce(lambda a, t: a | (1 << (t % 31)), range(nthreads), 0)):
        wrong.append("atomicOr_system")
    if data[9] != int32(functools.reduce(lambda a, t: a ^ t, range(nthreads), 0xFF)):
        wrong.append("atomicXor_system")
    return wrong


def main() -> None:
    device = findCudaDevice()
    concurrent = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, device))
    if not concurrent:
        skip("device 0 has no concurrent managed access, which system-wide atomics on managed memory need")
    checkCudaErrors(runtime.cudaSetDevice(0))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"atomicKernel"))

    numThreads = 256
    numBlocks = 64
    numData = 10
    atom_arr = checkCudaErrors(runtime.cudaMallocManaged(numData * ctypes.sizeof(ctypes.c_int),
                                                         runtime.cudaMemAttachGlobal))
    data = (ctypes.c_int * numData).from_address(atom_arr)
    for i in range(numData):
        data[i] = 0
    # Start values the operations can change: a high minimum, bits for AND, XOR.
    data[3] = numBlocks * numThreads
    data[7] = 0xFF
    data[9] = 0xFF

    # kernelParams: a ctypes array of pointers to each argument.
    arg0 = ctypes.c_void_p(atom_arr)
    kernelParams = (ctypes.c_void_p * 1)(ctypes.addressof(arg0))
    checkCudaErrors(driver.cuLaunchKernel(kernel, numBlocks, 1, 1, numThreads, 1, 1, 0, 0,
                                          ctypes.addressof(kernelParams), 0))
    checkCudaErrors(runtime.cudaDeviceSynchronize())

    values = list(data)
    wrong = verify(values, numBlocks * numThreads)
    checkCudaErrors(runtime.cudaFree(atom_arr))
    checkCudaErrors(driver.cuModuleUnload(module))
    if wrong:
        print(f"systemWideAtomics: FAILED: {', '.join(wrong)} (values {values})")
        sys.exit(1)
    print(f"systemWideAtomics: 10 system-scope atomic operations of {numBlocks * numThreads} threads verified; PASSED")


if __name__ == "__main__":
    main()

"""Timing inside a kernel with clock(): each block reduces its slice of the input
to its minimum in shared memory and records the clock when it starts and ends.
Compiled by NVRTC to PTX; the minima are checked and the clocks must advance."""

import ctypes
import random
import sys

from cuda.bindings import driver

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

NUM_BLOCKS = 64
NUM_THREADS = 256

KERNEL_SOURCE = """
// Each block finds the minimum of its 2 * blockDim.x inputs and times itself.
extern "C" __global__ void timedReduction(const float *input, float *output, clock_t *timer)
{
    extern __shared__ float shared[];
    const int tid = threadIdx.x;
    const int bid = blockIdx.x;

    if (tid == 0) timer[bid] = clock();

    const float *slice = input + 2 * blockDim.x * bid;
    shared[tid] = slice[tid];
    shared[tid + blockDim.x] = slice[tid + blockDim.x];

    for (int d = blockDim.x; d > 0; d /= 2) {
        __syncthreads();
        if (tid < d) {
            float f0 = shared[tid];
            float f1 = shared[tid + d];
            if (f1 < f0) shared[tid] = f1;
        }
    }

    if (tid == 0) output[bid] = shared[0];
    __syncthreads();
    if (tid == 0) timer[bid + gridDim.x] = clock();
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "clock_kernel.cu", arch)[0]


def main() -> None:
    device = findCudaDevice()
    context = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"timedReduction"))

    count = NUM_THREADS * 2 * NUM_BLOCKS
    rng = random.Random(2)
    hinput = (ctypes.c_float * count)(*[rng.uniform(-1000.0, 1000.0) for _ in range(count)])
    houtput = (ctypes.c_float * NUM_BLOCKS)()
    timer = (ctypes.c_int64 * (NUM_BLOCKS * 2))()

    dinput = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(hinput)))
    doutput = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(houtput)))
    dtimer = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(timer)))
    checkCudaErrors(driver.cuMemcpyHtoD(dinput, hinput, ctypes.sizeof(hinput)))

    args = ((dinput, doutput, dtimer), (None, None, None))
    sharedMemBytes = ctypes.sizeof(ctypes.c_float) * 2 * NUM_THREADS
    checkCudaErrors(driver.cuLaunchKernel(kernel, NUM_BLOCKS, 1, 1, NUM_THREADS, 1, 1,
                                          sharedMemBytes, 0, args, 0))
    checkCudaErrors(driver.cuCtxSynchronize())
    checkCudaErrors(driver.cuMemcpyDtoH(timer, dtimer, ctypes.sizeof(timer)))
    checkCudaErrors(driver.cuMemcpyDtoH(houtput, doutput, ctypes.sizeof(houtput)))

    checkCudaErrors(driver.cuMemFree(dinput))
    checkCudaErrors(driver.cuMemFree(doutput))
    checkCudaErrors(driver.cuMemFree(dtimer))
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(context))

    slice_len = 2 * NUM_THREADS
    wrong = [b for b in range(NUM_BLOCKS) if houtput[b] != min(hinput[b * slice_len:(b + 1) * slice_len])]
    # clock() counts per multiprocessor, so only a block's own start and end compare;
    # the counter is 32 bits wide and may wrap between the two.
    elapsed = [(timer[b + NUM_BLOCKS] - timer[b]) & 0xFFFFFFFF for b in range(NUM_BLOCKS)]
    backwards = [b for b in range(NUM_BLOCKS) if not 0 < elapsed[b] < 1 << 31]
    avgElapsedClocks = sum(elapsed) / NUM_BLOCKS
    print(f"Average clocks/block = {avgElapsedClocks}")
    if wrong or backwards:
        print(f"clock_nvrtc: FAILED: wrong minima in blocks {wrong}, clocks not advancing in blocks {backwards}")
        sys.exit(1)
    print(f"clock_nvrtc: minima of {NUM_BLOCKS} blocks verified, clocks advance; PASSED")


if __name__ == "__main__":
    main()

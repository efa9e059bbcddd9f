"""Asynchronous copies from global to shared memory in a tiled matrix multiply:
one kernel with a per-thread cuda::pipeline and cuda::memcpy_async, one with
cooperative_groups::memcpy_async by the whole block. Both are templates on the
tile size, instantiated through NVRTC name expressions."""

import ctypes
import sys
from typing import Any

from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

BLOCK_SIZE = 16
KERNELS = (f"MatrixMulAsyncCopySingleStage<{BLOCK_SIZE}>", f"MatrixMulAsyncCopyCG<{BLOCK_SIZE}>")

KERNEL_SOURCE = """
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>

namespace cg = cooperative_groups;

// C = A * B with A of width wA and B of width wB; one thread per element of C.
template <int BLOCK_SIZE>
__global__ void MatrixMulAsyncCopySingleStage(float *__restrict__ C, const float *__restrict__ A,
                                              const float *__restrict__ B, int wA, int wB)
{
    __shared__ alignas(alignof(float4)) float As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ alignas(alignof(float4)) float Bs[BLOCK_SIZE][BLOCK_SIZE];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int aBegin = wA * BLOCK_SIZE * blockIdx.y, aEnd = aBegin + wA - 1;
    const int bStep = BLOCK_SIZE * wB;
    float Csub = 0.0f;
    for (int a = aBegin, b = BLOCK_SIZE * blockIdx.x; a <= aEnd; a += BLOCK_SIZE, b += bStep) {
        pipe.producer_acquire();
        cuda::memcpy_async(&As[ty][tx], &A[a + wA * ty + tx], cuda::aligned_size_t<alignof(float)>(sizeof(float)), pipe);
        cuda::memcpy_async(&Bs[ty][tx], &B[b + wB * ty + tx], cuda::aligned_size_t<alignof(float)>(sizeof(float)), pipe);
        pipe.producer_commit();
        cuda::pipeline_consumer_wait_prior<0>(pipe);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k)
            Csub += As[ty][k] * Bs[k][tx];
        pipe.consumer_release();
        // The next tile must not land before every thread has read this one.
        __syncthreads();
    }
    C[wB * BLOCK_SIZE * blockIdx.y + BLOCK_SIZE * blockIdx.x + wB * ty + tx] = Csub;
}

template <int BLOCK_SIZE>
__global__ void MatrixMulAsyncCopyCG(float *__restrict__ C, const float *__restrict__ A,
                                     const float *__restrict__ B, int wA, int wB)
{
    __shared__ alignas(alignof(float4)) float As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ alignas(alignof(float4)) float Bs[BLOCK_SIZE][BLOCK_SIZE];
    cg::thread_block cta = cg::this_thread_block();
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int aBegin = wA * BLOCK_SIZE * blockIdx.y, aEnd = aBegin + wA - 1;
    const int bStep = BLOCK_SIZE * wB;
    float Csub = 0.0f;
    for (int a = aBegin, b = BLOCK_SIZE * blockIdx.x; a <= aEnd; a += BLOCK_SIZE, b += bStep) {
        // Rows of a tile are contiguous in global memory: the block copies one row per call.
        for (int row = 0; row < BLOCK_SIZE; ++row) {
            cg::memcpy_async(cta, &As[row][0], &A[a + wA * row], sizeof(float) * BLOCK_SIZE);
            cg::memcpy_async(cta, &Bs[row][0], &B[b + wB * row], sizeof(float) * BLOCK_SIZE);
        }
        cg::wait(cta);
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k)
            Csub += As[ty][k] * Bs[k][tx];
        cta.sync();
    }
    C[wB * BLOCK_SIZE * blockIdx.y + BLOCK_SIZE * blockIdx.x + wB * ty + tx] = Csub;
}
"""


def compile_kernels(arch: str) -> tuple[bytes, dict[str, Any]]:
    return compile_ptx(KERNEL_SOURCE, "globalToShmemAsyncCopy_kernel.cu", arch,
                       name_expressions=KERNELS)


def main() -> None:
    device = findCudaDevice()
    checkCudaErrors(runtime.cudaSetDevice(0))
    ptx, lowered = compile_kernels(compute_capability(device))
    module = checkCudaErrors(driver.cuModuleLoadData(ptx))

    dimsA = runtime.dim3()
    dimsA.x, dimsA.y = 8 * BLOCK_SIZE, 8 * BLOCK_SIZE
    dimsB = runtime.dim3()
    dimsB.x, dimsB.y = 12 * BLOCK_SIZE, 8 * BLOCK_SIZE
    hA, wA, wB = dimsA.y, dimsA.x, dimsB.x
    size_A, size_B, size_C = wA * hA, wB * dimsB.y, wB * hA
    # Multiples of 1/8 small enough that every sum is exact in float.
    h_A = (ctypes.c_float * size_A)(*[((i // wA + i % wA) % 7) * 0.25 for i in range(size_A)])
    h_B = (ctypes.c_float * size_B)(*[((3 * (i // wB) + i % wB) % 5) * 0.5 for i in range(size_B)])
    h_C = (ctypes.c_float * size_C)()
    columns = [[h_B[k * wB + j] for k in range(wA)] for j in range(wB)]
    reference: list[float] = []
    for i in range(hA):
        row = h_A[i * wA:(i + 1) * wA]
        reference.extend(sum(x * y for x, y in zip(row, col)) for col in columns)

    sizeof = ctypes.sizeof(ctypes.c_float)
    d_A = checkCudaErrors(runtime.cudaMalloc(size_A * sizeof))
    d_B = checkCudaErrors(runtime.cudaMalloc(size_B * sizeof))
    d_C = checkCudaErrors(runtime.cudaMalloc(size_C * sizeof))
    stream = checkCudaErrors(runtime.cudaStreamCreateWithFlags(runtime.cudaStreamNonBlocking))
    H2D = runtime.cudaMemcpyKind.cudaMemcpyHostToDevice
    checkCudaErrors(runtime.cudaMemcpyAsync(d_A, h_A, size_A * sizeof, H2D, stream))
    checkCudaErrors(runtime.cudaMemcpyAsync(d_B, h_B, size_B * sizeof, H2D, stream))

    threads = runtime.dim3()
    threads.x, threads.y = BLOCK_SIZE, BLOCK_SIZE
    grid = runtime.dim3()
    grid.x = dimsB.x // threads.x
    grid.y = dimsA.y // threads.y
    kernelArgs = ((d_C, d_A, d_B, wA, wB),
                  (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int))

    failed = []
    for expression in KERNELS:
        kernel = checkCudaErrors(driver.cuModuleGetFunction(module, lowered[expression]))
        checkCudaErrors(runtime.cudaMemsetAsync(d_C, 0, size_C * sizeof, stream))
        checkCudaErrors(driver.cuLaunchKernel(kernel, grid.x, grid.y, grid.z, threads.x, threads.y, threads.z,
                                              0, stream, kernelArgs, 0))
        checkCudaErrors(runtime.cudaMemcpyAsync(h_C, d_C, size_C * sizeof,
                                                runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost, stream))
        checkCudaErrors(runtime.cudaStreamSynchronize(stream))
        wrong = [i for i in range(size_C) if h_C[i] != reference[i]]
        print(f"{expression}: {'PASSED' if not wrong else f'FAILED ({len(wrong)} wrong elements)'}")
        if wrong:
            failed.append(expression)

    checkCudaErrors(runtime.cudaStreamDestroy(stream))
    checkCudaErrors(runtime.cudaFree(d_A))
    checkCudaErrors(runtime.cudaFree(d_B))
    checkCudaErrors(runtime.cudaFree(d_C))
    checkCudaErrors(driver.cuModuleUnload(module))
    if failed:
        print(f"globalToShmemAsyncCopy: FAILED: {', '.join(failed)}")
        sys.exit(1)
    print(f"globalToShmemAsyncCopy: {hA}x{wB} products of both kernels verified; PASSED")


if __name__ == "__main__":
    main()

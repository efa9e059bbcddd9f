"""A conjugate gradient solver in one cooperative kernel: the whole grid
synchronises between steps with cooperative_groups grid.sync(), launched by
cuLaunchCooperativeKernel with a grid sized by cuOccupancyMaxActiveBlocksPerMultiprocessor.
The solution of a random tridiagonal system is checked on the host."""

import sys
from typing import Any

import numpy as np
from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice, skip

THREADS_PER_BLOCK = 512

KERNEL_SOURCE = """
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

// Ax = alpha * A x for A in CSR form (I: row offsets, J: columns).
__device__ void gpuSpMV(const int *I, const int *J, const float *val, int num_rows, float alpha,
                        const float *inputVecX, float *outputVecY, const cg::grid_group &grid)
{
    for (int i = grid.thread_rank(); i < num_rows; i += grid.size()) {
        float temp = 0.f;
        for (int k = I[i]; k < I[i + 1]; k++)
            temp += val[k] * inputVecX[J[k]];
        outputVecY[i] = alpha * temp;
    }
}

// *result += a . b; *result must be zero and stay unread until the grid has synchronised.
__device__ void gpuDotProduct(const float *vecA, const float *vecB, double *result, int size,
                              const cg::grid_group &grid)
{
    double temp_sum = 0.0;
    for (int i = grid.thread_rank(); i < size; i += grid.size())
        temp_sum += (double)(vecA[i] * vecB[i]);
    for (int offset = 16; offset > 0; offset /= 2)
        temp_sum += __shfl_down_sync(0xffffffff, temp_sum, offset);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(result, temp_sum);
}

extern "C" __global__ void gpuConjugateGradient(const int *I, const int *J, const float *val, float *x,
                                                float *Ax, float *p, float *r, double *dot_result,
                                                int N, float tol, int max_iter, int *iterations)
{
    cg::grid_group grid = cg::this_grid();
    const bool leader = grid.thread_rank() == 0;

    // x starts at 0 and r at b, so r = b - A x needs no first product.
    if (leader) *dot_result = 0.0;
    grid.sync();
    gpuDotProduct(r, r, dot_result, N, grid);
    grid.sync();
    double r1 = *dot_result, r0 = 0.0;

    int k = 1;
    while (r1 > (double)tol * tol && k <= max_iter) {
        float b = k > 1 ? (float)(r1 / r0) : 0.f;
        for (int i = grid.thread_rank(); i < N; i += grid.size())
            p[i] = r[i] + b * p[i];
        grid.sync();  // p complete; every thread has read the last dot product.

        gpuSpMV(I, J, val, N, 1.0f, p, Ax, grid);
        if (leader) *dot_result = 0.0;
        grid.sync();
        gpuDotProduct(p, Ax, dot_result, N, grid);
        grid.sync();
        float a = (float)(r1 / *dot_result);

        for (int i = grid.thread_rank(); i < N; i += grid.size()) {
            x[i] += a * p[i];
            r[i] -= a * Ax[i];
        }
        r0 = r1;
        grid.sync();  // every thread has read p . Ax.
        if (leader) *dot_result = 0.0;
        grid.sync();
        gpuDotProduct(r, r, dot_result, N, grid);
        grid.sync();
        r1 = *dot_result;
        k++;
    }
    if (leader) *iterations = k - 1;
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "conjugateGradientMultiBlockCG_kernel.cu", arch)[0]


def genTridiag(N: int, rng: np.random.Generator) -> tuple[Any, Any, Any]:
    """A random symmetric, diagonally dominant tridiagonal matrix in CSR form."""
    off = rng.random(N - 1, dtype=np.float32)
    diag = rng.random(N, dtype=np.float32) + np.float32(10.0)
    I = np.zeros(N + 1, dtype=np.int32)
    counts = np.full(N, 3, dtype=np.int32)
    counts[0] = counts[-1] = 2
    I[1:] = np.cumsum(counts)
    J = np.empty(I[-1], dtype=np.int32)
    val = np.empty(I[-1], dtype=np.float32)
    for row in range(N):
        cols = [c for c in (row - 1, row, row + 1) if 0 <= c < N]
        J[I[row]:I[row + 1]] = cols
        val[I[row]:I[row + 1]] = [off[c] if c == row - 1 else diag[row] if c == row else off[row] for c in cols]
    return I, J, val


def main() -> None:
    N = 1 << 16
    tol = 1e-5
    max_iter = 10000
    device = findCudaDevice()
    cooperative = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, device))
    if not cooperative:
        skip("device 0 does not support cooperative launch")
    checkCudaErrors(runtime.cudaSetDevice(0))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"gpuConjugateGradient"))

    I, J, val = genTridiag(N, np.random.default_rng(5))
    nz = len(val)
    rhs = np.ones(N, dtype=np.float32)

    def to_device(array: Any) -> Any:
        ptr = checkCudaErrors(runtime.cudaMalloc(array.nbytes))
        checkCudaErrors(runtime.cudaMemcpy(ptr, array, array.nbytes, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice))
        return ptr

    d_I, d_J, d_val = to_device(I), to_device(J), to_device(val)
    d_x = to_device(np.zeros(N, dtype=np.float32))
    d_r = to_device(rhs)
    d_p = to_device(np.zeros(N, dtype=np.float32))
    d_Ax = to_device(np.zeros(N, dtype=np.float32))
    d_result = to_device(np.zeros(1, dtype=np.float64))
    d_iterations = to_device(np.zeros(1, dtype=np.int32))

    numSms = checkCudaErrors(driver.cuDeviceGetAttribute(
        driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device))
    numBlocksPerSm = checkCudaErrors(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(kernel, THREADS_PER_BLOCK, 0))
    if numBlocksPerSm == 0:
        print("conjugateGradientMultiBlockCG: FAILED: the kernel fits no block on a multiprocessor")
        sys.exit(1)
    # A cooperative grid must be resident all at once: at most what occupancy allows.
    numBlocks = numSms * numBlocksPerSm
    print(f"Launching {numBlocks} blocks of {THREADS_PER_BLOCK} threads ({numBlocksPerSm} per SM on {numSms} SMs)")

    # The argument values must outlive the launch: kernelArgs holds only their addresses.
    argValues = [np.array([ptr], dtype=np.uint64) for ptr in (d_I, d_J, d_val, d_x, d_Ax, d_p, d_r, d_result)]
    argValues += [np.array(N, dtype=np.int32), np.array(tol, dtype=np.float32),
                  np.array(max_iter, dtype=np.int32), np.array([d_iterations], dtype=np.uint64)]
    kernelArgs = np.array([arg.ctypes.data for arg in argValues], dtype=np.uint64)
    stream = checkCudaErrors(runtime.cudaStreamCreateWithFlags(runtime.cudaStreamNonBlocking))
    checkCudaErrors(driver.cuLaunchCooperativeKernel(kernel, numBlocks, 1, 1, THREADS_PER_BLOCK, 1, 1,
                                                     0, stream, kernelArgs.ctypes.data))
    checkCudaErrors(runtime.cudaStreamSynchronize(stream))

    x = np.empty(N, dtype=np.float32)
    r1 = np.empty(1, dtype=np.float64)
    iterations = np.empty(1, dtype=np.int32)
    checkCudaErrors(runtime.cudaMemcpy(x, d_x, x.nbytes, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    checkCudaErrors(runtime.cudaMemcpy(r1, d_result, r1.nbytes, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    checkCudaErrors(runtime.cudaMemcpy(iterations, d_iterations, iterations.nbytes,
                                       runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))

    # The residual of the returned x, computed on the host in double precision.
    rows = np.repeat(np.arange(N), np.diff(I))
    Ax = np.zeros(N, dtype=np.float64)
    np.add.at(Ax, rows, val.astype(np.float64) * x[J].astype(np.float64))
    err = float(np.max(np.abs(rhs - Ax)))
    print(f"GPU iterations = {int(iterations[0])}, residual = {np.sqrt(r1[0]):e}, host-checked max error = {err:e}")

    for ptr in (d_I, d_J, d_val, d_x, d_r, d_p, d_Ax, d_result, d_iterations):
        checkCudaErrors(runtime.cudaFree(ptr))
    checkCudaErrors(runtime.cudaStreamDestroy(stream))
    checkCudaErrors(driver.cuModuleUnload(module))

    if not (np.sqrt(r1[0]) < tol and err < 1e-4 and 0 < iterations[0] < max_iter):
        print("conjugateGradientMultiBlockCG: FAILED")
        sys.exit(1)
    print("conjugateGradientMultiBlockCG: solution verified; PASSED")


if __name__ == "__main__":
    main()

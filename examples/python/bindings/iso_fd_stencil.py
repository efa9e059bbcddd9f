"""A finite-difference stencil: an isotropic 2D acoustic wave stepped in time with a
fourth-order Laplacian (a radius-2 cross of neighbours), three buffers rotated on a
stream, checked against the same steps computed with NumPy."""

import sys
from typing import Any

import numpy as np
from cuda.bindings import driver

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

RADIUS = 2
BLOCK_X, BLOCK_Y = 32, 8

KERNEL_SOURCE = """
#define RADIUS 2

// next = 2 cur - prev + coef * laplacian(cur); the RADIUS-wide border stays zero.
extern "C" __global__ void fd_step(const float *__restrict__ prev, const float *__restrict__ cur,
                                   float *__restrict__ next, int nx, int ny, float coef)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny)
        return;
    const int i = y * nx + x;
    if (x < RADIUS || y < RADIUS || x >= nx - RADIUS || y >= ny - RADIUS) {
        next[i] = 0.f;
        return;
    }
    const float c0 = -5.f / 2.f, c1 = 4.f / 3.f, c2 = -1.f / 12.f;
    float lap = 2.f * c0 * cur[i];
    lap += c1 * ((cur[i - 1] + cur[i + 1]) + (cur[i - nx] + cur[i + nx]));
    lap += c2 * ((cur[i - 2] + cur[i + 2]) + (cur[i - 2 * nx] + cur[i + 2 * nx]));
    next[i] = 2.f * cur[i] - prev[i] + coef * lap;
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "isoFDModelling_kernel.cu", arch, options=["--fmad=false"])[0]


def reference_step(prev: Any, cur: Any, coef: Any) -> Any:
    c0, c1, c2 = np.float32(-5.0 / 2.0), np.float32(4.0 / 3.0), np.float32(-1.0 / 12.0)
    nxt = np.zeros_like(cur)
    R = RADIUS
    core = cur[R:-R, R:-R]
    lap = np.float32(2.0) * c0 * core
    lap = lap + c1 * ((cur[R:-R, R - 1:-R - 1] + cur[R:-R, R + 1:cur.shape[1] - R + 1])
                      + (cur[R - 1:-R - 1, R:-R] + cur[R + 1:cur.shape[0] - R + 1, R:-R]))
    lap = lap + c2 * ((cur[R:-R, R - 2:-R - 2] + cur[R:-R, R + 2:])
                      + (cur[R - 2:-R - 2, R:-R] + cur[R + 2:, R:-R]))
    nxt[R:-R, R:-R] = np.float32(2.0) * core - prev[R:-R, R:-R] + np.float32(coef) * lap
    return nxt


def main() -> None:
    nx, ny, steps = 512, 384, 50
    # c dt / dx = 0.3: inside the stability limit of this stencil.
    coef = 0.3 ** 2
    device = findCudaDevice()
    cuContext = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"fd_step"))

    # A Gaussian pulse in the middle, at rest.
    yy, xx = np.mgrid[0:ny, 0:nx]
    u0 = np.exp(-((xx - nx / 2) ** 2 + (yy - ny / 2) ** 2) / 50.0).astype(np.float32)
    u0[:RADIUS, :] = u0[-RADIUS:, :] = 0
    u0[:, :RADIUS] = u0[:, -RADIUS:] = 0
    nbytes = u0.nbytes

    stream = checkCudaErrors(driver.cuStreamCreate(0))
    buffers = [checkCudaErrors(driver.cuMemAlloc(nbytes)) for _ in range(3)]
    checkCudaErrors(driver.cuMemcpyHtoDAsync(buffers[0], u0, nbytes, stream))
    checkCudaErrors(driver.cuMemcpyHtoDAsync(buffers[1], u0, nbytes, stream))

    blocks = ((nx + BLOCK_X - 1) // BLOCK_X, (ny + BLOCK_Y - 1) // BLOCK_Y)
    nx_arg = np.array(nx, dtype=np.int32)
    ny_arg = np.array(ny, dtype=np.int32)
    coef_arg = np.array(coef, dtype=np.float32)
    for step in range(steps):
        prev, cur, nxt = buffers[step % 3], buffers[(step + 1) % 3], buffers[(step + 2) % 3]
        # The values must live until the launch has read them: args holds only their addresses.
        values: list[Any] = [np.array([int(prev)], dtype=np.uint64), np.array([int(cur)], dtype=np.uint64),
                  np.array([int(nxt)], dtype=np.uint64), nx_arg, ny_arg, coef_arg]
        args = np.array([arg.ctypes.data for arg in values], dtype=np.uint64)
        checkCudaErrors(driver.cuLaunchKernel(kernel, blocks[0], blocks[1], 1, BLOCK_X, BLOCK_Y, 1,
                                              0, stream, args.ctypes.data, 0))
    result = np.empty_like(u0)
    checkCudaErrors(driver.cuMemcpyDtoHAsync(result, buffers[(steps + 1) % 3], nbytes, stream))
    checkCudaErrors(driver.cuStreamSynchronize(stream))

    prev, cur = u0.copy(), u0.copy()
    for _ in range(steps):
        prev, cur = cur, reference_step(prev, cur, coef)
    max_error = float(np.max(np.abs(result - cur)))
    scale = float(np.max(np.abs(cur)))

    for buf in buffers:
        checkCudaErrors(driver.cuMemFree(buf))
    checkCudaErrors(driver.cuStreamDestroy(stream))
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(cuContext))

    print(f"{steps} steps on {nx} x {ny}: max |GPU - NumPy| = {max_error:e} (field max {scale:e})")
    if not max_error <= 1e-5 * scale or scale == 0.0:
        print("isoFDModelling: FAILED")
        sys.exit(1)
    print("isoFDModelling: wave field verified; PASSED")


if __name__ == "__main__":
    main()

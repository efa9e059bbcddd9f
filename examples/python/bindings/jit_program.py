"""A JIT program with a template kernel: NVRTC instantiates saxpy<float>,
saxpy<double> and saxpy<int> from name expressions (nvrtcAddNameExpression,
nvrtcGetLoweredName); each instantiation is launched with arguments of its own
ctypes types and checked."""

import ctypes
import sys
from typing import Any

from cuda.bindings import driver

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

KERNEL_SOURCE = """
template <typename T>
__global__ void saxpy(T a, const T *x, const T *y, T *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n)
        out[tid] = a * x[tid] + y[tid];
}
"""

# (name expression, ctypes element type, the scalar a, x[i], y[i])
INSTANTIATIONS: tuple[tuple[str, Any, Any, Any, Any], ...] = (
    ("saxpy<float>", ctypes.c_float, 2.5, lambda i: i * 0.5, lambda i: 1.0 - i),
    ("saxpy<double>", ctypes.c_double, -1.25, lambda i: i / 3.0, lambda i: i * 0.125),
    ("saxpy<int>", ctypes.c_int, 3, lambda i: i - 700, lambda i: 7 * i),
)


def compile_kernels(arch: str) -> tuple[bytes, dict[str, Any]]:
    return compile_ptx(KERNEL_SOURCE, "saxpy.cu", arch,
                       name_expressions=[expression for expression, *_ in INSTANTIATIONS])


def main() -> None:
    n = 4096
    NUM_THREADS = 128
    NUM_BLOCKS = (n + NUM_THREADS - 1) // NUM_THREADS
    device = findCudaDevice()
    context = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    ptx, lowered = compile_kernels(compute_capability(device))
    module = checkCudaErrors(driver.cuModuleLoadData(ptx))
    stream = checkCudaErrors(driver.cuStreamCreate(0))

    failed = []
    for expression, ctype, a, x_of, y_of in INSTANTIATIONS:
        print(f"{expression} is {lowered[expression].decode()} in the PTX")
        kernel = checkCudaErrors(driver.cuModuleGetFunction(module, lowered[expression]))
        bufferSize = n * ctypes.sizeof(ctype)
        hX = (ctype * n)(*[x_of(i) for i in range(n)])
        hY = (ctype * n)(*[y_of(i) for i in range(n)])
        hOut = (ctype * n)()
        dX = checkCudaErrors(driver.cuMemAlloc(bufferSize))
        dY = checkCudaErrors(driver.cuMemAlloc(bufferSize))
        dOut = checkCudaErrors(driver.cuMemAlloc(bufferSize))
        checkCudaErrors(driver.cuMemcpyHtoDAsync(dX, hX, bufferSize, stream))
        checkCudaErrors(driver.cuMemcpyHtoDAsync(dY, hY, bufferSize, stream))

        args = ((a, dX, dY, dOut, n), (ctype, None, None, None, ctypes.c_size_t))
        checkCudaErrors(driver.cuLaunchKernel(kernel, NUM_BLOCKS, 1, 1, NUM_THREADS, 1, 1,
                                              0, stream, args, 0))
        checkCudaErrors(driver.cuMemcpyDtoHAsync(hOut, dOut, bufferSize, stream))
        checkCudaErrors(driver.cuStreamSynchronize(stream))

        # The same arithmetic in the kernel's type: one rounding per operation.
        a_t = ctype(a).value
        wrong = 0
        for i in range(n):
            if ctype is ctypes.c_int:
                expected = ctype(a_t * hX[i] + hY[i]).value
                ok = hOut[i] == expected
            else:
                expected = a_t * hX[i] + hY[i]
                ok = abs(hOut[i] - expected) <= 1e-6 * max(1.0, abs(expected))
            wrong += not ok
        print(f"{expression}: {'PASSED' if not wrong else f'FAILED ({wrong} wrong)'}")
        if wrong:
            failed.append(expression)
        for ptr in (dX, dY, dOut):
            checkCudaErrors(driver.cuMemFree(ptr))

    checkCudaErrors(driver.cuStreamDestroy(stream))
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(context))
    if failed:
        print(f"jitProgram: FAILED: {', '.join(failed)}")
        sys.exit(1)
    print(f"jitProgram: {len(INSTANTIATIONS)} instantiations of a template kernel verified; PASSED")


if __name__ == "__main__":
    main()

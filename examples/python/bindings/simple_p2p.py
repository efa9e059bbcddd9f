"""Peer-to-peer copies between two GPUs: cudaDeviceCanAccessPeer,
cudaDeviceEnablePeerAccess, cudaMemcpyPeer and a kernel on one GPU that reads
the other GPU's memory directly. Needs two GPUs that can reach each other."""

import ctypes
import sys

from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice, skip

KERNEL_SOURCE = """
extern "C" __global__ void SimpleKernel(const float *src, float *dst)
{
    // Only one of src and dst lives on this GPU: the other is read or written over the peer link.
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    dst[idx] = src[idx] * 2.0f;
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "simpleP2P_kernel.cu", arch)[0]


def main() -> None:
    findCudaDevice(min_count=2)
    gpuid = [0, 1]
    can01 = checkCudaErrors(runtime.cudaDeviceCanAccessPeer(gpuid[0], gpuid[1]))
    can10 = checkCudaErrors(runtime.cudaDeviceCanAccessPeer(gpuid[1], gpuid[0]))
    print(f"Peer access from GPU{gpuid[0]} to GPU{gpuid[1]}: {'Yes' if can01 else 'No'}")
    print(f"Peer access from GPU{gpuid[1]} to GPU{gpuid[0]}: {'Yes' if can10 else 'No'}")
    if not (can01 and can10):
        skip("GPU0 and GPU1 cannot access each other's memory (no peer support)")

    checkCudaErrors(runtime.cudaSetDevice(gpuid[0]))
    checkCudaErrors(runtime.cudaDeviceEnablePeerAccess(gpuid[1], 0))
    checkCudaErrors(runtime.cudaSetDevice(gpuid[1]))
    checkCudaErrors(runtime.cudaDeviceEnablePeerAccess(gpuid[0], 0))

    buf_size = 1024 * 1024 * ctypes.sizeof(ctypes.c_float)
    count = buf_size // ctypes.sizeof(ctypes.c_float)
    checkCudaErrors(runtime.cudaSetDevice(gpuid[0]))
    g0 = checkCudaErrors(runtime.cudaMalloc(buf_size))
    checkCudaErrors(runtime.cudaSetDevice(gpuid[1]))
    g1 = checkCudaErrors(runtime.cudaMalloc(buf_size))
    h0 = checkCudaErrors(runtime.cudaMallocHost(buf_size))
    h0_array = (ctypes.c_float * count).from_address(h0)

    start_event = checkCudaErrors(runtime.cudaEventCreateWithFlags(runtime.cudaEventBlockingSync))
    stop_event = checkCudaErrors(runtime.cudaEventCreateWithFlags(runtime.cudaEventBlockingSync))
    checkCudaErrors(runtime.cudaEventRecord(start_event, 0))
    for i in range(100):
        # Ping-pong between the GPUs: every copy crosses the peer link.
        if i % 2 == 0:
            checkCudaErrors(runtime.cudaMemcpy(g1, g0, buf_size, runtime.cudaMemcpyKind.cudaMemcpyDefault))
        else:
            checkCudaErrors(runtime.cudaMemcpy(g0, g1, buf_size, runtime.cudaMemcpyKind.cudaMemcpyDefault))
    checkCudaErrors(runtime.cudaEventRecord(stop_event, 0))
    checkCudaErrors(runtime.cudaEventSynchronize(stop_event))
    time_ms = checkCudaErrors(runtime.cudaEventElapsedTime(start_event, stop_event))
    print(f"cudaMemcpy peer copies: {100.0 * buf_size / 1024 ** 3 / (time_ms / 1000):.2f} GB/s")

    for i in range(count):
        h0_array[i] = float(i % 4096)
    checkCudaErrors(runtime.cudaMemcpy(g0, h0, buf_size, runtime.cudaMemcpyKind.cudaMemcpyHostToDevice))

    threads = 512
    blocks = count // threads
    kernelArgs = ((g0, g1), (ctypes.c_void_p, ctypes.c_void_p))

    # GPU1 reads g0 on GPU0 and writes g1 locally.
    checkCudaErrors(runtime.cudaSetDevice(gpuid[1]))
    device1 = checkCudaErrors(driver.cuDeviceGet(gpuid[1]))
    module1 = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device1))))
    kernel1 = checkCudaErrors(driver.cuModuleGetFunction(module1, b"SimpleKernel"))
    checkCudaErrors(driver.cuLaunchKernel(kernel1, blocks, 1, 1, threads, 1, 1, 0, 0, kernelArgs, 0))
    checkCudaErrors(runtime.cudaDeviceSynchronize())

    # GPU0 reads g1 on GPU1 and writes g0 locally: each value is now four times the first.
    checkCudaErrors(runtime.cudaSetDevice(gpuid[0]))
    device0 = checkCudaErrors(driver.cuDeviceGet(gpuid[0]))
    module0 = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device0))))
    kernel0 = checkCudaErrors(driver.cuModuleGetFunction(module0, b"SimpleKernel"))
    kernelArgs = ((g1, g0), (ctypes.c_void_p, ctypes.c_void_p))
    checkCudaErrors(driver.cuLaunchKernel(kernel0, blocks, 1, 1, threads, 1, 1, 0, 0, kernelArgs, 0))
    checkCudaErrors(runtime.cudaDeviceSynchronize())

    # cudaMemcpyPeer names both devices: GPU0's result lands in g1, then on the host.
    checkCudaErrors(runtime.cudaMemcpyPeer(g1, gpuid[1], g0, gpuid[0], buf_size))
    checkCudaErrors(runtime.cudaSetDevice(gpuid[1]))
    checkCudaErrors(runtime.cudaMemcpy(h0, g1, buf_size, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))

    error_count = 0
    for i in range(count):
        if h0_array[i] != float(i % 4096) * 4.0:
            if error_count < 5:
                print(f"Verification error @ element {i}: val = {h0_array[i]}, ref = {float(i % 4096) * 4.0}")
            error_count += 1

    checkCudaErrors(runtime.cudaSetDevice(gpuid[0]))
    checkCudaErrors(driver.cuModuleUnload(module0))
    checkCudaErrors(runtime.cudaDeviceDisablePeerAccess(gpuid[1]))
    checkCudaErrors(runtime.cudaSetDevice(gpuid[1]))
    checkCudaErrors(driver.cuModuleUnload(module1))
    checkCudaErrors(runtime.cudaDeviceDisablePeerAccess(gpuid[0]))
    checkCudaErrors(runtime.cudaFreeHost(h0))
    checkCudaErrors(runtime.cudaFree(g0))
    checkCudaErrors(runtime.cudaFree(g1))
    checkCudaErrors(runtime.cudaEventDestroy(start_event))
    checkCudaErrors(runtime.cudaEventDestroy(stop_event))

    if error_count:
        print(f"simpleP2P: FAILED: {error_count} wrong values")
        sys.exit(1)
    print(f"simpleP2P: {count} values verified after two peer kernels; PASSED")


if __name__ == "__main__":
    main()

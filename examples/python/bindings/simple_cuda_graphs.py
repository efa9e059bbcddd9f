"""CUDA graphs two ways: a graph built node by node with the driver API
(cuGraphAddMemcpyNode, cuGraphAddMemsetNode, cuGraphAddKernelNode) and the same
work captured from a stream with cudaStreamBeginCapture; each is instantiated,
launched several times and its reduction checked."""

import ctypes
import sys
from typing import Any

from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

THREADS_PER_BLOCK = 512

KERNEL_SOURCE = """
#define THREADS_PER_BLOCK 512

// Sums a block's shared values; every thread of the block calls it.
__device__ double block_sum(double value)
{
    __shared__ double tmp[THREADS_PER_BLOCK];
    tmp[threadIdx.x] = value;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride)
            tmp[threadIdx.x] += tmp[threadIdx.x + stride];
        __syncthreads();
    }
    return tmp[0];
}

extern "C" __global__ void reduce(const float *inputVec, double *outputVec, size_t inputSize, size_t outputSize)
{
    double sum = 0.0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < inputSize; i += gridDim.x * blockDim.x)
        sum += inputVec[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0 && blockIdx.x < outputSize)
        outputVec[blockIdx.x] = sum;
}

extern "C" __global__ void reduceFinal(const double *inputVec, double *result, size_t inputSize)
{
    double sum = 0.0;
    for (size_t i = threadIdx.x; i < inputSize; i += blockDim.x)
        sum += inputVec[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0)
        *result = sum;
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "simpleCudaGraphs_kernel.cu", arch)[0]


def cudaGraphsManual(kernels: Any, stream: Any, d_input: Any, h_input: Any, inputSize: int, d_partial: Any,
                     numOfBlocks: int, d_result: Any, h_result: Any) -> tuple[Any, Any]:
    """Builds the graph node by node: copy in and clear, two kernels, copy out."""
    reduce, reduceFinal = kernels
    context = checkCudaErrors(driver.cuCtxGetCurrent())
    graph = checkCudaErrors(driver.cuGraphCreate(0))

    copyParams = driver.CUDA_MEMCPY3D()
    copyParams.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_HOST
    copyParams.srcHost = h_input
    copyParams.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    copyParams.dstDevice = d_input
    copyParams.WidthInBytes = inputSize * ctypes.sizeof(ctypes.c_float)
    copyParams.srcPitch = copyParams.dstPitch = copyParams.WidthInBytes
    copyParams.srcHeight = copyParams.dstHeight = 1
    copyParams.Height = 1
    copyParams.Depth = 1
    memcpyNode = checkCudaErrors(driver.cuGraphAddMemcpyNode(graph, None, 0, copyParams, context))

    memsetParams = driver.CUDA_MEMSET_NODE_PARAMS()
    memsetParams.dst = d_partial
    memsetParams.value = 0
    memsetParams.elementSize = ctypes.sizeof(ctypes.c_float)
    memsetParams.width = numOfBlocks * 2
    memsetParams.height = 1
    memsetNode = checkCudaErrors(driver.cuGraphAddMemsetNode(graph, None, 0, memsetParams, context))

    kernelNodeParams = driver.CUDA_KERNEL_NODE_PARAMS()
    kernelNodeParams.func = reduce
    kernelNodeParams.gridDimX = numOfBlocks
    kernelNodeParams.gridDimY = kernelNodeParams.gridDimZ = 1
    kernelNodeParams.blockDimX = THREADS_PER_BLOCK
    kernelNodeParams.blockDimY = kernelNodeParams.blockDimZ = 1
    kernelNodeParams.sharedMemBytes = 0
    kernelNodeParams.kernelParams = ((d_input, d_partial, inputSize, numOfBlocks),
                                     (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t))
    dependencies = [memcpyNode, memsetNode]
    reduceNode = checkCudaErrors(driver.cuGraphAddKernelNode(graph, dependencies, len(dependencies), kernelNodeParams))

    finalParams = driver.CUDA_KERNEL_NODE_PARAMS()
    finalParams.func = reduceFinal
    finalParams.gridDimX = finalParams.gridDimY = finalParams.gridDimZ = 1
    finalParams.blockDimX = THREADS_PER_BLOCK
    finalParams.blockDimY = finalParams.blockDimZ = 1
    finalParams.kernelParams = ((d_partial, d_result, numOfBlocks),
                                (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t))
    finalNode = checkCudaErrors(driver.cuGraphAddKernelNode(graph, [reduceNode], 1, finalParams))

    copyBack = driver.CUDA_MEMCPY3D()
    copyBack.srcMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    copyBack.srcDevice = d_result
    copyBack.dstMemoryType = driver.CUmemorytype.CU_MEMORYTYPE_HOST
    copyBack.dstHost = h_result
    copyBack.WidthInBytes = ctypes.sizeof(ctypes.c_double)
    copyBack.srcPitch = copyBack.dstPitch = copyBack.WidthInBytes
    copyBack.srcHeight = copyBack.dstHeight = 1
    copyBack.Height = 1
    copyBack.Depth = 1
    checkCudaErrors(driver.cuGraphAddMemcpyNode(graph, [finalNode], 1, copyBack, context))

    _, numNodes = checkCudaErrors(driver.cuGraphGetNodes(graph))
    print(f"Built graph: {numNodes} nodes")
    graphExec = checkCudaErrors(driver.cuGraphInstantiate(graph, 0))
    return graph, graphExec


def cudaGraphsUsingStreamCapture(kernels: Any, stream: Any, d_input: Any, h_input: Any, inputSize: int,
                                 d_partial: Any, numOfBlocks: int, d_result: Any, h_result: Any) -> tuple[Any, Any]:
    """Records the same work from a stream and returns the captured graph, instantiated."""
    reduce, reduceFinal = kernels
    checkCudaErrors(runtime.cudaStreamBeginCapture(stream, runtime.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal))
    checkCudaErrors(runtime.cudaMemcpyAsync(d_input, h_input, inputSize * ctypes.sizeof(ctypes.c_float),
                                            runtime.cudaMemcpyKind.cudaMemcpyHostToDevice, stream))
    checkCudaErrors(runtime.cudaMemsetAsync(d_partial, 0, numOfBlocks * ctypes.sizeof(ctypes.c_double), stream))
    checkCudaErrors(driver.cuLaunchKernel(
        reduce, numOfBlocks, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, stream,
        ((d_input, d_partial, inputSize, numOfBlocks),
         (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)), 0))
    checkCudaErrors(driver.cuLaunchKernel(
        reduceFinal, 1, 1, 1, THREADS_PER_BLOCK, 1, 1, 0, stream,
        ((d_partial, d_result, numOfBlocks), (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)), 0))
    checkCudaErrors(runtime.cudaMemcpyAsync(h_result, d_result, ctypes.sizeof(ctypes.c_double),
                                            runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost, stream))
    graph = checkCudaErrors(runtime.cudaStreamEndCapture(stream))
    _, numNodes = checkCudaErrors(runtime.cudaGraphGetNodes(graph))
    print(f"Captured graph: {numNodes} nodes")
    graphExec = checkCudaErrors(runtime.cudaGraphInstantiate(graph, 0))
    return graph, graphExec


def main() -> None:
    size = 1 << 20
    maxBlocks = 512
    device = findCudaDevice()
    checkCudaErrors(runtime.cudaSetDevice(0))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernels = [checkCudaErrors(driver.cuModuleGetFunction(module, name)) for name in (b"reduce", b"reduceFinal")]

    # Pinned host memory: a captured cudaMemcpyAsync may not read pageable memory.
    h_input = checkCudaErrors(runtime.cudaMallocHost(size * ctypes.sizeof(ctypes.c_float)))
    h_result = checkCudaErrors(runtime.cudaMallocHost(ctypes.sizeof(ctypes.c_double)))
    inputVec = (ctypes.c_float * size).from_address(h_input)
    result = ctypes.c_double.from_address(h_result)
    # Quarters: every partial sum is exact, so the total is known to the last bit.
    for i in range(size):
        inputVec[i] = (i % 17) * 0.25
    expected = sum((i % 17) * 0.25 for i in range(size))

    d_input = checkCudaErrors(runtime.cudaMalloc(size * ctypes.sizeof(ctypes.c_float)))
    d_partial = checkCudaErrors(runtime.cudaMalloc(maxBlocks * ctypes.sizeof(ctypes.c_double)))
    d_result = checkCudaErrors(runtime.cudaMalloc(ctypes.sizeof(ctypes.c_double)))
    stream = checkCudaErrors(runtime.cudaStreamCreateWithFlags(runtime.cudaStreamNonBlocking))
    args = (kernels, stream, d_input, h_input, size, d_partial, maxBlocks, d_result, h_result)

    failures = []
    manual, manualExec = cudaGraphsManual(*args)
    for launch in range(3):
        result.value = -1.0
        checkCudaErrors(driver.cuGraphLaunch(manualExec, stream))
        checkCudaErrors(runtime.cudaStreamSynchronize(stream))
        if result.value != expected:
            failures.append(f"built graph, launch {launch}: {result.value}")
    captured, capturedExec = cudaGraphsUsingStreamCapture(*args)
    for launch in range(3):
        result.value = -1.0
        checkCudaErrors(runtime.cudaGraphLaunch(capturedExec, stream))
        checkCudaErrors(runtime.cudaStreamSynchronize(stream))
        if result.value != expected:
            failures.append(f"captured graph, launch {launch}: {result.value}")

    checkCudaErrors(driver.cuGraphExecDestroy(manualExec))
    checkCudaErrors(driver.cuGraphDestroy(manual))
    checkCudaErrors(runtime.cudaGraphExecDestroy(capturedExec))
    checkCudaErrors(runtime.cudaGraphDestroy(captured))
    checkCudaErrors(runtime.cudaStreamDestroy(stream))
    checkCudaErrors(runtime.cudaFree(d_input))
    checkCudaErrors(runtime.cudaFree(d_partial))
    checkCudaErrors(runtime.cudaFree(d_result))
    checkCudaErrors(runtime.cudaFreeHost(h_input))
    checkCudaErrors(runtime.cudaFreeHost(h_result))
    checkCudaErrors(driver.cuModuleUnload(module))

    if failures:
        print(f"simpleCudaGraphs: FAILED: expected {expected}; " + "; ".join(failures))
        sys.exit(1)
    print(f"simpleCudaGraphs: sum {expected} verified from 3 launches of each graph; PASSED")


if __name__ == "__main__":
    main()

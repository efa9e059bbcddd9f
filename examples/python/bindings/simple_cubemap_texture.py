"""A cubemap texture: six faces in a CUDA array made with cudaMalloc3DArray and
cudaArrayCubemap, filled by cudaMemcpy3D, read by a kernel through a texture
object (cudaCreateTextureObject) with texCubemap; every texel comes back negated."""

import ctypes
import sys

from cuda.bindings import driver, runtime

from helpers import checkCudaErrors, compile_ptx, compute_capability, findCudaDevice

KERNEL_SOURCE = """
// Samples the centre of texel (x, y) of every face, so linear filtering returns the texel itself.
extern "C" __global__ void transformKernel(float *g_odata, int width, cudaTextureObject_t tex)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    float u = ((x + 0.5f) / (float)width) * 2.f - 1.f;
    float v = ((y + 0.5f) / (float)width) * 2.f - 1.f;
    for (unsigned int face = 0; face < 6; face++) {
        float cx, cy, cz;
        // The direction that hits (u, v) of this face (the face order of the CUDA guide).
        if (face == 0) { cx = 1;  cy = -v; cz = -u; }
        else if (face == 1) { cx = -1; cy = -v; cz = u; }
        else if (face == 2) { cx = u;  cy = 1;  cz = v; }
        else if (face == 3) { cx = u;  cy = -1; cz = -v; }
        else if (face == 4) { cx = u;  cy = -v; cz = 1; }
        else { cx = -u; cy = -v; cz = -1; }
        g_odata[face * width * width + y * width + x] = -texCubemap<float>(tex, cx, cy, cz);
    }
}
"""


def compile_kernels(arch: str) -> bytes:
    return compile_ptx(KERNEL_SOURCE, "simpleCubemapTexture_kernel.cu", arch)[0]


def main() -> None:
    device = findCudaDevice()
    checkCudaErrors(runtime.cudaSetDevice(0))
    module = checkCudaErrors(driver.cuModuleLoadData(compile_kernels(compute_capability(device))))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"transformKernel"))

    width = 64
    num_faces = 6
    num_layers = 1
    cubemap_size = width * width * num_faces
    size = cubemap_size * num_layers * ctypes.sizeof(ctypes.c_float)
    h_data = (ctypes.c_float * cubemap_size)()
    for i in range(cubemap_size):
        h_data[i] = float(i)

    d_data = checkCudaErrors(runtime.cudaMalloc(size))
    channelDesc = checkCudaErrors(runtime.cudaCreateChannelDesc(
        32, 0, 0, 0, runtime.cudaChannelFormatKind.cudaChannelFormatKindFloat))
    cu_3darray = checkCudaErrors(runtime.cudaMalloc3DArray(
        channelDesc, runtime.make_cudaExtent(width, width, num_faces), runtime.cudaArrayCubemap))

    myparms = runtime.cudaMemcpy3DParms()
    myparms.srcPos = runtime.make_cudaPos(0, 0, 0)
    myparms.dstPos = runtime.make_cudaPos(0, 0, 0)
    myparms.srcPtr = runtime.make_cudaPitchedPtr(h_data, width * ctypes.sizeof(ctypes.c_float), width, width)
    myparms.dstArray = cu_3darray
    myparms.extent = runtime.make_cudaExtent(width, width, num_faces)
    myparms.kind = runtime.cudaMemcpyKind.cudaMemcpyHostToDevice
    checkCudaErrors(runtime.cudaMemcpy3D(myparms))

    texRes = runtime.cudaResourceDesc()
    texRes.resType = runtime.cudaResourceType.cudaResourceTypeArray
    texRes.res.array.array = cu_3darray
    texDescr = runtime.cudaTextureDesc()
    texDescr.normalizedCoords = True
    texDescr.filterMode = runtime.cudaTextureFilterMode.cudaFilterModeLinear
    # The field reads back as a new list: set all three modes at once.
    texDescr.addressMode = [runtime.cudaTextureAddressMode.cudaAddressModeWrap] * 3
    texDescr.readMode = runtime.cudaTextureReadMode.cudaReadModeElementType
    # None: no resource view.
    tex = checkCudaErrors(runtime.cudaCreateTextureObject(texRes, texDescr, None))

    dimBlock = runtime.dim3()
    dimBlock.x = dimBlock.y = 8
    dimBlock.z = 1
    dimGrid = runtime.dim3()
    dimGrid.x = width // dimBlock.x
    dimGrid.y = width // dimBlock.y
    dimGrid.z = 1
    print(f"Covering the cubemap of {width} x {width} x {num_faces}: grid {dimGrid.x} x {dimGrid.y}, "
          f"blocks of {dimBlock.x} x {dimBlock.y} threads")
    kernelArgs = ((d_data, width, tex), (ctypes.c_void_p, ctypes.c_int, None))
    checkCudaErrors(driver.cuLaunchKernel(kernel, dimGrid.x, dimGrid.y, dimGrid.z,
                                          dimBlock.x, dimBlock.y, dimBlock.z, 0, 0, kernelArgs, 0))
    checkCudaErrors(runtime.cudaDeviceSynchronize())

    h_data_ref = (ctypes.c_float * cubemap_size)()
    checkCudaErrors(runtime.cudaMemcpy(h_data_ref, d_data, size, runtime.cudaMemcpyKind.cudaMemcpyDeviceToHost))
    wrong = [i for i in range(cubemap_size) if abs(h_data_ref[i] + h_data[i]) > 5e-3 * max(1.0, h_data[i])]

    checkCudaErrors(runtime.cudaDestroyTextureObject(tex))
    checkCudaErrors(runtime.cudaFree(d_data))
    checkCudaErrors(runtime.cudaFreeArray(cu_3darray))
    checkCudaErrors(driver.cuModuleUnload(module))
    if wrong:
        i = wrong[0]
        print(f"simpleCubemapTexture: FAILED: {len(wrong)} texels, [{i}] = {h_data_ref[i]}, expected {-h_data[i]}")
        sys.exit(1)
    print(f"simpleCubemapTexture: {cubemap_size} texels of {num_faces} faces verified; PASSED")


if __name__ == "__main__":
    main()

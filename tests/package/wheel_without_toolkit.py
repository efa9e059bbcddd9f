"""Run by check_wheel.sh in a fresh venv holding the cubind wheel and NVIDIA's
CUDA 13 wheels (cubind[cu13]), with the CUDA toolkit out of sight: compiles
two units to LTO-IR with NVRTC, links them with nvJitLink into a cubin, and
checks that cubind took NVRTC, nvJitLink, the runtime and the CUDA headers
from the wheels.
"""
import os
import struct
import sys

import cubind
from cubind.bindings import nvjitlink, nvrtc, runtime

KERNEL = b"""
extern __device__ float twice(float v);
extern "C" __global__ void scale(float* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = twice(data[i]);
}
"""
HELPER = b"__device__ float twice(float v) { return 2.0f * v; }\n"


def ltoir(source, name):
    status, prog = nvrtc.nvrtcCreateProgram(source, name, 0, None, None)
    assert status == 0, status
    try:
        options = [b"-arch=sm_90", b"-dlto", b"-rdc=true"]
        status, = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        assert status == 0, nvrtc.nvrtcGetProgramLog(prog)[1]
        status, code = nvrtc.nvrtcGetLTOIR(prog)
        assert status == 0, status
        return code
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def main():
    site_packages = os.path.dirname(os.path.dirname(os.path.abspath(cubind.__file__)))
    wheel_lib = os.path.join(site_packages, "nvidia", "cu13", "lib")
    toolkit_hidden = not os.path.exists("/usr/local/cuda/include/cuda.h")
    print(f"toolkit at /usr/local/cuda: {'hidden' if toolkit_hidden else 'visible (wheels come first in the search)'}")

    units = [ltoir(KERNEL, b"kernel.cu"), ltoir(HELPER, b"helper.cu")]
    handle = nvjitlink.create(2, ["-arch=sm_90", "-lto"])
    try:
        for i, code in enumerate(units):
            nvjitlink.add_data(handle, nvjitlink.InputType.NVJITLINK_INPUT_LTOIR, code, len(code), f"unit{i}")
        nvjitlink.complete(handle)
        cubin = nvjitlink.get_linked_cubin(handle)
    finally:
        nvjitlink.destroy(handle)
    assert cubin[:4] == b"\x7fELF" and struct.unpack_from("<H", cubin, 18)[0] == 190, "not a CUDA ELF"
    print(f"NVRTC -> LTO-IR ({len(units[0])} + {len(units[1])} bytes) -> nvJitLink -> cubin ({len(cubin)} bytes)")

    err, version = runtime.cudaRuntimeGetVersion()
    assert err == 0, err
    for name in ("nvrtc", "nvjitlink", "runtime"):
        status = cubind.library_status(name)
        print(f"{name:<10} {status['path']}")
        assert status["loaded"], status
        assert os.path.dirname(os.path.realpath(status["path"])) == os.path.realpath(wheel_lib), \
            f"{name} came from {status['path']}, not from the wheels in {wheel_lib}"
    include = cubind.get_cuda_include()
    print(f"{'headers':<10} {include}")
    assert os.path.realpath(include) == os.path.realpath(os.path.join(site_packages, "nvidia", "cu13", "include"))
    print("wheel check: NVRTC, nvJitLink, the runtime and cuda.h all came from NVIDIA's wheels")
    return 0


if __name__ == "__main__":
    sys.exit(main())

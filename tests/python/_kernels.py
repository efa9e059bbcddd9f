"""CUDA C++ sources for the GPU tests and their compilation with cubind's NVRTC."""
import shutil
import subprocess

from cubind.bindings import nvrtc

# The launch shape of the element-wise kernels (fill, add, saxpy): N elements,
# one thread each.
N = 1000
BLOCK = 128
GRID = (N + BLOCK - 1) // BLOCK

SOURCE = r"""
struct Pair { int a; double b; };

__device__ int touched;
__device__ int counter;

extern "C" {

__global__ void touch() { touched = 42; }

__global__ void fill(int* out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

__global__ void add(int* data, int delta, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += delta;
}

__global__ void saxpy(float a, const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void take_pair(Pair p, double* out) { *out = p.a + p.b; }

__global__ void mixed(signed char c, short s, long long ll, float f, double d, long long* out)
{
    out[0] = c;
    out[1] = s;
    out[2] = ll;
    out[3] = (long long)(f * 1000.0f);
    out[4] = (long long)(d * 1000.0);
}

__global__ void bump_counter() { atomicAdd(&counter, 1); }

__global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) { }
}

}
"""


def compile_source(arch, kind, src=SOURCE):
    """kind: 'cubin' (sm_<arch>), 'ptx' (compute_<arch>) or 'ltoir'. Returns bytes."""
    status, prog = nvrtc.nvrtcCreateProgram(src, b"kernels.cu", 0, None, None)
    assert status == 0, status
    try:
        if kind == "ptx":
            options = [f"-arch=compute_{arch}".encode()]
        elif kind == "ltoir":
            options = [f"-arch=sm_{arch}".encode(), b"-dlto"]
        else:
            options = [f"-arch=sm_{arch}".encode()]
        status, = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        if status != 0:
            log = nvrtc.nvrtcGetProgramLog(prog)[1]
            raise AssertionError(f"NVRTC failed: {log.decode(errors='replace')}")
        getter = {"ptx": nvrtc.nvrtcGetPTX, "cubin": nvrtc.nvrtcGetCUBIN, "ltoir": nvrtc.nvrtcGetLTOIR}[kind]
        status, data = getter(prog)
        assert status == 0
        return data
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def nvcc_fatbin(arch, workdir):
    """A fatbin built by nvcc (sm_<arch> SASS + compute_<arch> PTX), or None without nvcc."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    src = workdir / "kernels.cu"
    out = workdir / "kernels.fatbin"
    src.write_text(SOURCE)
    cmd = [nvcc, "-fatbin", f"-gencode=arch=compute_{arch},code=[sm_{arch},compute_{arch}]",
           "-o", str(out), str(src)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"nvcc failed: {result.stderr}")
    return out.read_bytes()

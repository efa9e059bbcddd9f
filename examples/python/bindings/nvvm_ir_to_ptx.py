"""NVVM IR to PTX with libNVVM: a SAXPY kernel written in NVVM IR (LLVM IR for
NVIDIA GPUs) that calls libdevice's __nv_fmaf, so libdevice is added lazily (only
the functions the kernel uses are linked), verified, compiled for the device's
compute capability, loaded with cuModuleLoadData and launched; y = a * x + y is
checked on the host."""

import ctypes
import glob
import os
import sys

from cuda.bindings import driver, nvvm

from helpers import checkCudaErrors, compute_capability, findCudaDevice

N = 4096
THREADS = 256

NVVM_IR = """
target triple = "nvptx64-unknown-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"

declare float @__nv_fmaf(float, float, float)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

; y[i] = a * x[i] + y[i] for i < n
define void @saxpy(float %a, float* %x, float* %y, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inside = icmp slt i32 %i, %n
  br i1 %inside, label %body, label %done
body:
  %px = getelementptr inbounds float, float* %x, i32 %i
  %py = getelementptr inbounds float, float* %y, i32 %i
  %vx = load float, float* %px
  %vy = load float, float* %py
  %r = call float @__nv_fmaf(float %a, float %vx, float %vy)
  store float %r, float* %py
  br label %done
done:
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float, float*, float*, i32)* @saxpy, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
"""


def libdevice_path() -> str:
    """libdevice.10.bc of the CUDA toolkit ($CUDA_HOME/nvvm/libdevice)."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for root in filter(None, roots):
        found = sorted(glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice.*.bc")))
        if found:
            return found[0]
    raise RuntimeError("libdevice.*.bc not found under $CUDA_HOME/nvvm/libdevice or /usr/local/cuda/nvvm/libdevice")


def compile_kernels(arch: str) -> bytes:
    """NVVM IR to PTX for compute_<arch>, with libdevice; raises nvvmError with the log on failure."""
    with open(libdevice_path(), "rb") as f:
        libdevice = f.read()
    ir = NVVM_IR.encode()
    prog = nvvm.create_program()
    try:
        nvvm.add_module_to_program(prog, ir, len(ir), "saxpy.ll")
        nvvm.lazy_add_module_to_program(prog, libdevice, len(libdevice), "libdevice")
        options = [f"-arch=compute_{arch}"]
        try:
            nvvm.verify_program(prog, len(options), options)
            nvvm.compile_program(prog, len(options), options)
        except nvvm.nvvmError:
            log = bytearray(nvvm.get_program_log_size(prog))
            nvvm.get_program_log(prog, log)
            print(bytes(log).decode(errors="replace"), file=sys.stderr)
            raise
        ptx = bytearray(nvvm.get_compiled_result_size(prog))
        nvvm.get_compiled_result(prog, ptx)
    finally:
        nvvm.destroy_program(prog)
    return bytes(ptx)


def main() -> None:
    major, minor = nvvm.version()
    print(f"libNVVM {major}.{minor}, NVVM IR {'.'.join(map(str, nvvm.ir_version()))}")
    device = findCudaDevice()
    context = checkCudaErrors(driver.cuCtxCreate(None, 0, device))
    ptx = compile_kernels(compute_capability(device))
    module = checkCudaErrors(driver.cuModuleLoadData(ptx))
    kernel = checkCudaErrors(driver.cuModuleGetFunction(module, b"saxpy"))

    a = 2.5
    hx = (ctypes.c_float * N)(*[float(i) for i in range(N)])
    hy = (ctypes.c_float * N)(*[float(N - i) for i in range(N)])
    dx = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(hx)))
    dy = checkCudaErrors(driver.cuMemAlloc(ctypes.sizeof(hy)))
    checkCudaErrors(driver.cuMemcpyHtoD(dx, hx, ctypes.sizeof(hx)))
    checkCudaErrors(driver.cuMemcpyHtoD(dy, hy, ctypes.sizeof(hy)))

    args = ((a, dx, dy, N), (ctypes.c_float, None, None, ctypes.c_int))
    blocks = (N + THREADS - 1) // THREADS
    checkCudaErrors(driver.cuLaunchKernel(kernel, blocks, 1, 1, THREADS, 1, 1, 0, 0, args, 0))
    checkCudaErrors(driver.cuCtxSynchronize())
    result = (ctypes.c_float * N)()
    checkCudaErrors(driver.cuMemcpyDtoH(result, dy, ctypes.sizeof(result)))

    checkCudaErrors(driver.cuMemFree(dx))
    checkCudaErrors(driver.cuMemFree(dy))
    checkCudaErrors(driver.cuModuleUnload(module))
    checkCudaErrors(driver.cuCtxDestroy(context))

    wrong = [i for i in range(N) if result[i] != a * hx[i] + hy[i]]
    if wrong:
        print(f"nvvm_ir_to_ptx: FAILED: {len(wrong)} wrong values, first at {wrong[0]}: "
              f"{result[wrong[0]]} != {a * hx[wrong[0]] + hy[wrong[0]]}")
        sys.exit(1)
    print(f"nvvm_ir_to_ptx: saxpy of {N} floats compiled by libNVVM verified; PASSED")


if __name__ == "__main__":
    main()

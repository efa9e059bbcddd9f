"""cubind.bindings.nvvm: libNVVM compiles NVVM IR to PTX (with libdevice linked
lazily where the IR calls its functions), logs, errors as nvvmError, enums, bad
input, and the same PTX as cuda.bindings from the same IR.

No GPU needed: libNVVM is a compiler.
"""
import glob
import os

import pytest

from cubind.bindings import nvvm

try:
    from cuda.bindings import nvvm as cuda_nvvm
except ImportError:  # pragma: no cover
    cuda_nvvm = None

needs_cuda_bindings = pytest.mark.skipif(cuda_nvvm is None, reason="cuda-bindings is not installed")

DATALAYOUT = ("e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64"
              "-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64")

# One kernel, data[tid] *= 2 (libNVVM 2.0 reads typed pointers).
TWICE = f"""target triple = "nvptx64-unknown-cuda"
target datalayout = "{DATALAYOUT}"

define void @twice(float* %data) {{
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr inbounds float, float* %data, i32 %tid
  %v = load float, float* %p
  %r = fmul float %v, 2.0
  store float %r, float* %p
  ret void
}}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{{!0}}
!0 = !{{void (float*)* @twice, !"kernel", i32 1}}
!nvvmir.version = !{{!1}}
!1 = !{{i32 2, i32 0, i32 3, i32 1}}
""".encode()

# A kernel that calls libdevice's __nv_sqrtf: it compiles only with libdevice added.
ROOT = f"""target triple = "nvptx64-unknown-cuda"
target datalayout = "{DATALAYOUT}"

declare float @__nv_sqrtf(float)

define void @root(float* %data) {{
entry:
  %v = load float, float* %data
  %r = call float @__nv_sqrtf(float %v)
  store float %r, float* %data
  ret void
}}

!nvvm.annotations = !{{!0}}
!0 = !{{void (float*)* @root, !"kernel", i32 1}}
!nvvmir.version = !{{!1}}
!1 = !{{i32 2, i32 0, i32 3, i32 1}}
""".encode()


def libdevice():
    """libdevice.10.bc of the toolkit (nvvm/libdevice) or of the nvidia-nvvm wheel."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    for root in filter(None, roots):
        found = glob.glob(os.path.join(root, "nvvm", "libdevice", "libdevice.*.bc"))
        if found:
            return found[0]
    pytest.skip("no libdevice.*.bc under $CUDA_HOME/nvvm/libdevice or /usr/local/cuda/nvvm/libdevice")


@pytest.fixture
def program():
    made = []

    def make(*modules, lazy=()):
        prog = nvvm.create_program()
        made.append(prog)
        for i, ir in enumerate(modules):
            nvvm.add_module_to_program(prog, ir, len(ir), f"module{i}.ll")
        for i, ir in enumerate(lazy):
            nvvm.lazy_add_module_to_program(prog, ir, len(ir), f"lazy{i}.bc")
        return prog

    yield make
    for prog in made:
        nvvm.destroy_program(prog)


def compile_ptx(prog, *options):
    nvvm.compile_program(prog, len(options), list(options))
    return nvvm.get_compiled_result(prog)


# ---------------------------------------------------------------------------


def test_versions():
    major, minor = nvvm.version()
    assert (major, minor) >= (2, 0)
    ir = nvvm.ir_version()
    assert len(ir) == 4 and all(isinstance(v, int) for v in ir)
    assert ir[:2] >= (2, 0)


def test_compiles_nvvm_ir_to_ptx(program):
    prog = program(TWICE)
    ptx = compile_ptx(prog, "-arch=compute_80")
    assert type(ptx) is bytes
    assert len(ptx) == nvvm.get_compiled_result_size(prog)
    assert ptx.endswith(b"\0")  # the size counts the terminator, as nvvm.h says
    text = ptx.rstrip(b"\0").decode()
    assert ".target sm_80" in text
    assert ".visible .entry twice(" in text
    assert "mul.f32" in text or "add.f32" in text


def test_verify_accepts_good_ir(program):
    assert nvvm.verify_program(program(TWICE), 1, ["-arch=compute_90"]) is None


def test_libdevice_linked_lazily(program):
    with open(libdevice(), "rb") as f:
        bitcode = f.read()
    # Without libdevice the call to __nv_sqrtf stays an external call the PTX cannot resolve.
    alone = compile_ptx(program(ROOT), "-arch=compute_80").rstrip(b"\0").decode()
    assert "__nv_sqrtf" in alone
    ptx = compile_ptx(program(ROOT, lazy=[bitcode]), "-arch=compute_80").rstrip(b"\0").decode()
    assert ".visible .entry root(" in ptx
    assert "sqrt" in ptx
    assert "__nv_sqrtf" not in ptx  # inlined from libdevice, not left as a call


def test_compile_error_raises_and_the_log_says_why(program):
    bad = TWICE.replace(b"fmul float", b"fmul flaot")
    prog = program(bad)
    with pytest.raises(nvvm.nvvmError) as info:
        nvvm.compile_program(prog, 1, ["-arch=compute_80"])
    assert info.value.status == nvvm.Result.ERROR_COMPILATION
    assert "ERROR_COMPILATION" in str(info.value)
    log = nvvm.get_program_log(prog)
    assert len(log) == nvvm.get_program_log_size(prog)
    assert b"module0.ll" in log


def test_unknown_option_raises(program):
    with pytest.raises(nvvm.nvvmError) as info:
        nvvm.compile_program(program(TWICE), 1, ["-no-such-option"])
    assert info.value.status == nvvm.Result.ERROR_INVALID_OPTION


def test_outputs_into_caller_buffers(program):
    """The cuda.bindings idiom: a buffer of the reported size, filled in place."""
    prog = program(TWICE)
    nvvm.compile_program(prog, 1, ["-arch=compute_80"])
    size = nvvm.get_compiled_result_size(prog)
    buf = bytearray(size)
    assert nvvm.get_compiled_result(prog, buf) is None
    assert bytes(buf) == nvvm.get_compiled_result(prog)
    log = b" " * nvvm.get_program_log_size(prog)  # one byte: the interpreter's shared b" "
    nvvm.get_program_log(prog, log)
    assert b" " == bytes([32])


def test_error_string():
    assert nvvm.get_error_string(nvvm.Result.SUCCESS) == "NVVM_SUCCESS"
    assert nvvm.get_error_string(nvvm.Result.ERROR_COMPILATION) == "NVVM_ERROR_COMPILATION"


def test_result_enum_matches_the_header():
    assert int(nvvm.Result.SUCCESS) == 0
    assert int(nvvm.Result.ERROR_INVALID_OPTION) == 7
    assert int(nvvm.Result.ERROR_CANCELLED) == 10
    assert nvvm.Result(9) is nvvm.Result.ERROR_COMPILATION


def test_bad_input_is_a_python_exception(program):
    prog = program(TWICE)
    with pytest.raises(TypeError):
        nvvm.add_module_to_program(prog, 1.5, 10, "x.ll")  # neither a buffer nor an address
    with pytest.raises((TypeError, ValueError)):
        nvvm.compile_program(prog, 2, ["-arch=compute_80"])  # fewer options than counted
    with pytest.raises(TypeError):
        nvvm.compile_program(prog, 1, [3])
    with pytest.raises(TypeError):
        nvvm.get_compiled_result(prog, 12345)  # an int is no output buffer
    with pytest.raises((ValueError, OverflowError)):
        nvvm.add_module_to_program(prog, TWICE, len(TWICE) + 100, "x.ll")  # size past the buffer


def test_made_up_or_destroyed_program_raises_instead_of_crashing():
    # libNVVM reads a program handle as its own object; the raw layer records
    # the programs nvvmCreateProgram made until nvvmDestroyProgram.
    for call in (lambda p: nvvm.compile_program(p, 0, []), nvvm.get_program_log_size, nvvm.destroy_program):
        with pytest.raises(ValueError, match="prog: 123456 is not a live nvvmProgram: nvvmCreateProgram made no"):
            call(123456)
    prog = nvvm.create_program()
    address = int(prog)
    assert nvvm.get_program_log_size(address) >= 1  # a live program's address works
    nvvm.destroy_program(prog)
    with pytest.raises(ValueError, match="nvvmDestroyProgram has destroyed it"):
        nvvm.get_program_log_size(address)


def test_null_program_raises_nvvm_error():
    with pytest.raises(nvvm.nvvmError) as info:
        nvvm.compile_program(0, 0, [])
    assert info.value.status == nvvm.Result.ERROR_INVALID_PROGRAM


def test_error_pickles():
    import pickle
    err = pickle.loads(pickle.dumps(nvvm.nvvmError(nvvm.Result.ERROR_INVALID_IR)))
    assert err.status == nvvm.Result.ERROR_INVALID_IR


@needs_cuda_bindings
@pytest.mark.parametrize("arch", ["compute_75", "compute_80", "compute_90"])
def test_same_ptx_as_cuda_bindings(program, arch):
    ours = compile_ptx(program(TWICE), f"-arch={arch}")
    prog = cuda_nvvm.create_program()
    try:
        cuda_nvvm.add_module_to_program(prog, TWICE, len(TWICE), "module0.ll")
        cuda_nvvm.compile_program(prog, 1, [f"-arch={arch}"])
        buf = bytearray(cuda_nvvm.get_compiled_result_size(prog))
        cuda_nvvm.get_compiled_result(prog, buf)
    finally:
        cuda_nvvm.destroy_program(prog)
    assert ours == bytes(buf)


@needs_cuda_bindings
def test_cuda_bindings_call_forms_work(program):
    """A cuda.bindings program's calls, as written for it, run unchanged."""
    prog = nvvm.create_program()
    try:
        nvvm.add_module_to_program(prog, TWICE, len(TWICE), "twice.ll")
        nvvm.verify_program(prog, 1, ["-arch=compute_80"])
        nvvm.compile_program(prog, 1, ["-arch=compute_80"])
        buf = bytearray(nvvm.get_compiled_result_size(prog))
        nvvm.get_compiled_result(prog, buf)
        assert b".entry twice" in buf
    finally:
        nvvm.destroy_program(prog)


@pytest.mark.parametrize("name", ["nvjitlink", "nvvm", "nvfatbin"])
def test_stub_lists_every_enum_member_under_both_names(name):
    """A type checker reading the .pyi accepts Result.SUCCESS (cuda.bindings' name) as well
    as Result.NVVM_SUCCESS (the header's): the stub lists every member the module has."""
    import ast
    import importlib

    module = importlib.import_module(f"cubind.bindings.{name}")
    with open(os.path.splitext(module.__file__)[0].split(".cpython")[0] + ".pyi") as f:
        tree = ast.parse(f.read())
    stub = {node.name: {t.target.id for t in node.body if isinstance(t, ast.AnnAssign)}
            for node in tree.body if isinstance(node, ast.ClassDef)}
    checked = 0
    for enum_name in ("Result", "InputType"):
        cls = getattr(module, enum_name, None)
        if cls is None:
            continue
        assert set(cls.__members__) == stub[enum_name], enum_name
        assert "SUCCESS" in stub[enum_name] or enum_name == "InputType"
        checked += 1
    assert checked

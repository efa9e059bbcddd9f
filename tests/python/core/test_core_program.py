"""Program, ObjectCode and Linker: NVRTC and nvJitLink, no GPU needed."""
import io
import pathlib

import pytest

from cubind.core import Linker, LinkerOptions, NvJitLinkError, NVRTCError, ObjectCode, Program, ProgramOptions

ARCH = "sm_90"

TEMPLATE = r"""
template <typename T>
__global__ void scale(T* data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
"""

CALLER = r"""
extern __device__ int helper(int);
extern "C" __global__ void apply(int* data) { data[threadIdx.x] = helper(data[threadIdx.x]); }
"""

HELPER = r"""
__device__ int helper(int x) { return 3 * x + 1; }
"""


def compile_(source, target, **options):
    return Program(source, "c++", ProgramOptions(arch=ARCH, **options)).compile(target)


def test_compile_to_ptx_holds_the_kernel_and_names_the_program():
    code = Program('extern "C" __global__ void k(int* p) { *p = 7; }', "c++",
                   ProgramOptions(arch=ARCH, name="seven.cu")).compile("ptx")
    assert code.code_type == "ptx"
    assert code.name == "seven.cu"
    assert isinstance(code.code, bytes)
    assert b".visible .entry k(" in code.code
    assert b".target sm_90" in code.code


def test_compile_to_cubin_is_an_elf_for_the_arch():
    code = compile_('extern "C" __global__ void k() {}', "cubin")
    assert code.code_type == "cubin"
    assert code.code[:4] == b"\x7fELF"


def test_compile_to_ltoir_is_non_empty_without_asking_for_lto():
    # LTO-IR needs -dlto; the core adds it for this target.
    code = compile_(HELPER, "ltoir", relocatable_device_code=True)
    assert code.code_type == "ltoir"
    assert len(code.code) > 100


def test_name_expressions_map_to_mangled_names():
    code = Program(TEMPLATE, "c++", ProgramOptions(arch=ARCH)).compile(
        "ptx", name_expressions=("scale<float>", "scale<int>"))
    assert code.symbol_mapping == {"scale<float>": b"_Z5scaleIfEvPT_S0_i", "scale<int>": b"_Z5scaleIiEvPT_S0_i"}
    for mangled in code.symbol_mapping.values():
        assert b".entry " + mangled in code.code


def test_a_program_compiles_again_for_another_target():
    program = Program(TEMPLATE, "c++", ProgramOptions(arch=ARCH))
    first = program.compile("ptx", name_expressions=["scale<double>"])
    second = program.compile("cubin", name_expressions=["scale<double>"])
    assert first.code_type == "ptx" and second.code_type == "cubin"
    assert first.symbol_mapping == second.symbol_mapping


def test_a_failed_compile_raises_nvrtc_error_with_the_log():
    program = Program("__global__ void k() { undeclared; }", "c++", ProgramOptions(arch=ARCH, name="bad.cu"))
    with pytest.raises(NVRTCError, match="NVRTC_ERROR_COMPILATION") as caught:
        program.compile("ptx")
    assert 'identifier "undeclared" is undefined' in str(caught.value)
    assert "bad.cu" in str(caught.value)
    assert caught.value.status == 6


def test_logs_receive_warnings():
    logs = io.StringIO()
    Program("__global__ void k() { int unused; }", "c++", ProgramOptions(arch=ARCH)).compile("ptx", logs=logs)
    assert "declared but never referenced" in logs.getvalue()
    assert "\x00" not in logs.getvalue()


def test_options_reach_nvrtc():
    source = "#if !defined(ANSWER) || ANSWER != 42\n#error ANSWER\n#endif\n__global__ void k() {}"
    compile_(source, "ptx", define_macro=("ANSWER", "42"))
    with pytest.raises(NVRTCError, match="ANSWER"):
        compile_(source, "ptx", define_macro="ANSWER")


def test_include_path_reaches_nvrtc(tmp_path):
    (tmp_path / "answer.h").write_text("#define ANSWER 42\n")
    code = compile_('#include "answer.h"\nextern "C" __global__ void k(int* p) { *p = ANSWER; }', "ptx",
                    include_path=str(tmp_path))
    assert b"42" in code.code


def test_bad_targets_and_code_types():
    program = Program("__global__ void k() {}", "c++", ProgramOptions(arch=ARCH))
    with pytest.raises(ValueError, match="fatbin"):
        program.compile("fatbin")
    with pytest.raises(RuntimeError, match="code_type"):
        Program("x", "fortran", ProgramOptions(arch=ARCH))
    with pytest.raises(NotImplementedError, match="NVVM"):
        Program("x", "nvvm", ProgramOptions(arch=ARCH))
    with pytest.raises(TypeError, match="str"):
        Program(b"__global__ void k() {}", "c++", ProgramOptions(arch=ARCH))
    # A dict of options is taken, as in cuda.core; anything else is refused.
    assert Program("__global__ void k() {}", "c++", {"arch": ARCH}).compile("ptx").code_type == "ptx"
    with pytest.raises(TypeError, match="ProgramOptions or as a dict"):
        Program("x", "c++", 5)
    with pytest.raises(TypeError, match="not int"):
        program.compile("ptx", name_expressions=5)
    with pytest.raises(TypeError, match="name_expressions"):
        program.compile("ptx", name_expressions="k")
    with pytest.raises(ValueError, match="arch"):
        Program("__global__ void k() {}", "c++", ProgramOptions(arch="ampere")).compile("ptx")


def test_a_closed_program_raises():
    program = Program("__global__ void k() {}", "c++", ProgramOptions(arch=ARCH))
    program.close()
    assert program.is_closed
    program.close()
    with pytest.raises(RuntimeError, match="closed"):
        program.compile("ptx")


def test_ptx_source_compiles_through_the_linker():
    ptx = compile_('extern "C" __global__ void k(int* p) { *p = 1; }', "ptx").code.decode()
    program = Program(ptx, "ptx", ProgramOptions(arch=ARCH))
    assert program.backend == "nvJitLink"
    cubin = program.compile("cubin")
    assert cubin.code_type == "cubin" and cubin.code[:4] == b"\x7fELF"


def test_object_code_from_bytes_and_path_for_every_kind(tmp_path):
    cubin = compile_('extern "C" __global__ void k() {}', "cubin").code
    for kind in ("cubin", "ptx", "ltoir", "fatbin", "object", "library"):
        make = getattr(ObjectCode, f"from_{kind}")
        from_bytes = make(cubin, name=f"n-{kind}", symbol_mapping={"a": "b"})
        assert from_bytes.code == cubin
        assert from_bytes.code_type == kind
        assert from_bytes.name == f"n-{kind}"
        assert from_bytes.symbol_mapping == {"a": "b"}
        path = tmp_path / f"code.{kind}"
        path.write_bytes(cubin)
        for given in (str(path), path):
            from_path = make(given)
            assert from_path.code == str(path)
            assert from_path.code_type == kind
            assert from_path.name == ""


def test_object_code_bad_input():
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        ObjectCode()
    with pytest.raises(TypeError, match="bytes or a path"):
        ObjectCode.from_cubin(3)
    with pytest.raises(ValueError, match="empty"):
        ObjectCode.from_ptx(b"")
    with pytest.raises(TypeError, match="symbol_mapping"):
        ObjectCode.from_ptx(b"x", symbol_mapping=[("a", "b")])
    with pytest.raises(OSError, match="missing.cubin"):
        ObjectCode.from_cubin("/nonexistent/missing.cubin")


def test_get_kernel_of_ltoir_asks_to_link_first():
    code = compile_(HELPER, "ltoir", relocatable_device_code=True)
    with pytest.raises(RuntimeError, match="link it first"):
        code.get_kernel("helper")


def _lto_pieces():
    return (compile_(CALLER, "ltoir", relocatable_device_code=True),
            compile_(HELPER, "ltoir", relocatable_device_code=True))


def test_link_two_ltoir_pieces_to_cubin():
    linker = Linker(*_lto_pieces(), options=LinkerOptions(arch=ARCH, link_time_optimization=True, name="lto"))
    code = linker.link("cubin")
    assert code.code_type == "cubin" and code.name == "lto"
    assert code.code[:4] == b"\x7fELF"
    assert b"apply" in code.code
    assert linker.get_error_log() == ""
    linker.close()
    assert linker.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        linker.link("cubin")


def test_link_to_ptx_inlines_the_helper():
    options = LinkerOptions(arch=ARCH, link_time_optimization=True, ptx=True)
    code = Linker(*_lto_pieces(), options=options).link("ptx")
    assert code.code_type == "ptx"
    assert b".entry apply(" in code.code
    # Link-time optimisation inlined helper(): 3 * x + 1 is in apply's body.
    assert b"helper" not in code.code


def test_a_failed_link_raises_nvjitlink_error_with_the_log():
    caller, _ = _lto_pieces()
    with pytest.raises(NvJitLinkError, match="Unresolved extern function"):
        Linker(caller, options=LinkerOptions(arch=ARCH, link_time_optimization=True)).link("cubin")


def test_linker_bad_input():
    caller, helper = _lto_pieces()
    with pytest.raises(ValueError, match="At least one ObjectCode"):
        Linker(options=LinkerOptions(arch=ARCH))
    with pytest.raises(TypeError, match=r"object_codes\[1\]"):
        Linker(caller, b"bytes", options=LinkerOptions(arch=ARCH))
    linker = Linker(caller, helper, options=LinkerOptions(arch=ARCH, link_time_optimization=True))
    with pytest.raises(ValueError, match="Unsupported target type: fatbin"):
        linker.link("fatbin")
    with pytest.raises(ValueError, match="ptx=True"):
        linker.link("ptx")
    linker.link("cubin")
    with pytest.raises(RuntimeError, match="linked already"):
        linker.link("cubin")
    with pytest.raises(ValueError, match="optimization_level"):
        Linker(caller, options=LinkerOptions(arch=ARCH, optimization_level=5))
    with pytest.raises(ValueError, match="sm_90"):
        Linker(caller, options=LinkerOptions(arch="compute_90"))
    assert Linker.which_backend() == "nvJitLink"


def test_link_reads_a_cubin_file_from_disk(tmp_path):
    ptx = compile_('extern "C" __global__ void k(int* p) { *p = 1; }', "ptx").code
    path = pathlib.Path(tmp_path) / "k.ptx"
    path.write_bytes(ptx)
    code = Linker(ObjectCode.from_ptx(path), options=LinkerOptions(arch=ARCH)).link("cubin")
    assert code.code[:4] == b"\x7fELF"


def test_object_code_pickles_as_its_code():
    import pickle

    code = Program(TEMPLATE, "c++", ProgramOptions(arch=ARCH, name="t.cu")).compile(
        "cubin", name_expressions=["scale<float>"])
    copy = pickle.loads(pickle.dumps(code))
    assert (copy.code, copy.code_type, copy.name, copy.symbol_mapping) == (
        code.code, code.code_type, code.name, code.symbol_mapping)

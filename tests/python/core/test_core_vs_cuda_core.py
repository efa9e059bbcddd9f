"""cubind.core against NVIDIA's cuda.core 1.2, installed beside it: every
public name of the parts cubind.core provides exists in both with the same
parameters and defaults, the option dataclasses have the same fields, and the
paths that need no GPU (Program, Linker, ObjectCode, options) give the same
results. What cubind leaves out on purpose is listed here with its reason and
in docs/migration-from-cuda-core.md."""
import ast
import dataclasses
import glob
import importlib
import inspect
import os

import pytest

cc = pytest.importorskip("cuda.core", reason="cuda.core 1.2 is not installed (pip install 'cuda-core==1.2.*')")
import cubind.core as cb  # noqa: E402

ARCH = "sm_90"

# The names of cuda.core 1.2 that cubind.core provides.
NAMES = [
    "Buffer", "Context", "ContextOptions", "Device", "DeviceMemoryResource", "DeviceMemoryResourceOptions",
    "DeviceResources", "Event", "EventOptions", "Kernel", "LaunchConfig", "LegacyPinnedMemoryResource", "Linker",
    "LinkerOptions", "MemoryResource", "ObjectCode", "PinnedMemoryResource", "PinnedMemoryResourceOptions",
    "Program", "ProgramOptions", "SMResource", "SMResourceOptions", "Stream", "StreamOptions", "WorkqueueResource",
    "WorkqueueResourceOptions", "launch", "LEGACY_DEFAULT_STREAM", "PER_THREAD_DEFAULT_STREAM",
    "GraphMemoryResource",
    "Host", "ManagedBuffer", "ManagedMemoryResource", "ManagedMemoryResourceOptions", "VirtualMemoryResource",
    "VirtualMemoryResourceOptions",
    "TensorMapDescriptor", "TensorMapDescriptorOptions",
    "GraphicsResource",
]
# cuda.core.texture's names are compared in test_core_texture_vs_cuda_core.py.

# Members of those classes cubind.core does not have, each with its reason
# (the same list is in docs/migration-from-cuda-core.md).
LEFT_OUT = {
    "ObjectCode.get_module": "cubind loads code as a CUlibrary; there is no CUmodule",
}


def _stub_signatures():
    """Every function of cuda.core's .pyi stubs, as {"Class.method": ast args}."""
    root = os.path.dirname(importlib.import_module(cc.Program.__module__).__file__)
    found = {}
    for path in glob.glob(os.path.join(root, "**", "*.pyi"), recursive=True):
        tree = ast.parse(open(path).read())
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        found.setdefault(f"{node.name}.{item.name}", item.args)
            elif isinstance(node, ast.FunctionDef):
                found.setdefault(node.name, node.args)
    return found


STUBS = _stub_signatures()


def _from_stub(args, drop_first):
    """[(name, kind, default)] from a stub's ast arguments."""
    out = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"
        out.append((arg.arg, kind, ast.literal_eval(default) if default is not None else "<required>"))
    if args.vararg:
        out.append((args.vararg.arg, "var_positional", "<required>"))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append((arg.arg, "keyword_only", ast.literal_eval(default) if default is not None else "<required>"))
    if args.kwarg:
        out.append((args.kwarg.arg, "var_keyword", "<required>"))
    return out[1:] if drop_first else out


def _from_inspect(obj, drop_self):
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params = [(p.name, p.kind.name.lower(), "<required>" if p.default is p.empty else p.default)
              for p in signature.parameters.values()]
    if drop_self and params and params[0][0] in ("self", "cls"):
        params = params[1:]
    if [p[1] for p in params] == ["var_positional", "var_keyword"]:
        return None  # a slot wrapper's (*args, **kwargs): says nothing
    return params


def _reference(cls_name, cls, member):
    """cuda.core's parameters for cls.member (cls is cuda.core's class
    cls_name): from the object where inspect can read it, else from the stub."""
    params = _from_inspect(getattr(cls, member), drop_self=True)
    if params is not None:
        return params
    stub = STUBS.get(f"{cls_name}.{member}")
    if stub is None:
        return None
    static = isinstance(inspect.getattr_static(cls, member, None), staticmethod)
    return _from_stub(stub, drop_first=not static)


def _member_problems(name, ours, theirs, left_out, skip=()):
    """What differs between cuda.core's class theirs and cubind's ours, member
    by member (skip: members not compared here): missing members, a property
    against a method, other parameters. Members in left_out must be absent."""
    problems = []
    for member in _members(theirs):
        key = f"{name}.{member}"
        if member in skip:
            continue
        if key in left_out:
            assert not hasattr(ours, member), f"{key} is listed as left out, but cubind.core has it"
            continue
        if not hasattr(ours, member):
            problems.append(f"{key} is missing")
            continue
        their_is_data = not callable(getattr(theirs, member)) or inspect.isdatadescriptor(
            inspect.getattr_static(theirs, member))
        our_is_data = not callable(getattr(ours, member)) or inspect.isdatadescriptor(
            inspect.getattr_static(ours, member))
        if their_is_data != our_is_data:
            problems.append(f"{key}: a {'property' if their_is_data else 'method'} in cuda.core, not in cubind")
            continue
        if their_is_data:
            continue
        expected = _reference(name, theirs, member)
        if expected is None:
            continue
        got = _from_inspect(getattr(ours, member), drop_self=True)
        if got is None:
            problems.append(f"{key}: cubind's signature cannot be read")
        elif _positional_ok(got) != _positional_ok(expected):
            problems.append(f"{key}: cubind {got} != cuda.core {expected}")
    return problems


def _members(cls):
    return sorted(m for m in dir(cls) if not m.startswith("_"))


def _positional_ok(params):
    # A method of cubind may take a parameter positional-only where
    # cuda.core's stub, written without the marker, shows it as both.
    return [(n, "positional_or_keyword" if k == "positional_only" else k, d) for n, k, d in params]


@pytest.mark.parametrize("name", NAMES)
def test_name_exists_in_both(name):
    assert hasattr(cc, name), f"cuda.core has no {name}: the list of names is out of date"
    assert hasattr(cb, name), f"cubind.core has no {name}"
    assert isinstance(getattr(cb, name), type) == isinstance(getattr(cc, name), type)


CLASSES = [n for n in NAMES if isinstance(getattr(cc, n), type)]


@pytest.mark.parametrize("name", CLASSES)
def test_every_member_exists_and_has_the_same_parameters(name):
    ours, theirs = getattr(cb, name), getattr(cc, name)
    # A dataclass's fields are compared by the test of the option dataclasses
    # below; a field without a default is no class attribute of a Python one.
    fields = {f.name for f in dataclasses.fields(theirs)} if dataclasses.is_dataclass(theirs) else set()
    problems = _member_problems(name, ours, theirs, LEFT_OUT, skip=fields)
    assert not problems, "\n".join(problems)


def test_what_is_left_out_is_in_the_migration_guide():
    guide = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "migration-from-cuda-core.md")).read()
    for key in LEFT_OUT:
        assert f"`{key.split('.')[1]}" in guide or f"`{key}`" in guide, f"{key} is not in docs/migration-from-cuda-core.md"


@pytest.mark.parametrize("name", [n for n in CLASSES if not dataclasses.is_dataclass(getattr(cc, n))])
def test_constructor_has_the_same_parameters(name):
    # The option dataclasses are compared field by field below.
    ours, theirs = getattr(cb, name), getattr(cc, name)
    expected = _from_inspect(theirs, drop_self=False)
    if expected is None:
        stub = STUBS.get(f"{name}.__init__") or STUBS.get(f"{name}.__new__")
        expected = _from_stub(stub, drop_first=True) if stub else None
    if expected is None or expected == [("args", "var_positional", "<required>"), ("kwargs", "var_keyword", "<required>")]:
        # No parameters to compare: then both construct without arguments,
        # or both refuse to (classes made only by other calls).
        try:
            theirs()
        except (RuntimeError, TypeError):
            with pytest.raises((RuntimeError, TypeError)):
                ours()
        else:
            ours()
        return
    got = _from_inspect(ours, drop_self=False)
    assert got is not None, f"cubind.core.{name}'s constructor signature cannot be read"
    assert _positional_ok(got) == _positional_ok(expected)


OPTIONS = [n for n in NAMES if dataclasses.is_dataclass(getattr(cc, n))]


@pytest.mark.parametrize("name", OPTIONS)
def test_option_dataclasses_have_the_same_fields_and_defaults(name):
    ours, theirs = getattr(cb, name), getattr(cc, name)
    assert dataclasses.is_dataclass(ours)

    def fields(cls):
        return [(f.name, f.default) for f in dataclasses.fields(cls)]

    assert fields(ours) == fields(theirs)


def test_exception_bases_match():
    from cuda.core._utils.cuda_utils import CUDAError, NVRTCError

    assert cb.CUDAError.__bases__ == CUDAError.__bases__
    assert [c.__name__ for c in cb.NVRTCError.__mro__[:2]] == [c.__name__ for c in NVRTCError.__mro__[:2]]


# ProgramOptions.as_bytes("nvrtc"): the same option strings, field by field.
PROGRAM_CASES = [
    {},
    {"relocatable_device_code": True}, {"relocatable_device_code": False},
    {"extensible_whole_program": True}, {"debug": True}, {"lineinfo": True}, {"device_code_optimize": True},
    {"ptxas_options": "-v"}, {"ptxas_options": ["-v", "-O2"]}, {"max_register_count": 32},
    {"ftz": True}, {"ftz": False}, {"prec_sqrt": False}, {"prec_div": False}, {"fma": False},
    {"use_fast_math": True}, {"extra_device_vectorization": True}, {"link_time_optimization": True},
    {"gen_opt_lto": True}, {"define_macro": "A"}, {"define_macro": ("A", "1")},
    {"define_macro": ["A", ("B", "2")]}, {"undefine_macro": ["U", "V"]}, {"include_path": ["/a", "/b"]},
    {"pre_include": "h.h"}, {"no_source_include": True}, {"std": "c++20"}, {"builtin_move_forward": False},
    {"builtin_initializer_list": False}, {"disable_warnings": True}, {"restrict": True},
    {"device_as_default_execution_space": True}, {"device_int128": True}, {"optimization_info": "inline"},
    {"no_display_error_number": True}, {"diag_error": 1}, {"diag_suppress": [177, 550]}, {"diag_warn": [2]},
    {"brief_diagnostics": True}, {"time": "t.csv"}, {"split_compile": 4}, {"fdevice_syntax_only": True},
    {"minimal": True}, {"no_cache": True}, {"fdevice_time_trace": "t.json"}, {"device_float128": True},
    {"frandom_seed": "1"}, {"ofast_compile": "max"}, {"pch": True}, {"create_pch": "p.pch"},
    {"use_pch": "p.pch"}, {"pch_dir": "/tmp"}, {"pch_verbose": True}, {"pch_messages": False},
    {"instantiate_templates_in_pch": True}, {"numba_debug": True},
    {"debug": True, "lineinfo": True, "std": "c++17", "define_macro": ["X"], "max_register_count": 64},
]


@pytest.mark.parametrize("case", PROGRAM_CASES, ids=lambda c: ",".join(c) or "defaults")
def test_program_options_render_the_same(case):
    ours = cb.ProgramOptions(arch=ARCH, **case)
    theirs = cc.ProgramOptions(arch=ARCH, **case)
    assert ours.as_bytes("nvrtc") == theirs.as_bytes("nvrtc")


def test_every_program_option_field_is_covered_by_a_case():
    covered = {k for case in PROGRAM_CASES for k in case} | {"name", "arch"}
    # Fields NVRTC 13.0 cannot take (bundled headers need 13.3) or that
    # belong to the NVVM backend.
    not_nvrtc = {"use_bundled_headers", "extra_sources", "use_libdevice"}
    assert {f.name for f in dataclasses.fields(cb.ProgramOptions)} - covered == not_nvrtc


LINKER_CASES = [
    {}, {"max_register_count": 32}, {"time": True}, {"verbose": True}, {"link_time_optimization": True},
    {"ptx": True}, {"optimization_level": 2}, {"debug": True}, {"lineinfo": True}, {"ftz": True},
    {"ftz": False}, {"prec_div": False}, {"prec_sqrt": True}, {"fma": False}, {"kernels_used": "k"},
    {"kernels_used": ["a", "b"]}, {"variables_used": ["v"]}, {"optimize_unused_variables": True},
    {"ptxas_options": ["-v"]}, {"split_compile": 0}, {"split_compile_extended": 2}, {"no_cache": True},
]

# Where cuda.core 1.2 renders a False flag as if it were True; cubind leaves
# the option out (listed in docs/migration-from-cuda-core.md).
LINKER_FALSE_FLAGS = [{"time": False}, {"optimize_unused_variables": False}]


@pytest.mark.parametrize("case", LINKER_CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "defaults")
def test_linker_options_render_the_same(case):
    assert cb.LinkerOptions(arch=ARCH, **case).as_bytes() == cc.LinkerOptions(arch=ARCH, **case).as_bytes()


@pytest.mark.parametrize("case", LINKER_FALSE_FLAGS, ids=lambda c: next(iter(c)))
def test_linker_false_flags_are_left_out(case):
    (field, _), = case.items()
    assert cb.LinkerOptions(arch=ARCH, **case).as_bytes() == [f"-arch={ARCH}".encode()]
    assert len(cc.LinkerOptions(arch=ARCH, **case).as_bytes()) == 2


def test_every_linker_option_field_is_covered_by_a_case():
    covered = {k for case in LINKER_CASES for k in case} | {"name", "arch", "numba_debug"}
    assert {f.name for f in dataclasses.fields(cb.LinkerOptions)} == covered


TEMPLATE = r"""
template <typename T> __global__ void scale(T* data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
"""


def _compile(module, target, source=TEMPLATE, names=("scale<float>", "scale<double>"), **options):
    program = module.Program(source, "c++", module.ProgramOptions(arch=ARCH, **options))
    return program.compile(target, name_expressions=names)


def test_cubin_compiles_to_the_same_bytes_and_names():
    ours, theirs = _compile(cb, "cubin"), _compile(cc, "cubin")
    assert ours.code_type == theirs.code_type == "cubin"
    assert ours.name == theirs.name == "default_program"
    assert ours.symbol_mapping == theirs.symbol_mapping
    assert ours.code == theirs.code


def test_ltoir_of_both_links_to_the_same_kernel():
    ours = _compile(cb, "ltoir", relocatable_device_code=True, link_time_optimization=True)
    theirs = _compile(cc, "ltoir", relocatable_device_code=True, link_time_optimization=True)
    assert ours.code_type == theirs.code_type == "ltoir"
    assert ours.code == theirs.code
    linked = []
    for module, code in ((cb, ours), (cc, theirs)):
        linker = module.Linker(code, options=module.LinkerOptions(arch=ARCH, link_time_optimization=True))
        linked.append(linker.link("cubin"))
        linker.close()
    assert linked[0].code_type == linked[1].code_type == "cubin"
    assert linked[0].code == linked[1].code


def test_object_code_constructors_agree(tmp_path):
    cubin = _compile(cb, "cubin").code
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    for kind in ("cubin", "ptx", "ltoir", "fatbin", "object", "library"):
        for given in (cubin, str(path)):
            ours = getattr(cb.ObjectCode, f"from_{kind}")(given, name="n", symbol_mapping={"a": "b"})
            theirs = getattr(cc.ObjectCode, f"from_{kind}")(given, name="n", symbol_mapping={"a": "b"})
            assert (ours.code, ours.code_type, ours.name, ours.symbol_mapping) == (
                theirs.code, theirs.code_type, theirs.name, theirs.symbol_mapping)


def test_launch_config_agrees():
    for kwargs in ({"grid": 4, "block": 128}, {"grid": (2, 3), "block": (32, 4, 2), "shmem_size": 1024},
                   {"grid": (1, 1, 1), "block": 1, "shmem_size": 0}):
        ours, theirs = cb.LaunchConfig(**kwargs), cc.LaunchConfig(**kwargs)
        assert repr(ours) == repr(theirs)
        for field in ("grid", "block", "cluster", "shmem_size", "is_cooperative"):
            assert getattr(ours, field) == getattr(theirs, field), field
    for bad in ({"grid": 0, "block": 1}, {"grid": (1, 2, 3, 4), "block": 1}, {"grid": 1.5, "block": 1},
                {"block": 1}, {"grid": 1}):
        with pytest.raises(ValueError) as theirs:
            cc.LaunchConfig(**bad)
        with pytest.raises(ValueError) as ours:
            cb.LaunchConfig(**bad)
        assert str(ours.value) == str(theirs.value)


def test_errors_agree_on_closed_objects_and_bad_targets():
    for module in (cb, cc):
        program = module.Program("__global__ void k() {}", "c++", module.ProgramOptions(arch=ARCH))
        with pytest.raises(ValueError):
            program.compile("fatbin")
        program.close()
        with pytest.raises(RuntimeError, match="Program has been closed"):
            program.compile("cubin")
        with pytest.raises(ValueError, match="At least one ObjectCode object must be provided"):
            module.Linker(options=module.LinkerOptions(arch=ARCH))
        with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
            module.ObjectCode()


@pytest.mark.parametrize("module, name, our_module", [
    ("_device", "DeviceProperties", "_device_properties"), ("_module", "KernelAttributes", "_module"),
    ("_module", "KernelOccupancy", "_module"), ("_memory._ipc", "IPCAllocationHandle", "_memory._ipc"),
    ("_memory._ipc", "IPCBufferDescriptor", "_memory._ipc"), ("_event", "IPCEventDescriptor", "_memory._ipc")])
def test_helper_classes_have_the_same_members(module, name, our_module):
    theirs = getattr(importlib.import_module(f"cuda.core.{module}"), name)
    ours = getattr(importlib.import_module(f"cubind.core.{our_module}"), name)
    missing = [m for m in _members(theirs) if not hasattr(ours, m)]
    assert not missing
    for member in _members(theirs):
        their_static = inspect.getattr_static(theirs, member)
        if callable(their_static) and not inspect.isdatadescriptor(their_static):
            expected = _from_inspect(getattr(theirs, member), drop_self=True)
            if expected is None and f"{name}.{member}" in STUBS:
                expected = _from_stub(STUBS[f"{name}.{member}"], drop_first=True)
            if expected is not None:
                assert _positional_ok(_from_inspect(getattr(ours, member), drop_self=True)) == _positional_ok(expected)


def test_checkpoint_process_has_the_same_members_and_refuses_the_same_input():
    theirs, ours = cc.checkpoint, cb.checkpoint
    assert ours.__all__ == theirs.__all__ == ["Process"]
    problems = _member_problems("Process", ours.Process, theirs.Process, {})
    assert not problems, "\n".join(problems)
    assert _positional_ok(_from_inspect(ours.Process, drop_self=False)) == _from_inspect(theirs.Process, drop_self=False)
    for pid in (True, 1.5, "1", None, 0, -3):
        with pytest.raises(Exception) as expected:
            theirs.Process(pid)
        with pytest.raises(expected.type) as got:
            ours.Process(pid)
        # cuda.core's words, and the value besides.
        assert str(expected.value) in str(got.value), (str(expected.value), str(got.value))


def test_graphics_resource_refuses_direct_construction_and_bad_flags_alike():
    for module in (cb, cc):
        with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
            module.GraphicsResource()
        with pytest.raises(ValueError, match="Unknown register flag 'bogus'"):
            module.GraphicsResource.from_gl_buffer(1, flags="bogus")
        with pytest.raises(ValueError, match="Unknown register flag 'bogus'"):
            module.GraphicsResource.from_gl_image(1, 0x0DE1, flags=("read_only", "bogus"))


@pytest.mark.gpu
def test_ptx_compiles_to_the_same_text():
    # cuda.core checks that the driver can load the PTX it makes, so this
    # comparison needs a GPU.
    cc.Device(0).set_current()
    ours, theirs = _compile(cb, "ptx"), _compile(cc, "ptx")
    assert ours.code_type == theirs.code_type == "ptx"
    assert ours.symbol_mapping == theirs.symbol_mapping
    assert ours.code == theirs.code


# cuda.core.graph: the names cubind.core.graph provides, and what it leaves out.
GRAPH_NAMES = ["Graph", "GraphBuilder", "GraphCompleteOptions", "GraphCondition", "GraphDebugPrintOptions",
               "GraphDefinition", "GraphNode", "AllocNode", "ChildGraphNode", "ConditionalNode", "EmptyNode",
               "EventRecordNode", "EventWaitNode", "ExecutableChildGraphNode", "ExecutableEventRecordNode",
               "ExecutableEventWaitNode", "ExecutableGraphNode", "ExecutableHostCallbackNode",
               "ExecutableKernelNode", "ExecutableMemcpyNode", "ExecutableMemsetNode", "FreeNode",
               "HostCallbackNode", "IfElseNode", "IfNode", "KernelNode", "MemcpyNode", "MemsetNode", "SwitchNode",
               "WhileNode"]
GRAPH_LEFT_OUT = {}


def test_graph_module_names_are_provided_or_left_out():
    import cubind.core.graph as cb_graph
    import cuda.core.graph as cc_graph

    assert sorted(cc_graph.__all__) == sorted(GRAPH_NAMES + [n for n in GRAPH_LEFT_OUT if "." not in n])
    assert sorted(cb_graph.__all__) == sorted(GRAPH_NAMES)
    for name in GRAPH_NAMES:
        assert isinstance(getattr(cb_graph, name), type) == isinstance(getattr(cc_graph, name), type)


@pytest.mark.parametrize("name", GRAPH_NAMES)
def test_graph_members_have_the_same_parameters(name):
    import cubind.core.graph as cb_graph
    import cuda.core.graph as cc_graph

    ours, theirs = getattr(cb_graph, name), getattr(cc_graph, name)
    if dataclasses.is_dataclass(theirs):
        assert dataclasses.is_dataclass(ours)
        assert [(f.name, f.default) for f in dataclasses.fields(ours)] == \
            [(f.name, f.default) for f in dataclasses.fields(theirs)]
        return
    problems = _member_problems(name, ours, theirs, GRAPH_LEFT_OUT)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["Graph", "GraphBuilder"])
def test_graph_classes_refuse_direct_construction_alike(name):
    import cubind.core.graph as cb_graph
    import cuda.core.graph as cc_graph

    with pytest.raises(Exception) as theirs:
        getattr(cc_graph, name)()
    with pytest.raises(type(theirs.value)):
        getattr(cb_graph, name)()


def test_graph_left_out_is_in_the_migration_guide():
    guide = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "migration-from-cuda-core.md")).read()
    for key in GRAPH_LEFT_OUT:
        assert f"`{key}`" in guide or f"`{key.split('.')[-1]}`" in guide, \
            f"{key} is not in docs/migration-from-cuda-core.md"
# The batched memory operations of cuda.core.utils.
UTILS_NAMES = ["copy_batch", "prefetch_batch", "discard_batch", "discard_prefetch_batch", "CopyOptions",
               "MemcpyOverlapMode", "MemcpySrcAccessOrder"]


@pytest.mark.parametrize("name", UTILS_NAMES)
def test_utils_names_have_the_same_parameters(name):
    import cubind.core.utils as ours_utils
    import cuda.core.utils as their_utils

    ours, theirs = getattr(ours_utils, name), getattr(their_utils, name)
    if dataclasses.is_dataclass(theirs):
        assert [(f.name, f.default) for f in dataclasses.fields(ours)] == [
            (f.name, f.default) for f in dataclasses.fields(theirs)]
        return
    if isinstance(theirs, type):
        assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs]
        return
    expected = _from_inspect(theirs, drop_self=False)
    if expected is None:
        expected = _from_stub(STUBS[name], drop_first=False)
    assert _from_inspect(ours, drop_self=False) == expected


def test_typing_enums_agree():
    import cubind.core.typing as ours_typing
    import cuda.core.typing as their_typing

    import enum

    enums = [name for name in ours_typing.__all__ if isinstance(getattr(ours_typing, name), enum.EnumMeta)]
    assert "VirtualMemoryAccessType" in enums and "ManagedMemoryLocationType" in enums
    for name in enums:
        assert [(m.name, m.value) for m in getattr(ours_typing, name)] == [
            (m.name, m.value) for m in getattr(their_typing, name)]


def test_copy_options_and_host_agree():
    import cubind.core.utils as ours_utils
    import cuda.core.utils as their_utils

    for kwargs in ({}, {"src_access_order": "any"}, {"overlap_mode": "prefer_overlap_with_compute"}):
        assert repr(ours_utils.CopyOptions(**kwargs)).split("(", 1)[1] == repr(
            their_utils.CopyOptions(**kwargs)).split("(", 1)[1]
    for bad in ({"src_access_order": "bogus"}, {"overlap_mode": 3}):
        with pytest.raises(ValueError) as theirs:
            their_utils.CopyOptions(**bad)
        with pytest.raises(ValueError) as ours:
            ours_utils.CopyOptions(**bad)
        assert str(ours.value) == str(theirs.value)
    for args, kwargs in (((), {}), ((2,), {}), ((), {"is_numa_current": True})):
        assert repr(cb.Host(*args, **kwargs)) == repr(cc.Host(*args, **kwargs))
    for args, kwargs in (((-1,), {}), ((True,), {}), ((1,), {"is_numa_current": True})):
        with pytest.raises(ValueError) as theirs:
            cc.Host(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            cb.Host(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)

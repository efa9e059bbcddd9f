"""Differential suite, structs and unions: the same field paths (nested and
anonymous members included), sizeof, getPtr() and construction from an address,
the same str() layout, and for every field the same default value and the same
result of writing each kind of value and reading it back (the value read, or the
type of the exception raised)."""
import ctypes

import pytest

cuda_bindings = pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")

import _diff  # noqa: E402

if _diff.version_mismatch():
    pytest.skip(_diff.version_mismatch(), allow_module_level=True)

STRUCT_CASES = _diff.struct_cases()
REPR_CASES = _diff.repr_cases()
FIELD_CASES = _diff.field_cases()


def _split(case):
    kind, _, rest = case.partition(":")
    module, _, rest = rest.partition(".")
    name, _, path = rest.partition(".")
    ours, theirs = _diff.PAIRS[module]
    return ours, theirs, name, path


def test_cases_were_found():
    for module in ("driver", "runtime"):
        assert any(c.startswith(f"struct:{module}.") for c in STRUCT_CASES), module
    assert len(FIELD_CASES) > 1000


def _our_class(ours, name):
    cls = getattr(ours, name, None)
    if cls is None:
        pytest.fail(f"cubind has no class {name} (see the name: case)")
    return cls


@pytest.mark.parametrize("case", STRUCT_CASES)
def test_struct(case):
    ours, theirs, name, _ = _split(case)
    their_cls, our_cls = getattr(theirs, name), _our_class(ours, name)
    their_paths = [p for p, _ in _diff.field_paths(their_cls())]
    our_paths = [p for p, _ in _diff.field_paths(our_cls())]
    missing = [p for p in their_paths if p not in our_paths]
    extra = [p for p in our_paths if p not in their_paths]
    assert not missing and not extra, f"fields missing in cubind: {missing}; only in cubind: {extra}"
    assert ours.sizeof(our_cls) == theirs.sizeof(their_cls)
    for cls in (our_cls, their_cls):
        address = cls().getPtr()
        assert isinstance(address, int) and address != 0, f"{cls.__module__}.{name}().getPtr() = {address!r}"
    # Views of one block of memory (construction from an address): each package
    # reads what the other wrote, field by field.
    memory = ctypes.create_string_buffer(ours.sizeof(our_cls))
    address = ctypes.addressof(memory)
    our_view, their_view = our_cls(_ptr=address), their_cls(_ptr=address)
    assert our_view.getPtr() == address and their_view.getPtr() == address
    differ = []
    for n, field in enumerate(p for p, v in _diff.field_paths(their_view) if "." not in p and type(v) is int):
        setattr(their_view, field, 7 + n)
        if getattr(our_view, field) != 7 + n:
            differ.append(f"{field}: cuda.bindings wrote {7 + n}, cubind reads {getattr(our_view, field)!r}")
        setattr(our_view, field, 100 + n)
        if getattr(their_view, field) != 100 + n:
            differ.append(f"{field}: cubind wrote {100 + n}, cuda.bindings reads {getattr(their_view, field)!r}")
    assert not differ, "; ".join(differ)


def _layout(text):
    """The `field :` skeleton of a struct's text: names, order and indentation."""
    lines = []
    for line in text.splitlines():
        head, sep, _ = line.partition(" :")
        lines.append(head.rstrip() if sep else "<value line>")
    return lines


@pytest.mark.parametrize("case", REPR_CASES)
def test_repr(case):
    ours, theirs, name, _ = _split(case)
    their_obj, our_obj = getattr(theirs, name)(), _our_class(ours, name)()
    try:
        expected = _layout(str(their_obj))
    except Exception as exc:  # cuda.bindings fails on some (CUeglFrame); cubind printing more is no difference
        pytest.skip(f"cuda.bindings' str() raises {type(exc).__name__}: {exc}")
    actual = _layout(str(our_obj))
    assert actual == expected, f"str() lines (cubind, cuda.bindings): {list(zip(actual, expected))[:8]}"
    assert repr(our_obj) == str(our_obj) or repr(their_obj) != str(their_obj)


@pytest.fixture(scope="session")
def sweeps():
    return _diff.field_sweeps()


@pytest.mark.parametrize("case", FIELD_CASES)
def test_field(case, sweeps):
    """The default value (KIND=default) or the outcome of writing one kind of value."""
    ours, theirs = sweeps[case]["ours"], sweeps[case]["theirs"]
    assert theirs is not None, f"the sweep of cuda.bindings reported nothing for {case}"
    if theirs == _diff.UNSTABLE:
        pytest.skip("cuda.bindings gives different results on two fresh objects (uninitialised memory)")
    assert ours == theirs, f"cubind: {ours}\ncuda.bindings: {theirs}"

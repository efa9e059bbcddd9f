"""Differential suite, public names: every public name of each module exists in
cubind.bindings and in cuda.bindings 13.0, as the same kind of object
(function, class, enum, constant) and, for constants, with the same value; every
enum has the same members with the same values."""
import pytest

cuda_bindings = pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")

import _diff  # noqa: E402

if _diff.version_mismatch():
    pytest.skip(_diff.version_mismatch(), allow_module_level=True)

NAME_CASES = _diff.name_cases()
ENUM_CASES = _diff.enum_cases()


def _split(case):
    kind, _, rest = case.partition(":")
    module, _, name = rest.partition(".")
    ours, theirs = _diff.PAIRS[module]
    return ours, theirs, name


def test_cases_were_found():
    for module in _diff.MODULES:
        assert any(c.startswith(f"name:{module}.") for c in NAME_CASES), module
    assert len(ENUM_CASES) > 100


@pytest.mark.parametrize("case", NAME_CASES)
def test_name(case):
    ours, theirs, name = _split(case)
    our_names, their_names = _diff.public_names(ours), _diff.public_names(theirs)
    assert name in their_names, f"cubind has {name} ({_diff.kind_of(our_names[name])}); cuda.bindings has not"
    assert name in our_names, f"cuda.bindings has {name} ({_diff.kind_of(their_names[name])}); cubind has not"
    ours_obj, theirs_obj = our_names[name], their_names[name]
    assert _diff.kind_of(ours_obj) == _diff.kind_of(theirs_obj)
    if not callable(theirs_obj):
        assert ours_obj == theirs_obj, f"value {ours_obj!r} in cubind, {theirs_obj!r} in cuda.bindings"


@pytest.mark.parametrize("case", ENUM_CASES)
def test_enum(case):
    ours, theirs, name = _split(case)
    their_members = {k: int(v) for k, v in getattr(theirs, name).__members__.items()}
    our_members = {k: int(v) for k, v in getattr(ours, name).__members__.items()}
    missing = sorted(set(their_members) - set(our_members))
    extra = sorted(set(our_members) - set(their_members))
    wrong = sorted(k for k in set(their_members) & set(our_members) if their_members[k] != our_members[k])
    assert not (missing or extra or wrong), (
        f"members missing in cubind: {missing}; only in cubind: {extra}; "
        f"other values: {[(k, our_members[k], their_members[k]) for k in wrong]}")

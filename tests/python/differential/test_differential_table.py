"""The table of known differences stays true: every entry names a case of the
suite and a reason of REASONS, and every deliberate reason is explained in
docs/migration-from-cuda-bindings.md."""
import os

import pytest

cuda_bindings = pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")

import _diff  # noqa: E402
import known_differences as known  # noqa: E402

if _diff.version_mismatch():
    pytest.skip(_diff.version_mismatch(), allow_module_level=True)

GUIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs",
                     "migration-from-cuda-bindings.md")


def all_cases():
    from test_differential_functions import CALL_CASES, INTROSPECT_CASES, SIGNATURE_CASES
    from test_differential_names import ENUM_CASES, NAME_CASES
    from test_differential_structs import FIELD_CASES, REPR_CASES, STRUCT_CASES
    try:
        from test_differential_libraries import CASES as LIBRARY_CASES
    except BaseException:  # that module skips without cuda-bindings 13.5: its entries stand
        LIBRARY_CASES = [c for c in known.DIFFERENCES if c.split("-", 1)[0] in ("nvml", "cufile", "cudla")]
    return set(NAME_CASES + ENUM_CASES + SIGNATURE_CASES + INTROSPECT_CASES + CALL_CASES
               + STRUCT_CASES + REPR_CASES + FIELD_CASES + LIBRARY_CASES)


def test_every_entry_is_a_case_of_the_suite():
    # The entries of the modules this suite compares (NVML's, cuFile's, cuDLA's: test_differential_libraries.py).
    ours = {k for k in known.DIFFERENCES if k.split(":", 1)[1].split(".", 1)[0] in _diff.PAIRS}
    stale = sorted(ours - all_cases())
    assert not stale, f"entries of known_differences.py that name no case: {stale[:20]}"


def test_every_entry_has_a_reason_and_every_reason_a_class():
    assert not sorted(set(known.DIFFERENCES.values()) - set(known.REASONS))
    assert not sorted(set(known.REASONS) - set(known.DIFFERENCES.values())), "reasons no case uses"
    for key, (cls, text, *rest) in known.REASONS.items():
        assert cls in range(1, 13), key
        assert len(text) > 20, key
        assert rest in ([], [known.D]), key


def test_deliberate_differences_are_in_the_migration_guide():
    with open(GUIDE) as f:
        guide = f.read()
    deliberate = [k for k, v in known.REASONS.items() if v[2:] == (known.D,)]
    assert deliberate
    missing = [k for k in deliberate if f"`{k}`" not in guide]
    assert not missing, f"deliberate differences not explained in {GUIDE}: {missing}"

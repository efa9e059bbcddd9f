"""Differential suite, NVML: cubind.bindings.nvml against cuda.bindings.nvml of
cuda-bindings 13.5 (the venv's 13.0 has no nvml module). NVIDIA's package is
imported in a child interpreter whose sys.path puts the repository's
.cuda-bindings-new first (scripts/setup.sh installs it there); both surfaces
are read by _nvml_surface.py.

Cases: nvml-name:N (the name exists in both, of the same kind; a constant with
the same value), nvml-signature:f (parameter names in order), nvml-enum:E
(members and values), nvml-struct:S (field names), nvml-exception:E (bases).
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
REFERENCE = os.environ.get("CUBIND_CUDA_BINDINGS_NEW", os.path.join(ROOT, ".cuda-bindings-new"))
SURFACE = os.path.join(HERE, "_nvml_surface.py")


def _surface(module, path_first=None):
    env = dict(os.environ)
    if path_first:
        env["PYTHONPATH"] = path_first + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, SURFACE, module], capture_output=True, text=True, env=env, timeout=300)
    if result.returncode != 0:
        return None, result.stderr[-2000:]
    return json.loads(result.stdout), None


def _load():
    if not os.path.isdir(os.path.join(REFERENCE, "cuda", "bindings")):
        return None, None, f"no cuda-bindings 13.5 in {REFERENCE} (scripts/setup.sh installs it)"
    theirs, err = _surface("cuda.bindings.nvml", REFERENCE)
    if theirs is None:
        return None, None, f"cuda.bindings.nvml does not import from {REFERENCE}: {err}"
    ours, err = _surface("cubind.bindings.nvml")
    if ours is None:
        pytest.fail(f"cubind.bindings.nvml does not import: {err}")
    return ours, theirs, None


OURS, THEIRS, SKIP = _load()
if SKIP:
    pytest.skip(SKIP, allow_module_level=True)


def _cases():
    cases = [f"nvml-name:{n}" for n in sorted(set(OURS["names"]) | set(THEIRS["names"]))]
    cases += [f"nvml-signature:{n}" for n in sorted(THEIRS["functions"]) if n in OURS["functions"]]
    cases += [f"nvml-enum:{n}" for n in sorted(THEIRS["enums"]) if n in OURS["enums"]]
    cases += [f"nvml-struct:{n}" for n in sorted(THEIRS["structs"]) if n in OURS["structs"]]
    cases += [f"nvml-exception:{n}" for n in sorted(THEIRS["exceptions"]) if n in OURS["exceptions"]]
    return cases


CASES = _cases()


def test_cases_were_found():
    assert len(THEIRS["functions"]) > 300 and len(THEIRS["enums"]) > 50
    assert any(c.startswith("nvml-signature:") for c in CASES)


@pytest.mark.parametrize("case", CASES)
def test_nvml(case):
    kind, _, name = case.partition(":")
    if kind == "nvml-name":
        assert name in THEIRS["names"], f"cubind has {name} ({OURS['names'][name]}); cuda.bindings.nvml has not"
        assert name in OURS["names"], f"cuda.bindings.nvml has {name} ({THEIRS['names'][name]}); cubind has not"
        assert OURS["names"][name] == THEIRS["names"][name]
    elif kind == "nvml-signature":
        assert OURS["functions"][name] == THEIRS["functions"][name]
    elif kind == "nvml-enum":
        ours, theirs = OURS["enums"][name], THEIRS["enums"][name]
        missing = sorted(set(theirs) - set(ours))
        extra = sorted(set(ours) - set(theirs))
        wrong = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])
        assert not (missing or extra or wrong), f"missing in cubind: {missing}; only in cubind: {extra}; other values: {wrong}"
    elif kind == "nvml-struct":
        assert OURS["structs"][name] == THEIRS["structs"][name]
    elif kind == "nvml-exception":
        assert OURS["exceptions"][name] == THEIRS["exceptions"][name]

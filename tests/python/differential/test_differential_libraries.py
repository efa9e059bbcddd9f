"""Differential suite, the libraries cuda.bindings 13.0 lacks or has older: cubind.bindings.nvml,
.cufile and .cudla against cuda.bindings' modules of cuda-bindings 13.5. NVIDIA's package is
imported in a child interpreter whose sys.path puts the repository's .cuda-bindings-new first
(scripts/setup.sh installs it there); both surfaces are read by _library_surface.py.

Cases, each prefixed by the module (nvml-, cufile-, cudla-): <m>-name:N (the name exists in
both, of the same kind; a constant with the same value), <m>-signature:f (parameter names in
order, and defaults), <m>-enum:E (members and values), <m>-struct:S (field names),
<m>-exception:E (bases and the constructor's parameters).
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
REFERENCE = os.environ.get("CUBIND_CUDA_BINDINGS_NEW", os.path.join(ROOT, ".cuda-bindings-new"))
SURFACE = os.path.join(HERE, "_library_surface.py")
# module -> (at least this many functions, at least this many enums) in cuda.bindings' module
MODULES = {"nvml": (300, 50), "cufile": (40, 10), "cudla": (13, 8)}


def _surface(module, path_first=None):
    env = dict(os.environ)
    if path_first:
        env["PYTHONPATH"] = path_first + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, SURFACE, module], capture_output=True, text=True, env=env, timeout=300)
    if result.returncode != 0:
        return None, result.stderr[-2000:]
    return json.loads(result.stdout), None


def _load(module):
    if not os.path.isdir(os.path.join(REFERENCE, "cuda", "bindings")):
        return None, None, f"no cuda-bindings 13.5 in {REFERENCE} (scripts/setup.sh installs it)"
    theirs, err = _surface(f"cuda.bindings.{module}", REFERENCE)
    if theirs is None:
        return None, None, f"cuda.bindings.{module} does not import from {REFERENCE}: {err}"
    ours, err = _surface(f"cubind.bindings.{module}")
    if ours is None:
        pytest.fail(f"cubind.bindings.{module} does not import: {err}")
    return ours, theirs, None


SURFACES = {}
SKIPS = {}
for _module in MODULES:
    _ours, _theirs, _skip = _load(_module)
    if _skip:
        SKIPS[_module] = _skip
    else:
        SURFACES[_module] = (_ours, _theirs)
if not SURFACES:
    pytest.skip("; ".join(SKIPS.values()), allow_module_level=True)


def _cases(m, ours, theirs):
    cases = [f"{m}-name:{n}" for n in sorted(set(ours["names"]) | set(theirs["names"]))]
    cases += [f"{m}-signature:{n}" for n in sorted(theirs["functions"]) if n in ours["functions"]]
    cases += [f"{m}-enum:{n}" for n in sorted(theirs["enums"]) if n in ours["enums"]]
    cases += [f"{m}-struct:{n}" for n in sorted(theirs["structs"]) if n in ours["structs"]]
    cases += [f"{m}-exception:{n}" for n in sorted(theirs["exceptions"]) if n in ours["exceptions"]]
    return cases


CASES = [c for m, (ours, theirs) in SURFACES.items() for c in _cases(m, ours, theirs)]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_cases_were_found(module):
    if module in SKIPS:
        pytest.skip(SKIPS[module])
    theirs = SURFACES[module][1]
    least_functions, least_enums = MODULES[module]
    assert len(theirs["functions"]) >= least_functions and len(theirs["enums"]) >= least_enums
    assert any(c.startswith(f"{module}-signature:") for c in CASES)


@pytest.mark.parametrize("case", CASES)
def test_library(case):
    kind, _, name = case.partition(":")
    module, _, kind = kind.partition("-")
    ours_all, theirs_all = SURFACES[module]
    if kind == "name":
        theirs_name = f"cuda.bindings.{module}"
        assert name in theirs_all["names"], f"cubind has {name} ({ours_all['names'][name]}); {theirs_name} has not"
        assert name in ours_all["names"], f"{theirs_name} has {name} ({theirs_all['names'][name]}); cubind has not"
        assert ours_all["names"][name] == theirs_all["names"][name]
    elif kind == "signature":
        assert ours_all["functions"][name] == theirs_all["functions"][name]
    elif kind == "enum":
        ours, theirs = ours_all["enums"][name], theirs_all["enums"][name]
        missing = sorted(set(theirs) - set(ours))
        extra = sorted(set(ours) - set(theirs))
        wrong = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])
        assert not (missing or extra or wrong), f"missing in cubind: {missing}; only in cubind: {extra}; other values: {wrong}"
    elif kind == "struct":
        assert ours_all["structs"][name] == theirs_all["structs"][name]
    elif kind == "exception":
        assert ours_all["exceptions"][name] == theirs_all["exceptions"][name]

"""cubind.core's sources in rooms a reader can see: one Cython module per
concern, each with the .pxd the others cimport, so the cimports are the
dependencies; nothing is textually included; every CUDA operation is the C++
core's, so nothing under python/ calls the raw layer; the state one process
must have once (the gate of Python host callbacks) is in one module."""

import importlib
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CORE = os.path.join(ROOT, "python", "cubind", "core")


def sources(*suffixes):
    found = []
    for folder, _, files in os.walk(CORE):
        found += [os.path.join(folder, f) for f in files if f.endswith(suffixes)]
    return sorted(found)


def module_name(path):
    rel = os.path.relpath(path, os.path.join(ROOT, "python"))
    return os.path.splitext(rel)[0].replace(os.sep, ".")


def test_nothing_is_textually_included():
    assert sources(".pxi") == []
    included = [(p, line) for p in sources(".pyx", ".pxd") for line in open(p)
                if re.match(r"\s*include\s+[\"']", line)]
    assert included == []


def test_every_module_declares_what_others_cimport_in_its_pxd():
    missing = [p for p in sources(".pyx") if not os.path.isfile(p[:-4] + ".pxd")]
    assert missing == []


def test_each_cimport_names_a_module_that_exists():
    wrong = []
    for path in sources(".pyx", ".pxd"):
        for match in re.finditer(r"^(?:from (cubind\.core\.[\w.]+) cimport|cimport (cubind\.core\.[\w.]+))",
                                 open(path).read(), re.M):
            target = (match.group(1) or match.group(2)).split(" as ")[0]
            file = os.path.join(ROOT, "python", *target.split(".")) + ".pxd"
            if not os.path.isfile(file):
                wrong.append((module_name(path), target))
    assert wrong == []


def test_no_source_under_python_calls_the_raw_layer():
    calls = [(os.path.relpath(p, ROOT), n + 1, line.strip())
             for p in sources(".pyx", ".pxd", ".hpp", ".py")
             for n, line in enumerate(open(p))
             if "cubind::raw" in line or "cubind/raw/" in line or "cubind.bindings.cydriver" in line]
    assert calls == []


def test_the_host_callback_gate_is_included_by_one_module():
    # Each extension module would have a gate of its own (RTLD_LOCAL): the
    # exit-time close would miss the callbacks of the others.
    users = [module_name(p) for p in sources(".pyx", ".pxd") if "_host_callbacks.hpp" in open(p).read()]
    assert users == ["cubind.core._host_callbacks"]


@pytest.mark.parametrize("name", [module_name(p) for p in sources(".pyx")])
def test_each_module_imports_and_keeps_its_classes_there(name):
    module = importlib.import_module(name)
    classes = [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == name]
    source = open(os.path.join(ROOT, "python", *name.split(".")) + ".pyx").read()
    defined = re.findall(r"^(?:cdef )?class (\w+)", source, re.M)
    assert sorted(c.__name__ for c in classes) == sorted(defined)

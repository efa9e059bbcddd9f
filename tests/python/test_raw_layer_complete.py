"""Every declaration of the raw-layer .pxd files compiles against the
CUDA headers and libcubind: a generated module takes the address of every
function and the size of every complete type."""
import os
import re
import shutil
import tempfile

import pytest

import cubind.bindings
from conftest import build_cython_module

LIBRARIES = ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "nvml", "cufile", "cudla")
FUNCTION_RE = re.compile(r"^    \S.*?\b(\w+)\(.*\) except \+$")
COMPLETE_TYPE_RE = re.compile(r"^    (?:cdef (?:struct|union|enum)|ctypedef (?:struct|union|enum)) (\w+):$")
TYPEDEF_RE = re.compile(r"^    ctypedef (?!struct |union |enum ).*?\b(\w+)(?:\)\(.*\))?$")


def declarations(library):
    path = os.path.join(os.path.dirname(cubind.bindings.__file__), f"cy{library}.pxd")
    functions, types = [], []
    with open(path) as f:
        text = f.read()
    # Structs of another header only declared (cufile.h's struct sockaddr): no size.
    declared_only = set(re.findall(r"^    cdef struct (\w+)$", text, re.M)) - \
        set(re.findall(r"^    (?:cdef|ctypedef) struct (\w+)\b.*:$", text, re.M))
    for line in text.splitlines(True):
        line = line.rstrip("\n")
        if m := FUNCTION_RE.match(line):
            functions.append(m.group(1))
        elif m := COMPLETE_TYPE_RE.match(line):
            types.append(m.group(1))
        elif re.match(r"^    ctypedef void \w+$", line):
            continue  # another library's function type (VdpGetProcAddress): no size
        elif (m := re.match(r"^    ctypedef (\w+) \w+$", line)) and m.group(1) in declared_only:
            continue
        elif line.startswith("    ctypedef ") and (m := TYPEDEF_RE.match(line)):
            name = m.group(1)
            # ctypedef void (*CUhostFn)(void* userData): the name is inside the parentheses
            fp = re.match(r"^    ctypedef .*\(\*(\w+)\)\(", line)
            types.append(fp.group(1) if fp else name)
    return functions, types


def test_pxd_files_declare_what_the_headers_have():
    counts = {lib: declarations(lib) for lib in LIBRARIES}
    # Bound functions per header (the generator's coverage table lists the same).
    assert len(counts["driver"][0]) >= 449
    assert len(counts["runtime"][0]) >= 300
    assert len(counts["nvrtc"][0]) >= 20
    assert len(counts["nvjitlink"][0]) >= 14
    assert len(counts["nvvm"][0]) >= 13
    assert len(counts["nvfatbin"][0]) >= 12
    assert len(counts["nvml"][0]) >= 350
    assert len(counts["cufile"][0]) >= 42   # 41 functions and cufileop_status_error
    assert len(counts["cudla"][0]) >= 13
    for lib in LIBRARIES:
        assert f"{lib}_load" in counts[lib][0]


def test_every_declaration_compiles():
    workdir = tempfile.mkdtemp(prefix="cubind-all-")
    try:
        lines = ["# cython: language_level=3",
                 "from cubind.bindings cimport " + ", ".join("cy" + lib for lib in LIBRARIES),
                 "cdef list addresses = []", "cdef list sizes = []"]
        total_functions = total_types = 0
        for lib in LIBRARIES:
            functions, types = declarations(lib)
            for name in functions:
                lines.append(f"addresses.append(<size_t><void*>cy{lib}.{name})")
            for name in types:
                lines.append(f"sizes.append(sizeof(cy{lib}.{name}))")
            total_functions += len(functions)
            total_types += len(types)
        lines.append("def counts():\n    return len(addresses), len(sizes), all(addresses), all(sizes)")
        pyx = os.path.join(workdir, "all_declarations.pyx")
        with open(pyx, "w") as f:
            f.write("\n".join(lines) + "\n")
        module_path = build_cython_module(pyx, workdir)
        import importlib.util

        spec = importlib.util.spec_from_file_location("all_declarations", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        n_functions, n_types, nonzero_addresses, nonzero_sizes = module.counts()
        assert (n_functions, n_types) == (total_functions, total_types)
        assert nonzero_addresses and nonzero_sizes
        assert total_types > 500
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

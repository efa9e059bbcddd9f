"""Sphinx extension of cubind's site.

- The generated modules' docstrings (cubind.bindings.*) are the CUDA headers'
  text, not reStructuredText: they are shown as written, in a literal block.
- cubind's own docstrings are plain text too: the characters reStructuredText
  would read as markup (a `*` of `*, stream`, the `_` ending `"sm_"`) are
  escaped, nothing else changes.
- It counts the API entries the reference documents out of all there are and
  prints the count at the end of the build (and writes api-coverage.txt beside
  the HTML): Python entries by introspecting the installed modules, C++ entries
  from Doxygen's XML.
"""
import importlib
import inspect
import os
import re
import xml.etree.ElementTree as ET

GENERATED = ("cubind.bindings.driver", "cubind.bindings.runtime", "cubind.bindings.nvrtc",
             "cubind.bindings.nvjitlink")
HAND_WRITTEN = ("cubind.core", "cubind")

_seen = {}  # qualified name -> True when autodoc found documentation for it


def _process_docstring(app, what, name, obj, options, lines):
    if what != "module":
        _seen[name] = _seen.get(name, False) or any(line.strip() for line in lines)
    if name.startswith(GENERATED) and lines:
        text = list(lines)
        lines[:] = ["::", ""] + ["   " + line for line in text] + [""]
    elif name.startswith(("cubind.core", "cubind.")) or name == "cubind":
        lines[:] = [re.sub(r"(\w)_(?=\W|$)", r"\1\\_", line.replace("*", "\\*")) for line in lines]


def _public(module_name):
    """Every public entry of a module, as lists of the names it goes by: its
    functions and classes (an alias such as CUDA_MEMCPY2D_st of CUDA_MEMCPY2D
    is the same entry), and for the hand-written modules the public methods
    and properties of each class."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    entries = []
    by_object = {}
    for n in names:
        obj = getattr(module, n)
        if inspect.ismodule(obj):
            continue
        if not (inspect.isclass(obj) or callable(obj)):
            continue  # constants are listed, not counted
        if id(obj) in by_object:
            by_object[id(obj)].append(f"{module_name}.{n}")
            continue
        by_object[id(obj)] = [f"{module_name}.{n}"]
        entries.append(by_object[id(obj)])
        if inspect.isclass(obj) and module_name in HAND_WRITTEN:
            for m, v in vars(obj).items():
                if m.startswith("_") and m != "__init__":
                    continue
                if m == "__init__" or callable(v) or isinstance(v, property) or inspect.isdatadescriptor(v):
                    if m != "__init__":
                        entries.append([f"{module_name}.{n}.{m}"])
    return entries


def _cpp_entries(xml_dir):
    """Classes, structs and their public functions, and free functions of
    namespace cubind (not cubind::detail), from Doxygen's XML."""
    documented = total = 0
    missing = []

    def has_doc(node):
        return any("".join(node.find(t).itertext()).strip()
                   for t in ("briefdescription", "detaileddescription") if node.find(t) is not None)

    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    for compound in index.findall("compound"):
        kind, refid = compound.get("kind"), compound.get("refid")
        if kind not in ("class", "struct", "namespace"):
            continue
        name = compound.findtext("name")
        if "detail" in name.split("::") or not name.startswith("cubind"):
            continue
        root = ET.parse(os.path.join(xml_dir, refid + ".xml")).getroot().find("compounddef")
        if kind != "namespace":
            total += 1
            if has_doc(root):
                documented += 1
            else:
                missing.append(name)
        for member in root.iter("memberdef"):
            if member.get("kind") != "function" or member.get("prot") != "public":
                continue
            if kind == "namespace" and member.get("static") == "yes":
                continue
            # Deleted and defaulted special members say nothing worth a line.
            argsstring = member.findtext("argsstring") or ""
            if "=delete" in argsstring.replace(" ", "") or "=default" in argsstring.replace(" ", ""):
                continue
            total += 1
            if has_doc(member):
                documented += 1
            else:
                missing.append(f"{name}::{member.findtext('name')}{argsstring}")
    return documented, total, missing


def _report(app, exception):
    if exception is not None or app.builder.name != "html":
        return
    lines = []
    all_doc = all_total = 0
    for module_name in GENERATED + HAND_WRITTEN:
        entries = _public(module_name)
        documented = [e for e in entries if any(_seen.get(n) for n in e)]
        absent = [e[0] for e in entries if not any(n in _seen for n in e)]
        all_doc += len(documented)
        all_total += len(entries)
        lines.append(f"{module_name}: {len(documented)} of {len(entries)} documented"
                     + (f" ({len(absent)} not on any page: {', '.join(absent[:5])}...)" if absent else ""))
    xml_dir = app.config.breathe_projects["cubind"]
    cpp_doc, cpp_total, cpp_missing = _cpp_entries(xml_dir)
    all_doc += cpp_doc
    all_total += cpp_total
    lines.append(f"C++ core (cubind::): {cpp_doc} of {cpp_total} documented")
    summary = f"API entries documented: {all_doc} of {all_total}"
    text = "\n".join([summary] + ["  " + line for line in lines])
    detail = "\n".join(["", "C++ entries without documentation:"] + ["  " + m for m in cpp_missing])
    with open(os.path.join(app.outdir, "api-coverage.txt"), "w") as f:
        f.write(text + "\n" + detail + "\n")
    print(text)


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("build-finished", _report)
    return {"parallel_read_safe": False, "parallel_write_safe": True}

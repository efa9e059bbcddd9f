"""Sphinx extension of cubind's site.

- The generated modules' docstrings (cubind.bindings.*) are the CUDA headers'
  text, not reStructuredText: they are shown as written, in a literal block.
- Enum classes carry only their first sentence at run time (their members
  are built on first use); the generated .pyi stub beside each module has the
  whole header text of the enum and of each enumerator, which is shown
  instead: each enum's page entry lists its members with their values and text.
- cubind's own docstrings are plain text too: the characters reStructuredText
  would read as markup (a `*` of `*, stream`, the `_` ending `"sm_"`) are
  escaped, nothing else changes.
- It counts the API entries the reference documents out of all there are and
  prints the count at the end of the build (and writes api-coverage.txt beside
  the HTML): Python entries by introspecting the installed modules, C++ entries
  from Doxygen's XML.
"""
import ast
import functools
import importlib
import inspect
import os
import re
import xml.etree.ElementTree as ET

GENERATED = ("cubind.bindings.driver", "cubind.bindings.runtime", "cubind.bindings.nvrtc",
             "cubind.bindings.nvjitlink", "cubind.bindings.nvml", "cubind.bindings.nvvm",
             "cubind.bindings.nvfatbin", "cubind.bindings.cufile", "cubind.bindings.cudla")
HAND_WRITTEN = ("cubind.core", "cubind")

_seen = {}  # qualified name -> True when autodoc found documentation for it


@functools.lru_cache(maxsize=None)
def _stub_docs(module_name):
    """{"Class": doc, "Class.MEMBER": doc, "Class.": [annotated names in order]}
    from the module's generated .pyi."""
    module = importlib.import_module(module_name)
    stub = os.path.join(os.path.dirname(module.__file__), module_name.rsplit(".", 1)[1] + ".pyi")
    docs = {}
    if not os.path.exists(stub):
        return docs
    with open(stub, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        doc = ast.get_docstring(node)
        if doc:
            docs[node.name] = doc
        docs[node.name + "."] = [n.target.id for n in node.body
                                 if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
        for before, after in zip(node.body, node.body[1:]):
            if (isinstance(before, ast.AnnAssign) and isinstance(before.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[f"{node.name}.{before.target.id}"] = inspect.cleandoc(after.value.value)
    return docs


def _is_enum(obj):
    return isinstance(obj, type) and issubclass(obj, int)


def _from_stub(name, obj, what, lines):
    """An enum class's text and its members', from the stub."""
    module_name = next(m for m in GENERATED if name.startswith(m + "."))
    key = name[len(module_name) + 1:]
    if what != "class" or not _is_enum(obj):
        return
    docs = _stub_docs(module_name)
    text = docs.get(key, "\n".join(lines)).split("\n")
    for member in docs.get(key + ".", []):
        value = getattr(obj, member, None)
        if value is None:
            continue
        text += ["", f"{member} = {int(value)}"]
        text += ["    " + line for line in docs.get(f"{key}.{member}", "").split("\n") if line]
    lines[:] = text


def _skip_member(app, what, name, obj, skip, options):
    # Enum members are listed in their class's entry, with the header's text.
    if what == "class" and isinstance(obj, int) and _is_enum(type(obj)) \
            and type(obj).__module__.startswith(GENERATED):
        return True
    return None


def _process_docstring(app, what, name, obj, options, lines):
    # A Cython property without a docstring reads "None".
    if [line.strip() for line in lines if line.strip()] == ["None"]:
        lines[:] = []
    # Counted as documented by its own text, before a list of enum members is added.
    if what != "module":
        _seen[name] = _seen.get(name, False) or any(line.strip() for line in lines)
    if name.startswith(tuple(m + "." for m in GENERATED)):
        _from_stub(name, obj, what, lines)
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
    undocumented = []
    all_doc = all_total = 0
    for module_name in GENERATED + HAND_WRITTEN:
        entries = _public(module_name)
        documented = [e for e in entries if any(_seen.get(n) for n in e)]
        absent = [e[0] for e in entries if not any(n in _seen for n in e)]
        undocumented += [e[0] for e in entries if not any(_seen.get(n) for n in e)]
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
    detail = "\n".join(["", "Python entries without documentation:"] + ["  " + m for m in undocumented]
                       + ["", "C++ entries without documentation:"] + ["  " + m for m in cpp_missing])
    with open(os.path.join(app.outdir, "api-coverage.txt"), "w") as f:
        f.write(text + "\n" + detail + "\n")
    print(text)


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("build-finished", _report)
    return {"parallel_read_safe": False, "parallel_write_safe": True}

"""Helpers shared by the convention and bad-input tests: the public functions of
a bindings module, the signature on the first line of each docstring, and the
parameter annotations of the .pyi stubs."""
import ast
import importlib
import os
import re

MODULES = ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin")

_SIGNATURE = re.compile(r"^\s*(\w+)\((.*)\)\s*(->.*)?$")


def load(name):
    return importlib.import_module(f"cubind.bindings.{name}")


def public_functions(module):
    """Public callables of a module that are not classes (excluding typing helpers)."""
    out = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if isinstance(obj, type) or not callable(obj):
            continue
        if getattr(obj, "__module__", None) == "typing":
            continue
        out[name] = obj
    return out


def split_top_level(text):
    """Splits on commas outside brackets."""
    depth = 0
    current = []
    parts = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return parts


def doc_signature(func):
    """[(name, has_default)] from the `name(arg, arg=default)` first docstring line,
    or None when the docstring does not start with a signature. C type prefixes
    and annotations (cuda.bindings writes `size_t size`, `x: Optional[T]`) are dropped."""
    doc = (func.__doc__ or "").strip()
    if not doc:
        return None
    match = _SIGNATURE.match(doc.splitlines()[0])
    if not match:
        return None
    params = []
    for part in split_top_level(match.group(2)):
        if part in ("*", "/") or part.startswith("*"):
            continue
        has_default = "=" in part  # annotations never hold '='
        head = part.split("=")[0].split(":")[0].strip()
        name = head.split()[-1].lstrip("*") if head else head
        params.append((name, has_default))
    return params


def stub_path(name):
    module = load(name)
    return os.path.join(os.path.dirname(module.__file__), f"{name}.pyi")


def stub_tree(name):
    with open(stub_path(name)) as f:
        return ast.parse(f.read(), filename=stub_path(name))


def stub_functions(name):
    """{function name: [(param, annotation text, has_default)]} of a .pyi stub."""
    tree = stub_tree(name)
    out = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        args = node.args.args
        first_default = len(args) - len(node.args.defaults)
        params = []
        for i, arg in enumerate(args):
            text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            params.append((arg.arg, text, i >= first_default))
        out[node.name] = params
    return out

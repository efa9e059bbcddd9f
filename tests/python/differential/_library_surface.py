"""Prints, as JSON, the public surface of a bindings module (nvml, cufile, cudla):
every public name with its kind, each function's parameters (names in order, with
=default where one has a default; from inspect.signature, else the signature line
that opens its docstring), each enum's members, each struct class's fields and
each exception class's bases and constructor parameters.

    python _library_surface.py cubind.bindings.nvml
    python _library_surface.py cuda.bindings.nvml     (run with cuda-bindings 13.5 first on sys.path)

Run in a child interpreter by test_differential_libraries.py: the venv's cuda-bindings
(13.0) has no nvml or cudla module, so NVIDIA's is imported from a folder of its own.
"""
import enum
import importlib
import inspect
import json
import re
import sys
import types

_SIGNATURE = re.compile(r"^\s*(\w+)\((.*?)\)(\s*->.*)?$")


def params_of(func):
    try:
        return [p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
                for p in inspect.signature(func).parameters.values()]
    except (TypeError, ValueError):
        pass
    first = (func.__doc__ or "").strip().splitlines()
    match = _SIGNATURE.match(first[0]) if first else None
    if match is None:
        return None
    names = []
    depth, part, parts = 0, "", []
    for ch in match.group(2):
        depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    if part.strip():
        parts.append(part)
    for p in parts:
        head = p.split("=")[0].split(":")[0].strip()
        if head in ("*", "/", ""):
            continue
        default = p.split("=", 1)[1].strip() if "=" in p else None
        names.append(head.split()[-1] + ("" if default is None else "=" + default))
    return names


def is_enum(obj):
    if not isinstance(obj, type):
        return False
    if issubclass(obj, enum.Enum):
        return True
    return hasattr(obj, "__members__") and issubclass(obj, int)


def surface(module):
    out = {"names": {}, "functions": {}, "enums": {}, "structs": {}, "exceptions": {}}
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            continue
        if is_enum(obj):
            kind = "enum"
            out["enums"][name] = {k: int(v) for k, v in obj.__members__.items()}
        elif isinstance(obj, type) and issubclass(obj, BaseException):
            kind = "exception"
            out["exceptions"][name] = {"bases": [b.__name__ for b in obj.__bases__],
                                       "init": params_of(obj.__init__) if "__init__" in vars(obj) else None}
        elif isinstance(obj, type):
            kind = "class"
            fields = []
            for klass in obj.__mro__:
                for n, v in vars(klass).items():
                    if not n.startswith("_") and hasattr(v, "__set__") and n not in fields:
                        fields.append(n)
            out["structs"][name] = sorted(fields)
        elif callable(obj):
            kind = "function"
            out["functions"][name] = params_of(obj)
        else:
            kind = "constant " + type(obj).__name__
            if isinstance(obj, (int, float, str, bytes)):
                kind += " = " + repr(obj)
        out["names"][name] = kind
    return out


if __name__ == "__main__":
    module = importlib.import_module(sys.argv[1])
    json.dump(surface(module), sys.stdout, indent=1, sort_keys=True)

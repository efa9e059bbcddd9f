"""What the differential suite compares: the cases, built from the contents of
cubind.bindings and NVIDIA's cuda.bindings, and the normal form of a value or an
outcome so that objects of the two packages compare.

Every case has an id `KIND:module.name[.path]`; known_differences.py matches
those ids. The case lists are built from dir() of both packages when the tests
are collected, so the suite grows with the modules and nothing is listed by hand.

The reference is the cuda-bindings release for the CUDA version of the headers
cubind.bindings was generated from (13.5): the environment's own, or the one
scripts/setup.sh installs apart in the repository's .cuda-bindings-new, which
tests/python/conftest.py puts first on sys.path where the environment's is another
release. NVML, cuFile and cuDLA are compared by test_differential_libraries.py.
"""
import ast
import enum
import functools
import inspect
import os
import signal
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import _signatures as sig  # noqa: E402

import importlib

from cubind.bindings import _support  # noqa: E402

MODULES = ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin")

try:
    from cuda.bindings import __version__ as _their_version
    _THEIRS = {m: importlib.import_module("cuda.bindings." + m) for m in MODULES}
    AVAILABLE = True
except ImportError:  # the suite skips as a whole (see conftest.py)
    AVAILABLE = False


def _major_minor(version):
    return tuple(int(x) for x in str(version).split(".")[:2])


def version_mismatch():
    """Why the packages cannot be compared name by name, or None: they must be
    for the same CUDA major.minor as the headers cubind.bindings was generated from."""
    import cubind.bindings
    if not AVAILABLE:
        return "cuda-bindings is not installed"
    expected = _major_minor(cubind.bindings.__version__)
    if _major_minor(_their_version) != expected:
        return (f"cuda-bindings {_their_version} is for another CUDA version than the "
                f"{'.'.join(map(str, expected))} that cubind.bindings' {', '.join(MODULES)} are compared with")
    return None


if AVAILABLE:
    PAIRS = {m: (importlib.import_module("cubind.bindings." + m), _THEIRS[m]) for m in MODULES}
else:
    PAIRS = {}

# ---------------------------------------------------------------------------
# Public names


def _is_implementation_detail(obj):
    """Modules a package imported for itself (ctypes, cuda) and typing helpers
    (Optional, Any) are not part of its API."""
    if isinstance(obj, types.ModuleType):
        return True
    module = getattr(obj, "__module__", None)
    return module in ("typing", "enum", "builtins") and isinstance(obj, type) or module == "typing"


def _is_anonymous_class(name):
    # cuda.bindings names the classes of anonymous struct and union members
    # anon_structN/anon_unionN; cubind anon_<struct>_<member>. No program names
    # them; their fields are compared through the member paths.
    return name.startswith("anon_")


@functools.lru_cache(maxsize=None)
def public_names(module):
    out = {}
    for name in dir(module):
        if name.startswith("_") or _is_anonymous_class(name):
            continue
        obj = getattr(module, name)
        if _is_implementation_detail(obj):
            continue
        out[name] = obj
    return out


def is_enum_class(obj):
    # cuda-bindings 13.5's enums are FastEnum classes: int subclasses with __members__, not enum.Enum.
    return isinstance(obj, type) and (issubclass(obj, enum.Enum) or issubclass(obj, _support.Enum)
                                      or (issubclass(obj, int) and hasattr(obj, "__members__")))


def is_enum_member(value):
    return isinstance(value, (enum.Enum, _support.Enum)) or (isinstance(value, int) and is_enum_class(type(value)))


def exception_name(exc):
    """The class name an exception compares by. cuda.bindings 13.5 raises
    cuda.pathfinder's DynamicLibNotFoundError (a RuntimeError) where a library
    is absent, and its own FunctionNotFoundError (a RuntimeError) where the loaded
    library is older than the function; cubind raises RuntimeError for both,
    naming what was tried or the release that introduced the function. Those
    classes compare by their built-in base."""
    cls = type(exc)
    if cls.__module__.startswith(("cuda.pathfinder", "cuda.bindings._internal")):
        cls = next(c for c in cls.__mro__ if c.__module__ == "builtins")
    return cls.__name__


def is_handle(obj):
    """A handle or a value type (CUdeviceptr, cuuint64_t): an int-convertible object of a package's class."""
    if isinstance(obj, (bool, int, float, enum.Enum)) or is_enum_member(obj):
        return False
    return hasattr(obj, "getPtr") and hasattr(type(obj), "__int__")


def is_struct(obj):
    return (not isinstance(obj, type) and hasattr(obj, "getPtr") and not hasattr(type(obj), "__int__")
            and not isinstance(obj, (int, enum.Enum)))


def kind_of(obj):
    if is_enum_class(obj):
        return "enum"
    if isinstance(obj, type):
        return "class"
    if callable(obj):
        return "function"
    return f"constant {type(obj).__name__}"


def name_cases():
    cases = []
    for mod, (ours, theirs) in PAIRS.items():
        for name in sorted(set(public_names(ours)) | set(public_names(theirs))):
            cases.append(f"name:{mod}.{name}")
    return cases


def enum_cases():
    cases = []
    for mod, (ours, theirs) in PAIRS.items():
        for name, obj in sorted(public_names(theirs).items()):
            if is_enum_class(obj) and is_enum_class(getattr(ours, name, None)):
                cases.append(f"enum:{mod}.{name}")
    return cases


# ---------------------------------------------------------------------------
# Functions


@functools.lru_cache(maxsize=None)
def functions(module):
    return {n: f for n, f in public_names(module).items() if callable(f) and not isinstance(f, type)}


def function_cases():
    cases = []
    for mod, (ours, theirs) in PAIRS.items():
        ours_f = functions(ours)
        for name in sorted(functions(theirs)):
            if name in ours_f:
                cases.append(f"signature:{mod}.{name}")
    return cases


def introspect_cases():
    return [f"introspect:{m}.{n}" for m, (ours, theirs) in PAIRS.items()
            for n in sorted(functions(ours)) if n in functions(theirs)]


_NO_DEFAULT = "<required>"


def their_parameters(func):
    """[(name, default text)] from inspect.signature (cuda.bindings functions are introspectable)."""
    params = []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            params.append(("*" + p.name, _NO_DEFAULT))
            continue
        params.append((p.name, _NO_DEFAULT if p.default is p.empty else repr(p.default)))
    return params


def our_parameters(func):
    """The same from cubind: inspect.signature where it works, else the signature on
    the first docstring line (the only form cubind's builtins expose today)."""
    try:
        return their_parameters(func), "inspect"
    except (ValueError, TypeError):
        pass
    doc = (func.__doc__ or "").strip()
    match = sig._SIGNATURE.match(doc.splitlines()[0]) if doc else None
    if not match:
        return None, "none"
    params = []
    for part in sig.split_top_level(match.group(2)):
        if part in ("*", "/"):
            continue
        head, _, default = part.partition("=")
        name = head.split(":")[0].strip().split()[-1] if head.strip() else head
        if default:
            try:
                default = repr(ast.literal_eval(default.strip()))
            except (ValueError, SyntaxError):
                default = default.strip()
        params.append((name, default if default else _NO_DEFAULT))
    return params, "docstring"


# ---------------------------------------------------------------------------
# Structs


def struct_classes(module):
    """Public struct and union classes made without arguments, each once: an
    alias (CUDA_MEMCPY3D of CUDA_MEMCPY3D_st) is compared by name only."""
    out = {}
    for name, obj in public_names(module).items():
        if not isinstance(obj, type) or is_enum_class(obj):
            continue
        try:
            inst = obj()
        except Exception:
            continue
        if is_struct(inst):
            out[name] = obj
    return out


def field_names(cls_or_obj):
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    names = []
    for klass in reversed(cls.__mro__):
        for n, v in vars(klass).items():
            if not n.startswith("_") and hasattr(v, "__set__") and n not in names:
                names.append(n)
    return names


def field_paths(obj, prefix=""):
    """Every field path of a struct, nested and anonymous members included:
    [(path, default value)] where a nested struct also lists its own fields."""
    out = []
    for name in field_names(obj):
        try:
            value = getattr(obj, name)
        except Exception as exc:  # a field that cannot be read is still a field
            value = exc
        path = prefix + name
        out.append((path, value))
        if is_struct(value):
            out.extend(field_paths(value, path + "."))
    return out


def _struct_roots(theirs):
    """The struct classes of cuda.bindings whose fields are round-tripped: one per
    C type (aliases subclass it or share its fields)."""
    classes = struct_classes(theirs)
    roots = {}
    for name, cls in sorted(classes.items()):
        base = cls.__mro__[1]
        if base is not object and base.__name__ in classes:
            continue
        roots[name] = cls
    return roots


def struct_cases():
    return [f"struct:{m}.{n}" for m, (_, theirs) in PAIRS.items() for n in sorted(struct_classes(theirs))]


def repr_cases():
    return [f"repr:{m}.{n}" for m, (_, theirs) in PAIRS.items() for n in sorted(_struct_roots(theirs))]


_FIELD_CASES = None


def field_cases():
    """field:M.S.path/KIND for every field path of every struct class and every
    kind of value that fits the field (value_kinds), and KIND=default."""
    global _FIELD_CASES
    if _FIELD_CASES is None:
        _FIELD_CASES = []
        for m, (ours, theirs) in PAIRS.items():
            for n, cls in sorted(_struct_roots(theirs).items()):
                our_cls = getattr(ours, n, None)
                for path, their_default in field_paths(cls()):
                    leaf = path.split(".")[-1]
                    our_default = (outcome_value(lambda: getattr(navigate(our_cls(), path), leaf))
                                   if our_cls is not None else None)
                    for label, _ in [("default", None)] + value_kinds(their_default, our_default):
                        _FIELD_CASES.append(f"field:{m}.{n}.{path}/{label}")
    return _FIELD_CASES


def field_kinds(module_name, name, path):
    """[(label, make)] of one field, as field_cases() lists them."""
    ours, theirs = PAIRS[module_name]
    their_cls, our_cls = getattr(theirs, name), getattr(ours, name, None)
    leaf = path.split(".")[-1]
    their_default = outcome_value(lambda: getattr(navigate(their_cls(), path), leaf))
    our_default = (outcome_value(lambda: getattr(navigate(our_cls(), path), leaf))
                   if our_cls is not None else None)
    return [("default", None)] + value_kinds(their_default, our_default)


def navigate(root, path):
    obj = root
    for part in path.split(".")[:-1]:
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------------------
# Normal form of values and outcomes


def normal(value, depth=0):
    """A value in a form that compares across the two packages."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, BaseException):
        return ("raises", exception_name(value))
    if is_enum_member(value):
        return ("enum", type(value).__name__, int(value))
    if type(value) is int:
        return ("int", value)
    if type(value) is float:
        return ("float", value)
    if is_handle(value):
        return ("handle", type(value).__name__, int(value))
    if isinstance(value, (list, tuple)):
        return ("list", [normal(v, depth + 1) for v in value])
    if isinstance(value, memoryview):
        return ("memoryview", [normal(v, depth + 1) for v in value.tolist()])
    if is_struct(value):
        # The members' values are cases of their own (field:S.member.path).
        return ("struct", field_names(value))
    if isinstance(value, int):
        return ("int subclass " + type(value).__name__, int(value))
    return ("other", type(value).__name__)


def outcome(fn):
    """The normal form of what fn() gives, or of the exception it raises."""
    try:
        return normal(fn())
    except Exception as exc:
        return ("raises", exception_name(exc))


def short(value, limit=120):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------------------
# Values written into a field, by the kind of the field. Each is a function of
# (package module, the field's current value in that package), so that a handle
# or a struct is one of that package's own classes.


def _of_class(module, cname, *args):
    return getattr(module, cname)(*args)


def _member(module, cname, index=1):
    # By value: the packages list an enum's members in different orders
    # (cuda.bindings 13.5 by value, cubind as the header declares them).
    members = sorted(getattr(module, cname).__members__.values(), key=int)
    return members[min(index, len(members) - 1)]


def _constructible(cls):
    try:
        cls()
        return True
    except Exception:
        return False


def value_kinds(their_default, our_default=None):
    """[(label, make)] for a field whose value in cuda.bindings is their_default
    (cubind's value decides where cuda.bindings reads None: an enum field whose
    zero is no member)."""
    kinds = [
        ("int", lambda m, d: 5),
        ("float", lambda m, d: 2.75),
        ("negative", lambda m, d: -1),
        ("too-large", lambda m, d: 2**64),
        ("None", lambda m, d: None),
        ("str", lambda m, d: "x"),
    ]
    d = their_default if their_default is not None else our_default
    if is_enum_member(d):
        cname = type(d).__name__
        kinds.append(("member", lambda m, _, c=cname: _member(m, c)))
    elif is_handle(d):
        cname = type(d).__name__
        kinds.append(("handle", lambda m, _, c=cname: _of_class(m, c, 0x1000)))
        kinds.append(("int-address", lambda m, _: 0x2000))
    elif is_struct(d) and _constructible(type(their_default)):
        # (cuda.bindings' classes of anonymous members take an address: no program assigns those whole)
        kinds.append(("struct", lambda m, cur: type(cur)()))
    elif isinstance(d, bytes):
        n = len(d) or 4
        kinds.append(("bytes", lambda m, _, n=n: bytes(range(65, 65 + min(n, 20)))))
        kinds.append(("list-0..255", lambda m, _, n=n: [200] * n))
    elif isinstance(d, list):
        n = len(d) or 2
        first = d[0] if d else None
        if first is None and isinstance(our_default, list) and our_default:
            first = our_default[0]
        kinds.append(("list-of-ints", lambda m, _, n=n: [3] * n))
        kinds.append(("list-0..255", lambda m, _, n=n: [200] * n))
        kinds.append(("list-of-floats", lambda m, _, n=n: [1.5] * n))
        kinds.append(("list-of-negatives", lambda m, _, n=n: [-1] * n))
        kinds.append(("list-too-long", lambda m, _, n=n: [1] * (n + 1)))
        kinds.append(("list-too-short", lambda m, _, n=n: [1] * (n - 1)))
        if first is not None and is_handle(first):
            cname = type(first).__name__
            kinds.append(("list-of-handles", lambda m, _, n=n, c=cname: [_of_class(m, c, 0x1000 + i) for i in range(n)]))
        elif first is not None and is_struct(first) and _constructible(type(first)):
            kinds.append(("list-of-structs", lambda m, cur, n=n: [type(cur[0])() for _ in range(n)]))
        elif is_enum_member(first):
            cname = type(first).__name__
            kinds.append(("list-of-members", lambda m, _, n=n, c=cname: [_member(m, c)] * n))
    return kinds


def round_trip(module, cls, path, make):
    """Writes make(module, current value) into the field at path of a fresh
    cls() and reads it back through the root: the outcome's normal form."""
    root = cls()
    leaf = path.split(".")[-1]
    try:
        parent = navigate(root, path)
        current = getattr(parent, leaf)
        value = make(module, current)
    except Exception as exc:
        return ("cannot build the value", type(exc).__name__)
    try:
        setattr(parent, leaf, value)
    except Exception as exc:
        return ("raises", exception_name(exc))
    return outcome(lambda: getattr(navigate(root, path), leaf))


def outcome_value(fn):
    """fn(), or the exception it raises (as a value)."""
    try:
        return fn()
    except Exception as exc:
        return exc


# ---------------------------------------------------------------------------
# Field round trips, run in child processes (see _field_sweep.py)

CRASH = "crashed the interpreter"
HANG = "did not return within the time limit"


def _run_sweep(package, module_name, perturb=0, only=None, timeout=300):
    """{case index: outcome text} for one package and module; perturb fills the
    memory malloc returns with that byte (glibc's MALLOC_PERTURB_)."""
    import subprocess
    import tempfile
    script = os.path.join(HERE, "_field_sweep.py")
    results = {}
    start = 0
    for _ in range(500):
        with tempfile.TemporaryFile(mode="w+") as out:
            env = dict(os.environ, MALLOC_PERTURB_=str(perturb))
            proc = subprocess.run([sys.executable, script, package, module_name, str(start)] + ([only] if only else []),
                                  stdout=out, stderr=subprocess.STDOUT, timeout=timeout, cwd=HERE, env=env)
            out.seek(0)
            lines = out.read().splitlines()
        running = start  # the case that was running when the output stops
        done = False
        for line in lines:
            if line.startswith("@ "):
                running = int(line.split()[1])
            elif line.startswith("= "):
                _, i, text = line.split(" ", 2)
                results[int(i)] = text
                running = int(i) + 1
            elif line.startswith("# done"):
                done = True
        if done:
            return results
        if running == start and start in results:
            raise RuntimeError(f"_field_sweep.py {package} {module_name} stopped (status {proc.returncode}) "
                               f"without progress:\n" + "\n".join(lines[-20:]))
        results[running] = HANG if proc.returncode == -signal.SIGALRM else CRASH
        start = running + 1
    raise RuntimeError("too many crashes")


UNSTABLE = "UNSTABLE"


def field_sweeps():
    """Both packages' sweeps of every module with structs, run side by side.
    The default values of cuda.bindings are read twice more, in processes whose
    fresh malloc memory holds different bytes (glibc's MALLOC_PERTURB_): a default
    that differs between the two is memory cuda.bindings never initialised, and
    is UNSTABLE."""
    from concurrent.futures import ThreadPoolExecutor
    modules = sorted({c.split(":")[1].split(".")[0] for c in field_cases()})
    runs = (("ours", 0, None), ("theirs", 0, None), ("theirs", 0x55, "default"), ("theirs", 0xAA, "default"))
    jobs = [(p, m, perturb, only) for m in modules for p, perturb, only in runs]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        done = dict(zip(jobs, pool.map(lambda job: _run_sweep(*job), jobs)))
    out = {}
    for module_name in modules:
        cases = [c for c in field_cases() if c.startswith(f"field:{module_name}.")]
        ours, theirs, first, second = (done[(p, module_name, q, o)] for p, q, o in runs)
        for i, case in enumerate(cases):
            t = theirs.get(i)
            if case.endswith("/default") and not (t == first.get(i) == second.get(i)):
                t = UNSTABLE
            out[case] = {"ours": ours.get(i), "theirs": t}
    return out

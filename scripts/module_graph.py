#!/usr/bin/env python3
"""Prints cubind.core's module graph as a Markdown table: each Cython module
of python/cubind/core (a .pyx, its .pxd, or both) and the cubind modules it
cimports, read from the `cimport` lines of its sources. Textually included
files (`include "x.pxi"`) get their own column, since they are dependencies no
cimport shows.

    python3 scripts/module_graph.py                         # print the table
    python3 scripts/module_graph.py --update docs/architecture.md

--update replaces what lies between the lines `<!-- module_graph: begin -->`
and `<!-- module_graph: end -->` of that file with the table.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.path.join(ROOT, "python")
PACKAGE = "cubind.core"
BEGIN = "<!-- module_graph: begin -->"
END = "<!-- module_graph: end -->"

# `from X cimport a, b as c` (parenthesised over several lines or not), and
# `cimport X, Y as z`; each at the start of a line.
FROM_CIMPORT = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+cimport[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
CIMPORT = re.compile(r"^[ \t]*cimport[ \t]+([^\n#]*)", re.M)
INCLUDE = re.compile(r"^[ \t]*include[ \t]+[\"']([^\"']+)[\"']", re.M)


def modules(package_dir):
    """{dotted module name: [source paths]} for every .pyx and .pxd under package_dir."""
    found = {}
    for folder, dirs, files in os.walk(package_dir):
        dirs.sort()
        for name in sorted(files):
            stem, ext = os.path.splitext(name)
            if ext not in (".pyx", ".pxd"):
                continue
            rel = os.path.relpath(os.path.join(folder, stem), PYTHON)
            dotted = rel.replace(os.sep, ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            found.setdefault(dotted, []).append(os.path.join(folder, name))
    return found


def absolute(name, module, is_package):
    """`from .x cimport` and `from .. cimport` resolved against module."""
    if not name.startswith("."):
        return name
    dots = len(name) - len(name.lstrip("."))
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (dots - 1)]
    rest = name[dots:]
    return ".".join(base + ([rest] if rest else []))


def names(clause):
    """The names of `a, b as c, (d, e)`: a, b, d, e."""
    clause = clause.strip().strip("()")
    return [part.split()[0] for part in clause.replace("\n", " ").split(",") if part.strip()]


def cimports(path, module, is_package, known):
    """The cubind modules and the included files of one source file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    deps = set()
    for source, clause in FROM_CIMPORT.findall(text):
        source = absolute(source, module, is_package)
        for name in names(clause):
            # `from cubind.core cimport _device` names a module; `from
            # cubind.core._cpp cimport Device` a name inside one.
            deps.add(f"{source}.{name}" if f"{source}.{name}" in known else source)
    for clause in CIMPORT.findall(text):
        deps.update(names(clause))
    deps = {d for d in deps if d == "cubind" or d.startswith("cubind.")}
    deps.discard(module)
    return deps, set(INCLUDE.findall(text))


def short(name):
    return name[len(PACKAGE) + 1:] if name.startswith(PACKAGE + ".") else name


def table():
    known = modules(os.path.join(PYTHON, *PACKAGE.split(".")))
    rows = ["| module | sources | cimports | includes (textually) |", "|---|---|---|---|"]
    for module in sorted(known, key=short):
        deps, included = set(), set()
        for path in known[module]:
            d, i = cimports(path, module, os.path.basename(path).startswith("__init__."), known)
            deps |= d
            included |= i
        sources = ", ".join(f"`{os.path.relpath(p, PYTHON)}`" for p in known[module])
        rows.append("| `{}` | {} | {} | {} |".format(
            short(module), sources,
            ", ".join(f"`{short(d)}`" for d in sorted(deps, key=short)) or "-",
            ", ".join(f"`{i}`" for i in sorted(included)) or "-"))
    return "\n".join(rows) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", metavar="FILE", help="rewrite the marked table of FILE")
    args = parser.parse_args()
    text = table()
    if not args.update:
        sys.stdout.write(text)
        return 0
    with open(args.update, encoding="utf-8") as f:
        page = f.read()
    if BEGIN not in page or END not in page:
        sys.exit(f"{args.update}: no lines {BEGIN} and {END} to put the table between")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(args.update, "w", encoding="utf-8") as f:
        f.write(f"{head}{BEGIN}\n{text}{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

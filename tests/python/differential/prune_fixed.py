"""Removes from known_differences.py the cases a fix has closed, and the reasons
no case is left under.

    python -m pytest -q tests/python/differential > diff.log
    python tests/python/differential/prune_fixed.py diff.log

A listed case that now agrees with cuda.bindings fails the suite as
XPASS(strict); those failures are what this reads from the log. Any other
failure is left alone (and still fails the suite).
"""
import ast
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "known_differences.py")
# In the failures section each such case reads "____ test_x[<case>] ____"
# followed by the line "[XPASS(strict)] <reason>".
XPASS = re.compile(r"^_+ \S+\[([^\]]+)\] _+\n\[XPASS\(strict\)\]", re.MULTILINE)


def fixed_cases(log_text):
    return set(XPASS.findall(log_text))


def dict_entries(source, name):
    """(key, first line, last line) of each entry of the module-level dict `name`, 1-based."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return [(ast.literal_eval(k), k.lineno, v.end_lineno) for k, v in zip(node.value.keys, node.value.values)]
    raise SystemExit(f"{TABLE} has no dict {name}")


def prune(source, fixed):
    lines = source.split("\n")
    drop = set()
    for key, first, last in dict_entries(source, "DIFFERENCES"):
        if key in fixed:
            drop.update(range(first, last + 1))
    kept = "\n".join(line for number, line in enumerate(lines, 1) if number not in drop)
    namespace = {}
    exec(compile(kept, TABLE, "exec"), namespace)
    used = set(namespace["DIFFERENCES"].values())
    lines = kept.split("\n")
    drop = set()
    for key, first, last in dict_entries(kept, "REASONS"):
        if key not in used:
            drop.update(range(first, last + 1))
    return "\n".join(line for number, line in enumerate(lines, 1) if number not in drop)


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    with open(argv[1]) as f:
        fixed = fixed_cases(f.read())
    with open(TABLE) as f:
        source = f.read()
    pruned = prune(source, fixed)
    with open(TABLE, "w") as f:
        f.write(pruned)
    print(f"{len(fixed)} fixed cases read; known_differences.py: "
          f"{source.count(chr(10)) - pruned.count(chr(10))} lines removed")


if __name__ == "__main__":
    main(sys.argv)

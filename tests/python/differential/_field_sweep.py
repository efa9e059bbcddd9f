"""Writes each kind of value into each struct field of one package and prints
what reading it back gives; test_differential_structs.py runs it in a child
process, because cuda.bindings crashes on some writes (a list of ints written to
a field that holds a list of structs, then read).

    python _field_sweep.py PACKAGE MODULE START [KIND]

PACKAGE is `ours` or `theirs`; the cases are the module's field cases
(_diff.field_cases()) from index START (those of one KIND only, if given). Before each case the script prints
(flushed) `@ INDEX`, after it `= INDEX OUTCOME`, OUTCOME being the repr of the
normal form (_diff.normal) of the value read back or of the exception. Each case
runs twice on fresh objects; where the two disagree (cuda.bindings leaves some
nested members uninitialised) OUTCOME is UNSTABLE. The parent resumes after a
crash from the next case. The last line is `# done`.
"""
import faulthandler
import os
import resource
import signal
import sys

faulthandler.enable()
# A count read from memory cuda.bindings never initialised can ask for a list of
# billions of items: a MemoryError here, not the machine's memory.
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _diff  # noqa: E402

UNSTABLE = _diff.UNSTABLE
CASE_SECONDS = 5


def run_case(mod, cls, path, make):
    leaf = path.split(".")[-1]
    if cls is None:
        return ("no such class",)
    if make is None:
        return _diff.normal(_diff.outcome_value(lambda: getattr(_diff.navigate(cls(), path), leaf)))
    return _diff.round_trip(mod, cls, path, make)


def in_fork(fn):
    """fn() in a forked child: its text, or CRASH where the child dies of a signal."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.alarm(CASE_SECONDS)
        os.close(read_end)
        try:
            text = fn()
        except BaseException as exc:  # noqa: B902 - reported, never raised in the child
            text = f"sweep error {exc!r}"
        os.write(write_end, text.encode())
        os._exit(0)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return _diff.CRASH if os.WTERMSIG(status) != signal.SIGALRM else _diff.HANG
    return b"".join(chunks).decode()


def main():
    package, module_name, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
    only = sys.argv[4] if len(sys.argv) > 4 else None
    ours, theirs = _diff.PAIRS[module_name]
    mod = ours if package == "ours" else theirs
    cases = [c for c in _diff.field_cases() if c.startswith(f"field:{module_name}.")]
    kinds_of = {}
    out = sys.stdout
    for i in range(start, len(cases)):
        field, _, label = cases[i].partition("/")
        if only is not None and label != only:
            continue
        name, _, path = field.split(".", 1)[1].partition(".")
        if field not in kinds_of:
            kinds_of.clear()
            kinds_of[field] = dict(_diff.field_kinds(module_name, name, path))
        make = kinds_of[field][label]
        cls = getattr(mod, name, None)
        print(f"@ {i}", file=out, flush=True)

        def both():
            first = run_case(mod, cls, path, make)
            second = run_case(mod, cls, path, make)
            return repr(first) if first == second else UNSTABLE
        # cuda.bindings crashes on some writes to fields that hold lists (of structs):
        # those run in a forked child, and the rest of the sweep goes on.
        risky = package == "theirs" and make is not None and isinstance(
            _diff.outcome_value(lambda: getattr(_diff.navigate(cls(), path), path.split(".")[-1])), list)
        # A loop over a count read from uninitialised memory never ends: SIGALRM
        # ends the process, and the parent goes on after this case.
        signal.alarm(CASE_SECONDS)
        result = in_fork(both) if risky else both()
        signal.alarm(0)
        print(f"= {i} {result}", file=out, flush=True)
    print("# done", file=out, flush=True)


if __name__ == "__main__":
    main()

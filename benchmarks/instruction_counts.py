"""Instructions per call of every row of benchmarks/side_by_side.py that runs
without a GPU, cubind's side and its Python floor, counted by callgrind
against the stand-in driver of tests/python/fake_driver (every driver call
returns at once, so what is counted is the binding's own work, the
interpreter's and the GIL's), and the guard that keeps them from growing.

One child interpreter runs under valgrind with instrumentation off; per row
and side it warms the statement up, then turns instrumentation on, runs the
statement N1 times and dumps the counters, N2 times and dumps again: the
count per call is the difference over N2 - N1, which leaves out the loop's
start and the dumps. Only the main thread is counted: a thread of the
stand-in driver (a host function's, say) that runs while a row is counted
is no part of the row's call. The cyclic garbage collector is off while a
row is counted, so a collection started by another row's garbage does not
fall on it. Counts are exact for one build, interpreter and NumPy; they are the tool
for finding where a call's time goes and for catching a change that slows
one, not a timing. Imports are counted in children of their own.

    python3 benchmarks/instruction_counts.py                 print the table
    python3 benchmarks/instruction_counts.py --check         compare with benchmarks/instruction_counts.json:
                                                             exit 1 when a row grows by more than 5%
    python3 benchmarks/instruction_counts.py --update "why"  rewrite benchmarks/instruction_counts.json
                                                             (commit it with the reason)
    python3 benchmarks/instruction_counts.py --cold          the launch rows' cache lines missed per call
    python3 benchmarks/instruction_counts.py --cold --only allocate
                                                             the same for the allocate rows

A launch's driver call takes microseconds and leaves little of the process in
the core's first-level caches, so the code and data a launch then reads come
from farther away: a launch row's time follows the cache lines it touches as
much as its instructions, and so does an allocate + close. --cold counts
them: the stand-in's cuLaunchKernelEx, cuMemAllocFromPoolAsync and
cuMemFreeAsync first run 64 KiB of code and touch 128 KiB of data (as a
driver call would), and callgrind simulates the caches (32 KiB instruction and 48 KiB
data first level, as on the GPU machines' Xeons), giving per call the
first-level misses for instructions (I1) and data read and written (D1r,
D1w), cubind's and its floors'. Not part of --check.

Needs valgrind (with its callgrind.h), a C compiler and Cython.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The stand-in driver compiles against the headers the bindings were generated
# from (cubind.get_cuda_include() takes no older ones): in a checkout, the
# pinned ones of scripts/cuda_headers.py, unless the caller chose others.
_PINNED_HEADERS = os.path.join(HERE, "..", ".cuda-headers", "include")
if "CUBIND_CUDA_INCLUDE" not in os.environ and os.path.isfile(os.path.join(_PINNED_HEADERS, "cuda.h")):
    os.environ["CUBIND_CUDA_INCLUDE"] = os.path.abspath(_PINNED_HEADERS)
TABLE = os.path.join(HERE, "instruction_counts.json")
FAKE_DIR = os.path.join(HERE, "..", "tests", "python", "fake_driver")
N1, N2 = 200, 1200
GROWTH = 0.05          # a row fails the check when it grows by more than this
SLACK = 20             # ... and by more than this many instructions (rows of a few hundred)

CONTROL = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
void cg_dump(const char* why) { CALLGRIND_DUMP_STATS_AT(why); }
"""

CHILD = r'''
import ctypes, gc, json, sys
sys.path.insert(0, sys.argv[1])
import side_by_side as sbs
control = ctypes.CDLL(sys.argv[2])
control.cg_dump.argtypes = [ctypes.c_char_p]
n1, n2 = int(sys.argv[4]), int(sys.argv[5])
only = [part for part in sys.argv[6].split("|") if part]
sides = sys.argv[7].split(",")
world = sbs.World(standin=True, call_floor_so=sys.argv[3], with_c_floor=False)
skipped = {}
for row in sbs.all_rows():
    if any(part not in row.name for part in only):
        continue
    for side in sides:
        if side not in row.sides:
            continue
        try:
            spec = row.sides[side](world)
            loop = sbs.compile_loop(spec)
            loop(50)
            if spec.sync is not None:
                spec.sync()
        except sbs.Missing as e:
            skipped[f"{row.name}|{side}"] = str(e)
            continue
        except Exception as e:
            skipped[f"{row.name}|{side}"] = f"fails on the stand-in driver: {type(e).__name__}: {e}"[:200]
            continue
        gc.collect()
        gc.disable()
        control.cg_start()
        control.cg_zero()
        loop(n1)
        control.cg_dump(f"{row.name}|{side}|n1".encode())
        loop(n2)
        control.cg_dump(f"{row.name}|{side}|n2".encode())
        control.cg_stop()
        gc.enable()
        if spec.sync is not None:
            spec.sync()
print("SKIPPED " + json.dumps(skipped))
'''

IMPORT_CHILD = r'''
import ctypes, sys
control = ctypes.CDLL(sys.argv[1])
control.cg_dump.argtypes = [ctypes.c_char_p]
control.cg_start()
control.cg_zero()
__import__(sys.argv[2])
control.cg_dump(("import " + sys.argv[2] + "|cubind|once").encode())
control.cg_stop()
'''

IMPORTS = ("cubind.bindings.driver", "cubind.core")


def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        sys.exit(f"instruction_counts: {' '.join(cmd[:6])} ... failed (exit {out.returncode}):\n"
                 f"{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return out


def read_dumps(prefix, events=False):
    """{description: total instructions} of every dump callgrind wrote under
    prefix (prefix.1, prefix.2, ...), in the order they were written; with
    `events`, {description: {event: total}} of every event counted."""
    totals = {}
    folder, base = os.path.split(prefix)
    # One file per dump and thread (--separate-threads): the main thread's, -01,
    # are the ones counted (a stand-in driver's thread is no part of a call).
    numbered = [n for n in os.listdir(folder) if re.fullmatch(re.escape(base) + r"(\.\d+)?-01", n)]
    for name in sorted(numbered, key=lambda n: int(n[:-3].rsplit(".", 1)[1]) if n[:-3] != base else 0):
        desc, total, names = None, None, ["Ir"]
        with open(os.path.join(folder, name)) as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request: "):
                    desc = line[len("desc: Trigger: Client Request: "):].strip()
                elif line.startswith("events:"):
                    names = line.split()[1:]
                elif line.startswith(("totals:", "summary:")):
                    values = [int(v) for v in line.split()[1:]]
                    total = dict(zip(names, values)) if events else values[0]
        if desc is not None and total is not None:
            totals[desc] = total
    return totals


# --cold: the first-level caches of the GPU machines' Xeons, and a last level
# the size of their second (what a miss there costs is not simulated).
COLD_CACHES = ["--cache-sim=yes", "--I1=32768,8,64", "--D1=49152,12,64", "--LL=2097152,16,64"]
COLD_EVENTS = (("I1", "I1mr"), ("D1r", "D1mr"), ("D1w", "D1mw"))


def count(only="", cold=False):
    """({row: {"cubind": n, "Python floor": n}}, {row|side: why not counted});
    with `cold`, the launch rows only (or the allocate rows), each side's instructions and cache
    misses per call ({side: {"Ir": n, "I1": n, "D1r": n, "D1w": n}}), the
    converting (launch) or holding (allocate) floor among the sides."""
    for tool in ("valgrind",):
        if shutil.which(tool) is None:
            sys.exit(f"instruction_counts: {tool} is not installed (scripts/setup.sh installs it)")
    sys.path.insert(0, HERE)
    import side_by_side as sbs

    work = tempfile.mkdtemp(prefix="cubind_instructions_")
    cc = shutil.which(os.environ.get("CC", "cc")) or "gcc"
    import cubind
    run([cc, "-shared", "-fPIC", "-O1", "-I", cubind.get_cuda_include(), "-o", os.path.join(work, "libcuda.so.1"),
         os.path.join(FAKE_DIR, "fake_libcuda.c"), os.path.join(FAKE_DIR, "fake_graphs.c"), "-lpthread"]
        + (["-DCUBIND_FAKE_EVICT"] if cold else []))
    control_c = os.path.join(work, "control.c")
    with open(control_c, "w") as f:
        f.write(CONTROL)
    control = os.path.join(work, "libcontrol.so")
    run([cc, "-shared", "-fPIC", "-O1", "-o", control, control_c])
    floor_so = sbs._compile_pyx("call_floor")
    child = os.path.join(work, "child.py")
    with open(child, "w") as f:
        f.write(CHILD)
    import_child = os.path.join(work, "import_child.py")
    with open(import_child, "w") as f:
        f.write(IMPORT_CHILD)
    env = dict(os.environ, LD_LIBRARY_PATH=work + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
               PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    python = sys.executable
    prefix = os.path.join(work, "cg.out")
    valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
                f"--callgrind-out-file={prefix}"]
    if cold:
        valgrind += COLD_CACHES
        sides = "cubind,Python floor,converting floor,holding floor"
        n1, n2 = 20, 220   # a miss count is the same call after call: fewer calls will do
        only = only if only.startswith(("launch", "allocate")) else "launch" + (f"|{only}" if only else "")
    else:
        sides, n1, n2 = "cubind,Python floor", N1, N2
    out = run(valgrind + [python, child, HERE, control, floor_so, str(n1), str(n2), only, sides], env=env)
    skipped = json.loads(out.stdout.split("SKIPPED ", 1)[1].splitlines()[0])
    dumps = read_dumps(prefix, events=cold)
    counts = {}
    for desc, total in dumps.items():
        row, side, which = desc.rsplit("|", 2)
        if which == "n1" and f"{row}|{side}|n2" in dumps:
            after = dumps[f"{row}|{side}|n2"]
            if cold:
                per_call = {"Ir": round((after["Ir"] - total["Ir"]) / (n2 - n1))}
                for short, event in COLD_EVENTS:
                    per_call[short] = round((after[event] - total[event]) / (n2 - n1), 1)
                counts.setdefault(row, {})[side] = per_call
            else:
                counts.setdefault(row, {})[side] = round((after - total) / (n2 - n1))
    for module in () if cold else IMPORTS:
        name = f"import {module}"
        if only and only not in name:
            continue
        for old in os.listdir(work):
            if old.startswith("cg.out"):
                os.remove(os.path.join(work, old))
        run(valgrind + [python, import_child, control, module], env=env)
        for desc, total in read_dumps(prefix).items():
            counts.setdefault(name, {})["cubind"] = total
    shutil.rmtree(work, ignore_errors=True)
    return counts, skipped


def environment():
    import Cython
    numpy = sys.modules.get("numpy")
    try:
        import numpy
    except ImportError:
        numpy = None
    cc = subprocess.run([os.environ.get("CC", "cc"), "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return {"python": platform.python_version(), "numpy": getattr(numpy, "__version__", None),
            "cython": Cython.__version__, "cc": cc, "machine": platform.machine()}


def print_table(counts, skipped):
    print("| row | cubind instructions | Python floor instructions | cubind - floor |")
    print("|---|---:|---:|---:|")
    for row, sides in counts.items():
        ours, floor = sides.get("cubind"), sides.get("Python floor")
        over = f"{ours - floor}" if ours is not None and floor is not None else "-"
        print(f"| {row} | {ours if ours is not None else '-'} | {floor if floor is not None else '-'} | {over} |")
    if skipped:
        print()
        print("not counted here: " + "; ".join(f"{k} ({v})" for k, v in sorted(skipped.items())))


def print_cold_table(counts):
    print("| row | cubind - Python floor: instructions, I1, D1r, D1w misses | cubind - converting (launch) or holding "
          "(allocate) floor: the same | Python floor (with the stand-in's 64 KiB of code and 128 KiB of data) |")
    print("|---|---|---|---|")
    keys = ("Ir",) + tuple(short for short, _ in COLD_EVENTS)

    def show(values):
        return " / ".join(f"{values[k]:g}" for k in keys)

    for row, sides in counts.items():
        ours = sides.get("cubind")
        if ours is None:
            continue
        over = {}
        for floor in ("Python floor", "converting floor", "holding floor"):
            base = sides.get(floor)
            over[floor] = show({k: round(ours[k] - base[k], 1) for k in keys}) if base else "-"
        second = over["converting floor"] if "converting floor" in sides else over["holding floor"]
        floor = sides.get("Python floor")
        print(f"| {row} | {over['Python floor']} | {second} | {show(floor) if floor else '-'} |")


def check(counts, table):
    """Lines saying what grew, appeared or disappeared; empty when all is well."""
    problems = []
    committed = table["rows"]
    for row, sides in counts.items():
        if row not in committed:
            problems.append(f"{row}: not in {os.path.basename(TABLE)} (a new row: run --update with the reason)")
            continue
        for side, now in sides.items():
            before = committed[row].get(side)
            if before is None:
                problems.append(f"{row} ({side}): not in {os.path.basename(TABLE)}")
            elif now > before * (1 + GROWTH) and now - before > SLACK:
                problems.append(f"{row} ({side}): {now} instructions per call, {before} committed "
                                f"(+{(now - before) / before:.1%}, more than {GROWTH:.0%})")
    for row in committed:
        if row not in counts:
            problems.append(f"{row}: committed but not counted now (a row removed: run --update with the reason)")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help=f"fail when a row grows by more than {GROWTH:.0%}")
    group.add_argument("--update", metavar="REASON", help=f"rewrite {os.path.basename(TABLE)}, saying why")
    group.add_argument("--cold", action="store_true",
                       help="the launch (or, --only allocate, allocate) rows' first-level cache misses per call, "
                            "the caches emptied by each launch, allocation and free")
    parser.add_argument("--only", default="", help="only the rows whose name contains this text")
    args = parser.parse_args(argv)
    if args.update is not None and (args.only or not args.update.strip()):
        sys.exit("instruction_counts: --update needs a reason and every row (no --only)")
    if args.cold:
        counts, skipped = count(args.only, cold=True)
        print_cold_table(counts)
        return 0
    counts, skipped = count(args.only)
    print_table(counts, skipped)
    env = environment()
    if args.update is not None:
        with open(TABLE, "w") as f:
            json.dump({"updated": datetime.date.today().isoformat(), "reason": args.update.strip(),
                       "environment": env, "rows": counts}, f, indent=1, sort_keys=False)
            f.write("\n")
        print(f"\nwrote {TABLE}; commit it with the reason: {args.update.strip()}")
        return 0
    if args.check:
        with open(TABLE) as f:
            table = json.load(f)
        if args.only:
            table["rows"] = {k: v for k, v in table["rows"].items() if args.only in k}
        problems = check(counts, table)
        if problems:
            print(f"\ninstruction counts: {len(problems)} rows differ from {os.path.basename(TABLE)} "
                  f"(last updated {table.get('updated')}: {table.get('reason')}):")
            for line in problems:
                print("  " + line)
            if table.get("environment") != env:
                print(f"  (the table was counted with {table.get('environment')}, this run with {env}: "
                      "a different interpreter, NumPy or compiler changes every count)")
            print("If the growth is meant, run: python3 benchmarks/instruction_counts.py --update \"<why>\" "
                  "and commit the table with that reason.")
            return 1
        print(f"\ninstruction counts: all {len(counts)} rows within {GROWTH:.0%} of {os.path.basename(TABLE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every shell command the newcomer's documentation shows works as written.

The documents: README.md, examples/README.md, docs/writing-docs.md and
docs/getting-started/*.md.
Every fenced block of language sh, bash, shell or console is read; each of its
lines (continuation lines joined, the trailing `# comment` dropped) is one
command, and every command must match one rule of RULES below, or this check
fails naming it: a command added to the documentation needs a decision here.

A rule says how its command is verified:

  run      run as written, with bash, in a scratch copy of the repository (the
           files git tracks, as they are in the working tree), cwd its root,
           with the project's venv on PATH first (so `python`, `pip` and
           `cython` are .venv's, as for a user who activated it), HOME a scratch
           folder, the toolkit where CI has it (/usr/local/cuda) and
           cubind-codegen of the test build (build/test/codegen) on PATH. A
           block whose lines share shell variables or files runs as one script
           (`block`); `files` names the documentation snippets it needs in its
           folder (a CMake project, a Cython module and its setup.py), taken
           from the same page. Identical commands run once (the C++ build and
           install of examples/README.md and docs/getting-started/cpp.md).
  dry-run  `pip install ...`: run as written plus --dry-run, which builds the
           package's metadata in pip's isolated build environment and resolves
           its extras, but does not compile; the compile is the wheel stage's
           (pip wheel . of scripts/test.sh), which builds the same pyproject.
  stage    the command is what a stage of scripts/test.sh runs (named, and
           checked to be there verbatim or as the given text): building the
           package again here would cost minutes for no new verdict.
  ci       the command is run, as written, by .ci/run on CI's fresh clone
           (checked verbatim there); scripts/run_main.sh and scripts/test.sh.

Why not run everything: each full build of cubind takes minutes on CI's two
cores, and CI must end within 90 minutes. The scratch copy shares .venv
(where scripts/test.sh's wheel stage installed the wheel) and the test build's
generator, so what needs them costs seconds; the only compile here is the C++
libraries' Release build of the documents' install commands (a few minutes).

A command that drifts (a script renamed, a path or a flag that is wrong) fails
the run, or for `stage`/`ci` rules the check that the script still says it.
Run by scripts/test.sh (stage doc-commands) after the wheel stage:
    .venv/bin/python tests/doc_commands/check_doc_commands.py [-k SUBSTRING]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = ["README.md", "examples/README.md", "docs/writing-docs.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs/getting-started/*.md")))
SHELL = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")

# (pattern matched against the whole command, kind, argument). First match wins.
RULES = [
    (r"bash scripts/run_main\.sh", "ci", None),
    (r"bash scripts/test\.sh", "ci", None),
    (r"bash scripts/docs\.sh", "run", None),
    (r"python -m cubind", "run", None),
    (r"pip install \.|pip install \"\.\[cu13\]\"", "dry-run", None),
    (r"pip wheel \. -w dist", "stage", ("wheel", "pip wheel")),
    (r"cubind-codegen (generate|check|dump-ir|coverage)", "run", None),
    # README, Cython: version.pyx of the ```cython block before it
    (r"(inc|cuda_inc|lib)=\$\(python -c .*|cython --cplus -3 version\.pyx|g\+\+ -shared .*version\.cpp.*",
     "block", {"version.pyx": ("cython", None)}),
    # examples/README.md and getting-started/cpp.md: the C++ libraries built and installed
    (r"cmake -S \. -B build/rel -G Ninja -DCMAKE_BUILD_TYPE=Release", "run", None),
    (r"cmake --build build/rel", "run", None),
    (r"cmake --install build/rel --prefix \$HOME/cubind", "run", None),
    (r"cmake -S examples -B build/examples -G Ninja -DCMAKE_PREFIX_PATH=\$HOME/cubind && cmake --build build/examples",
     "run", None),
    # getting-started/cpp.md: the hello_cubind project of its snippets
    (r"cmake -S \. -B build -DCMAKE_PREFIX_PATH=\$HOME/cubind|cmake --build build && \./build/hello_cubind",
     "block", {"CMakeLists.txt": ("cmake", "project hello_cubind"), "main.cpp": ("cpp", "project hello_cubind")}),
    # getting-started/cpp.md: the Cython module of its snippets
    (r"python setup\.py build_ext --inplace|python -c \"import nvrtc_version; nvrtc_version\.main\(\)\"",
     "block", {"nvrtc_version.pyx": ("cython", "cython nvrtc_version"),
               "setup.py": ("python", "setup nvrtc_version")}),
]


def fenced_blocks(page):
    """(language, marker, first line, lines) of every fenced block; marker is
    the MyST `% snippet: ...` comment before it, if any."""
    lines = open(os.path.join(ROOT, page), encoding="utf-8").read().split("\n")
    i, out = 0, []
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        marker = lines[j].strip()[len("% snippet:"):].strip() if j >= 0 and lines[j].startswith("% snippet:") else None
        end = i + 1
        while end < len(lines) and lines[end].strip() != m.group(1):
            end += 1
        out.append((m.group(2), marker, i + 1, lines[i + 1:end]))
        i = end + 1
    return out


def strip_comment(line):
    """The line without a trailing `# comment` (a # outside quotes, after a space)."""
    quote = None
    for k, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1] in " \t"):
            return line[:k].rstrip()
    return line.rstrip()


def commands(block_lines):
    out, pending = [], ""
    for line in block_lines:
        line = strip_comment(line)
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        command = (pending + line.strip()).strip()
        pending = ""
        if command:
            out.append(command)
    return out


def rule_for(command):
    for pattern, kind, arg in RULES:
        if re.fullmatch(pattern, command):
            return kind, arg
    return None, None


def scratch_copy(dest):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    tar = subprocess.Popen(["tar", "--null", "-T", "-", "-cf", "-"], cwd=ROOT, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-xf", "-", "-C", dest], stdin=tar.stdout)
    tar.stdout.close()
    tar.communicate(files)
    if tar.returncode or untar.wait():
        raise SystemExit("doc-commands: copying the repository failed")
    os.symlink(os.path.join(ROOT, ".venv"), os.path.join(dest, ".venv"))
    # The pinned headers scripts/setup.sh fetched (cubind-codegen reads them there).
    for pinned in (".cuda-extras", ".cuda-headers"):
        if os.path.isdir(os.path.join(ROOT, pinned)):
            os.symlink(os.path.join(ROOT, pinned), os.path.join(dest, pinned))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-k", default="", help="check only commands containing this text")
    parser.add_argument("--list", action="store_true", help="list the commands and their rules, run nothing")
    args = parser.parse_args()

    build = os.path.join(ROOT, os.environ.get("CUBIND_BUILD_DIR", "build/test"))
    work = tempfile.mkdtemp(prefix="cubind-doc-commands-")
    repo, home = os.path.join(work, "repo"), os.path.join(work, "home")
    env = dict(os.environ)
    env.update(HOME=home, PATH=os.pathsep.join([os.path.join(repo, ".venv", "bin"),
                                                os.path.join(build, "codegen"), env.get("PATH", "")]))
    for name in ("CUBIND_BUILD_DIR", "CUBIND_INSTALL_PREFIX", "VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(name, None)
    # As the README says for a checkout whose toolkit is older than the bindings'
    # headers: the pinned ones scripts/setup.sh fetched.
    pinned_headers = os.path.join(repo, ".cuda-headers", "include")
    if "CUBIND_CUDA_INCLUDE" not in env and os.path.isfile(os.path.join(ROOT, ".cuda-headers", "include", "cuda.h")):
        env["CUBIND_CUDA_INCLUDE"] = pinned_headers

    results, done, unknown = [], set(), []
    ci = open(os.path.join(ROOT, ".ci/run"), encoding="utf-8").read()
    test_sh = open(os.path.join(ROOT, "scripts/test.sh"), encoding="utf-8").read()
    try:
        if not args.list:
            os.makedirs(repo)
            os.makedirs(home)
            scratch_copy(repo)
        for page in PAGES:
            blocks = fenced_blocks(page)
            for language, _, line, block_lines in blocks:
                if language not in SHELL:
                    continue
                block_cmds = commands(block_lines)
                block_run = None
                for command in block_cmds:
                    where = f"{page}:{line}"
                    kind, arg = rule_for(command)
                    if kind is None:
                        unknown.append(f"{where}: {command}")
                        continue
                    if args.k not in command:
                        continue
                    if args.list:
                        print(f"{kind:8} {where}: {command}")
                        continue
                    t0 = time.monotonic()
                    if kind == "ci":
                        ok = any(l.strip() == command or l.strip().startswith(command + " ") or
                                 (" " + command) in l for l in ci.split("\n") if not l.lstrip().startswith("#"))
                        detail = "" if ok else f".ci/run does not run `{command}`"
                    elif kind == "stage":
                        stage, text = arg
                        ok = f"stage {stage} " in test_sh and text in test_sh
                        detail = "" if ok else f"scripts/test.sh has no stage {stage} running `{text}`"
                    elif kind in ("run", "dry-run"):
                        if command in done:
                            continue
                        done.add(command)
                        script = command + (" --dry-run" if kind == "dry-run" else "")
                        ok, detail = run(script, repo, env)
                        if kind == "dry-run" and not ok and re.search(
                                r"NewConnectionError|Failed to establish|Temporary failure in name resolution|"
                                r"Network is unreachable", detail):
                            ok, detail = True, "skipped: pip cannot reach the package index"
                    elif kind == "block":
                        if block_run is not None:
                            continue
                        folder = os.path.join(work, f"block-{len(results)}")
                        os.makedirs(folder)
                        for filename, (lang, marker) in arg.items():
                            found = [b for b in blocks if b[0] == lang and b[1] == marker and b[2] < line]
                            if not found:
                                raise SystemExit(f"{where}: no ```{lang} block for {filename} before it")
                            with open(os.path.join(folder, filename), "w") as f:
                                f.write("\n".join(found[-1][3]) + "\n")
                        script = "set -e\n" + "\n".join(block_cmds)
                        ok, detail = run(script, folder, env)
                        block_run = ok
                        command = " ; ".join(block_cmds)
                    results.append((ok, kind, where, command, time.monotonic() - t0, detail))
                    print(f"{'ok  ' if ok else 'FAIL'} {kind:8} {time.monotonic() - t0:6.1f} s  {where}: {command}"
                          + (f"\n{detail}" if (detail and not ok) or detail.startswith("skipped") else ""),
                          flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if unknown:
        print("commands of the documentation that no rule of tests/doc_commands/check_doc_commands.py covers:\n  "
              + "\n  ".join(unknown), file=sys.stderr)
    failed = [r for r in results if not r[0]]
    if not args.list:
        print(f"doc-commands: {len(results) - len(failed)} passed, {len(failed)} failed, {len(unknown)} unknown")
    return 1 if failed or unknown or (not results and not args.list and not args.k) else 0


def run(script, cwd, env):
    result = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=1800)
    if result.returncode == 0:
        return True, ""
    return False, f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


if __name__ == "__main__":
    sys.exit(main())

"""Every code snippet of the documentation site (docs/**/*.md) runs.

A MyST comment on the line before a fence says how:

    (none)                       python: runs in CI, without a GPU
    % snippet: gpu               python: runs where a GPU is present (marker gpu)
    % snippet: multi_gpu         python: needs two GPUs (marker multi_gpu)
    % snippet: cython NAME       cython: NAME.pyx of a project built with the
    % snippet: setup NAME        python: ...its setup.py (python setup.py build_ext --inplace)
    % snippet: project NAME      cmake/cpp: CMakeLists.txt and main.cpp of a CMake project
                                 built against an install of cubind (find_package)

The Python snippets of one page run in order in one fresh interpreter, so a page
builds on its earlier snippets; the gpu run of a page includes its plain ones.
Fences of other languages (sh commands, text, yaml) are shown, not run.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
RUN_LANGUAGES = {"python", "cython", "cmake", "cpp"}
SHOWN_LANGUAGES = {"", "sh", "text", "yaml", "console", "ini", "toml"}
FENCE = re.compile(r"^(`{3,})\s*(\{[\w-]+\}|[\w+-]*)(.*)$")


def _snippets(path):
    """(language, marker words, line, code) for every fenced block of a page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, language = m.group(1), m.group(2)
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        marker = lines[j].strip()[len("% snippet:"):].split() if j >= 0 and lines[j].startswith("% snippet:") else []
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        out.append((language, marker, i + 1, "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return out


PAGES = sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True))
SNIPPETS = {os.path.relpath(p, ROOT): _snippets(p) for p in PAGES}


def _python_pages(kind):
    """Pages with Python snippets to run: kind is None (plain), "gpu" or "multi_gpu"."""
    pages = []
    for page, snippets in SNIPPETS.items():
        wanted = [s for s in snippets if s[0] == "python" and (s[1][:1] == [kind] if kind else not s[1])]
        if wanted:
            pages.append(page)
    return pages


def _run_page(page, kinds, tmp_path):
    script = []
    for language, marker, line, code in SNIPPETS[page]:
        if language != "python" or (marker and marker[0] not in kinds) or (not marker and None not in kinds):
            continue
        script.append(f"# {page}:{line}\n{code}")
    path = tmp_path / "snippets.py"
    path.write_text("\n".join(script))
    result = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{page}:\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"


def test_every_snippet_is_run_or_shown():
    unknown = []
    for page, snippets in SNIPPETS.items():
        for language, marker, line, _ in snippets:
            if language in SHOWN_LANGUAGES or language.startswith("{"):  # text, commands, directives
                continue
            ok = language in RUN_LANGUAGES and (
                (language == "python" and (not marker or marker[0] in ("gpu", "multi_gpu", "setup")))
                or (language == "cython" and marker[:1] == ["cython"])
                or (language in ("cmake", "cpp") and marker[:1] == ["project"]))
            if not ok:
                unknown.append(f"{page}:{line}: {language or 'text'} {' '.join(marker)}")
    assert not unknown, "snippets that no test runs:\n" + "\n".join(unknown)


@pytest.mark.parametrize("page", _python_pages(None))
def test_python_snippets(page, tmp_path):
    _run_page(page, (None,), tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("page", _python_pages("gpu"))
def test_python_snippets_gpu(page, tmp_path):
    _run_page(page, (None, "gpu"), tmp_path)


@pytest.mark.multi_gpu
@pytest.mark.parametrize("page", _python_pages("multi_gpu"))
def test_python_snippets_multi_gpu(page, tmp_path):
    _run_page(page, (None, "gpu", "multi_gpu"), tmp_path)


def _named(kind):
    """{name: {language: code}} of the snippets marked `kind NAME` (and, for
    cython projects, their `setup NAME` and following Python)."""
    found = {}
    for page, snippets in SNIPPETS.items():
        for language, marker, line, code in snippets:
            if len(marker) == 2 and marker[0] in kind:
                found.setdefault(marker[1], {"page": page})[language] = code
    return found


@pytest.mark.parametrize("name", sorted(_named(("cython", "setup"))))
def test_cython_snippets(name, tmp_path):
    project = _named(("cython", "setup"))[name]
    (tmp_path / f"{name}.pyx").write_text(project["cython"])
    (tmp_path / "setup.py").write_text(project["python"])
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-6000:]
    run = subprocess.run([sys.executable, "-c", f"import {name}; {name}.main()"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def _install_prefix(tmp_path):
    """An install of cubind's C++ libraries: CUBIND_INSTALL_PREFIX, else one made
    from the build tree CUBIND_BUILD_DIR (scripts/test.sh sets it)."""
    prefix = os.environ.get("CUBIND_INSTALL_PREFIX")
    if prefix:
        return prefix
    build = os.environ.get("CUBIND_BUILD_DIR")
    if not build or not os.path.exists(os.path.join(ROOT, build, "CMakeCache.txt")):
        pytest.skip("set CUBIND_BUILD_DIR to a configured build of cubind (scripts/test.sh does) "
                    "or CUBIND_INSTALL_PREFIX to an install")
    prefix = str(tmp_path / "prefix")
    subprocess.run(["cmake", "--build", os.path.join(ROOT, build), "--target", "cubind", "cubind_raw"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--install", os.path.join(ROOT, build), "--prefix", prefix], check=True,
                   capture_output=True)
    return prefix


@pytest.mark.parametrize("name", sorted(_named(("project",))))
def test_cmake_snippets(name, tmp_path):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    project = _named(("project",))[name]
    source = tmp_path / "src"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(project["cmake"])
    (source / "main.cpp").write_text(project["cpp"])
    prefix = _install_prefix(tmp_path)
    configure = subprocess.run(["cmake", "-S", str(source), "-B", str(tmp_path / "build"),
                                f"-DCMAKE_PREFIX_PATH={prefix}"], capture_output=True, text=True)
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    build = subprocess.run(["cmake", "--build", str(tmp_path / "build")], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    binary = tmp_path / "build" / name
    run = subprocess.run([str(binary)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

"""The package's layers as installed. Every extension module's NEEDED list
follows its layer: cubind.bindings (and cubind._libraries) link the raw layer
(libcubind_raw.so) and nothing of the core; cubind.core's modules, however
many there are and in whatever subpackage, link the core (libcubind.so, which
links libcubind_raw.so) and never the raw layer itself: their C++ glue calls
only the core, so no module refers to a symbol of cubind::raw, and the linker
(--as-needed, the default of the GCC the package is built with) leaves
libcubind_raw.so, which the cubind target passes on, out of their NEEDED
lists (readelf -d). The raw layer links nothing of cubind, and the loader
inside it finds NVIDIA's wheels next to the package."""

import glob
import os
import shutil
import subprocess
import sys

import cubind
from conftest import run_python

PACKAGE = os.path.dirname(cubind.__file__)
LIBRARIES = ("libcubind_raw.so", "libcubind.so")


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def extension_modules():
    """{dotted name: path} of every extension module in the package (the two libraries left out)."""
    modules = {}
    for path in glob.glob(os.path.join(PACKAGE, "**", "*.so"), recursive=True):
        if os.path.basename(path) in LIBRARIES:
            continue
        rel = os.path.relpath(path, os.path.dirname(PACKAGE))
        modules[os.path.dirname(rel).replace(os.sep, ".") + "." + os.path.basename(rel).split(".")[0]] = path
    return modules


def layer(module):
    """Which library a module sits over: "raw", "core", or None for a module no rule covers."""
    if module == "cubind._libraries" or module.startswith("cubind.bindings."):
        return "raw"
    if module.startswith("cubind.core."):
        return "core"
    return None


def cubind_libraries(path):
    return [lib for lib in needed(path) if lib.startswith("libcubind")]


def test_both_libraries_are_installed_at_the_package_root():
    assert os.path.isfile(os.path.join(PACKAGE, "libcubind_raw.so"))
    assert os.path.isfile(os.path.join(PACKAGE, "libcubind.so"))


def test_the_raw_library_links_nothing_of_cubind_nor_any_cuda_library():
    libs = needed(os.path.join(PACKAGE, "libcubind_raw.so"))
    assert not [lib for lib in libs if lib.startswith(("libcubind", "libcuda", "libnvrtc", "libnvJitLink"))], libs


def test_the_core_links_the_raw_library():
    assert "libcubind_raw.so" in needed(os.path.join(PACKAGE, "libcubind.so"))


def test_every_extension_module_has_a_layer():
    # A module outside cubind.bindings, cubind._libraries and cubind.core
    # needs its rule written here first.
    modules = extension_modules()
    assert not [m for m in modules if layer(m) is None], sorted(modules)


def test_bindings_modules_link_the_raw_layer_only():
    modules = {m: path for m, path in extension_modules().items() if layer(m) == "raw"}
    callers = {"cubind._libraries", "cubind.bindings.driver", "cubind.bindings.runtime",
               "cubind.bindings.nvrtc", "cubind.bindings.nvjitlink", "cubind.bindings.nvml"}
    assert callers <= set(modules), sorted(modules)
    for module, path in modules.items():
        libs = cubind_libraries(path)
        assert set(libs) <= {"libcubind_raw.so"}, (module, libs)
        # Modules that call into the CUDA libraries need the raw layer; a
        # module with no such call (those of _support) may need nothing of cubind.
        if module in callers:
            assert libs == ["libcubind_raw.so"], (module, libs)


def undefined_symbols(path):
    out = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def test_core_modules_link_the_core():
    # A module that calls the core names libcubind.so, and no module names
    # libcubind_raw.so: cubind.core's glue calls only the core. A module of
    # pure Python glue (_dlpack, _errors, _memory._ipc) needs no cubind library.
    modules = {m: path for m, path in extension_modules().items() if layer(m) == "core"}
    assert modules, "cubind.core has no extension module"
    linking = []
    for module, path in modules.items():
        libs = cubind_libraries(path)
        assert set(libs) <= {"libcubind.so"}, (module, libs)
        # The reason, whatever the linker keeps: nothing of cubind::raw is called.
        raw = [name for name in undefined_symbols(path) if name.startswith("_ZN6cubind3raw")]
        assert raw == [], (module, raw)
        if libs:
            linking.append(module)
    assert "cubind.core._stream" in linking and "cubind.core._launch" in linking, linking


def test_one_table_per_process_shared_by_the_modules():
    # A library loaded through one module is loaded for all: the status the
    # nvrtc module's call leaves is the one _libraries reads.
    result = run_python(
        "import cubind\n"
        "from cubind.bindings import nvrtc\n"
        "assert not cubind.library_status('nvrtc')['attempted']\n"
        "err, major, minor = nvrtc.nvrtcVersion()\n"
        "print(cubind.library_status('nvrtc')['loaded'])\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]


def test_the_loader_finds_nvidia_wheels_beside_the_package(tmp_path):
    # A site-packages of our own: a copy of the package (the loader resolves
    # its own file, so a link would lead back to the real one) and an NVIDIA
    # wheel's directory holding libnvrtc.
    toolkit_nvrtc = cubind.load_library("nvrtc")["path"]
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "cubind", ignore=shutil.ignore_patterns("include", "__pycache__"))
    wheel_lib = site / "nvidia" / "cu13" / "lib"
    wheel_lib.mkdir(parents=True)
    os.symlink(os.path.realpath(toolkit_nvrtc), wheel_lib / "libnvrtc.so.13")
    env = {"PYTHONPATH": str(site), "CUBIND_NVRTC_LIBRARY": "", "CONDA_PREFIX": "", "CUDA_HOME": "", "CUDA_PATH": ""}
    result = subprocess.run(
        [sys.executable, "-c",
         "import cubind; assert cubind.__file__.startswith(%r), cubind.__file__\n"
         "print(cubind.load_library('nvrtc')['path'])" % str(site)],
        capture_output=True, text=True, env={**os.environ, **env}, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(wheel_lib / "libnvrtc.so.13")

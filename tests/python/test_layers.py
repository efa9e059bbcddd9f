"""The package's layers as installed: every extension module links the raw
layer (libcubind_raw.so) and nothing of the core, the raw layer links nothing
of cubind, and the loader inside it finds NVIDIA's wheels next to the package."""

import glob
import os
import shutil
import subprocess
import sys

import cubind
from conftest import run_python

PACKAGE = os.path.dirname(cubind.__file__)


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def extension_modules():
    return sorted(glob.glob(os.path.join(PACKAGE, "**", "*.so"), recursive=True))


def test_both_libraries_are_installed_at_the_package_root():
    assert os.path.isfile(os.path.join(PACKAGE, "libcubind_raw.so"))
    assert os.path.isfile(os.path.join(PACKAGE, "libcubind.so"))


def test_the_raw_library_links_nothing_of_cubind_nor_any_cuda_library():
    libs = needed(os.path.join(PACKAGE, "libcubind_raw.so"))
    assert not [lib for lib in libs if lib.startswith(("libcubind", "libcuda", "libnvrtc", "libnvJitLink"))], libs


def test_the_core_links_the_raw_library():
    assert "libcubind_raw.so" in needed(os.path.join(PACKAGE, "libcubind.so"))


def test_every_bindings_module_links_the_raw_layer_only():
    # cubind.core's modules sit above the C++ core and link it; every other
    # module sits below it.
    core_dir = os.path.join(PACKAGE, "core")
    modules = {os.path.basename(m).split(".")[0]: m for m in extension_modules()
               if not os.path.basename(m).startswith("libcubind")
               and os.path.dirname(m) != core_dir}
    callers = {"_libraries", "driver", "runtime", "nvrtc", "nvjitlink"}
    assert callers <= set(modules), sorted(modules)
    for name, module in modules.items():
        libs = needed(module)
        assert "libcubind.so" not in libs, (module, libs)
        # Modules that call into the CUDA libraries need the raw layer; a
        # module with no such call (_support) may need nothing of cubind.
        if name in callers:
            assert "libcubind_raw.so" in libs, (module, libs)


def test_core_modules_link_the_core():
    core_dir = os.path.join(PACKAGE, "core")
    modules = [m for m in extension_modules() if os.path.dirname(m) == core_dir]
    assert modules, "cubind.core has no extension module"
    for module in modules:
        assert "libcubind.so" in needed(module), module


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

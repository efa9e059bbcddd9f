"""Faults of the environment, without a GPU: each gives the error of docs/loading.md.

A library that is hidden (an override naming a missing file, or a machine where
no place of the search order holds it), a driver too old for an entry point or
for cuGetProcAddress_v2 (the stand-in driver of fake_driver/, built with -D
flags), and an NVRTC of another major version (a stand-in whose soname is
libnvrtc.so.12). Each case runs in a child interpreter, since a library loads
once per process and a crash must be counted.
"""
import ctypes.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import FAKE_DRIVER_SOURCE

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NVRTC12_SOURCE = os.path.join(ROOT, "bindings", "loader", "tests", "standin_nvrtc12.c")

# Variables that would send the search elsewhere than the case intends.
SEARCH_VARIABLES = ("CUBIND_NVRTC_LIBRARY", "CUBIND_NVJITLINK_LIBRARY", "CUBIND_CUDART_LIBRARY",
                    "CUBIND_NVVM_LIBRARY", "CUBIND_NVFATBIN_LIBRARY", "CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH")


# What child() puts before its code: the message of a call's RuntimeError.
RAISES = """
def message_of(call):
    try:
        call()
    except RuntimeError as e:
        return str(e)
    raise AssertionError("no RuntimeError")
"""


def child(code, env=None, prefix=()):
    full_env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    full_env.update(env or {})
    code = RAISES + textwrap.dedent(code) + "\nprint('ok')\n"
    result = subprocess.run([*prefix, sys.executable, "-c", code],
                            capture_output=True, text=True, env=full_env, timeout=120)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), (
        f"child exit {result.returncode}\nstdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}")
    return result.stdout


def compile_c(source, out, *flags):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    result = subprocess.run([cc, "-shared", "-fPIC", "-O1", *flags, "-o", str(out), source, "-lpthread"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return str(out)




# ---------------------------------------------------------------------------
# A hidden NVRTC or nvJitLink

@pytest.mark.parametrize("variable,soname,name,call", [
    ("CUBIND_NVRTC_LIBRARY", "libnvrtc.so.13", "NVRTC", "nvrtc.nvrtcVersion()"),
    ("CUBIND_NVJITLINK_LIBRARY", "libnvJitLink.so.13", "nvJitLink", "nvjitlink.version()"),
])
def test_override_naming_a_missing_file(variable, soname, name, call, tmp_path):
    missing = str(tmp_path / soname)
    core_call = ("cc.Program('__global__ void k() {}', 'c++', cc.ProgramOptions(arch='sm_90')).compile('ptx')"
                 if name == "NVRTC" else
                 "cc.Linker(cc.ObjectCode.from_ptx(b'.version 9.0'), options=cc.LinkerOptions(arch='sm_90')).link('cubin')")
    child(f"""
        from cubind.bindings import nvrtc, nvjitlink
        import cubind.core as cc
        expected = ("cubind could not load {name} ({soname}). Tried:\\n"
                    "  - {variable}={missing}: no such file\\n"
                    "{variable} is set, so no other place was searched: correct it or unset it.")
        assert message_of(lambda: {call}) == expected, message_of(lambda: {call})
        # The failure is remembered: the next call says the same, and so does cubind.core.
        assert message_of(lambda: {call}) == expected
        assert message_of(lambda: {core_call}) == expected
    """, env={variable: missing})


@pytest.mark.parametrize("variable,soname,name,call", [
    ("CUBIND_NVVM_LIBRARY", "libnvvm.so.4", "libNVVM", "nvvm.version()"),
    ("CUBIND_NVFATBIN_LIBRARY", "libnvfatbin.so.13", "nvFatbin", "nvfatbin.create([], 0)"),
    ("CUBIND_CUFILE_LIBRARY", "libcufile.so.0", "cuFile", "cufile.get_version()"),
    ("CUBIND_CUDLA_LIBRARY", "libcudla.so.1", "cuDLA", "cudla.device_get_count()"),
])
def test_toolkit_libraries_import_without_their_library_and_say_what_was_tried(variable, soname, name, call,
                                                                               tmp_path):
    missing = str(tmp_path / soname)
    child(f"""
        from cubind.bindings import nvvm, nvfatbin, cufile, cudla
        assert nvvm.Result.SUCCESS == 0 and nvfatbin.Result.SUCCESS == 0  # importing loads nothing
        assert cufile.OpError.SUCCESS == 0 and cudla.Status.SUCCESS == 0
        expected = ("cubind could not load {name} ({soname}). Tried:\\n"
                    "  - {variable}={missing}: no such file\\n"
                    "{variable} is set, so no other place was searched: correct it or unset it.")
        assert message_of(lambda: {call}) == expected, message_of(lambda: {call})
        assert message_of(lambda: {call}) == expected
        import cubind
        status = cubind.library_status("{call.split(".")[0]}")
        assert status["attempted"] and not status["loaded"] and status["error"] == expected, status
    """, env={variable: missing})


def test_nvvm_is_looked_for_in_the_toolkits_nvvm_folder_first(tmp_path):
    """A toolkit keeps libNVVM in nvvm/lib64: under $CUDA_HOME that folder is tried before lib64."""
    real = _library_dirs("libnvvm.so.4")
    if not real:
        pytest.skip("libnvvm.so.4 is not installed here")
    root = tmp_path / "toolkit"
    for sub in ("nvvm/lib64", "lib64"):
        (root / sub).mkdir(parents=True)
        (root / sub / "libnvvm.so.4").symlink_to(os.path.join(real[0], "libnvvm.so.4"))
    out = child("""
        import cubind
        from cubind.bindings import nvvm
        nvvm.version()
        print("loaded from", cubind.library_status("nvvm")["path"])
    """, env={"CUDA_HOME": str(root)})
    path = out.split("loaded from", 1)[1].split()[0]
    if "site-packages" in path or "dist-packages" in path:
        pytest.skip(f"an NVIDIA wheel's libNVVM comes first here ({path})")
    assert path == str(root / "nvvm" / "lib64" / "libnvvm.so.4"), out


def _library_dirs(soname):
    """Every directory this machine holds the library in, as the loader could reach it."""
    candidates = [os.path.join("/usr/local/cuda/lib64", soname)]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), os.environ.get("CONDA_PREFIX")):
        if root:
            candidates += [os.path.join(root, sub, soname) for sub in ("lib64", "lib")]
    import site
    for packages in site.getsitepackages():
        candidates += [os.path.join(packages, "nvidia", sub, soname) for sub in ("cu13/lib", "cuda_nvrtc/lib",
                                                                                 "nvjitlink/lib")]
    listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    candidates += [line.split("=>")[-1].strip() for line in listing.splitlines() if soname in line.split("=>")[0]]
    dirs = set()
    for path in candidates:
        if os.path.exists(path):
            real = os.path.realpath(path)
            dirs.update({os.path.dirname(real), os.path.dirname(os.path.abspath(path))})
    return sorted(dirs)


def _hiding_prefix(dirs):
    """A command prefix that runs its command in a mount namespace where each
    directory is an empty tmpfs, or None where this machine does not allow it."""
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True)
    if probe.returncode != 0:
        return None
    mounts = " && ".join(f"mount -t tmpfs none '{d}'" for d in dirs)
    return ["unshare", "-m", "sh", "-c", mounts + ' && exec "$0" "$@"']


@pytest.mark.parametrize("soname,name,variable,call", [
    ("libnvrtc.so.13", "NVRTC", "CUBIND_NVRTC_LIBRARY", "nvrtc.nvrtcVersion()"),
    ("libnvJitLink.so.13", "nvJitLink", "CUBIND_NVJITLINK_LIBRARY", "nvjitlink.version()"),
])
def test_library_found_nowhere_lists_every_place(soname, name, variable, call):
    dirs = _library_dirs(soname)
    assert dirs, f"{soname} is not installed here"
    prefix = _hiding_prefix(dirs)
    if prefix is None:
        pytest.skip("no private mount namespace here (unshare -m) to hide the toolkit's libraries in")
    out = child(f"""
        from cubind.bindings import nvrtc, nvjitlink
        print(message_of(lambda: {call}))
    """, prefix=prefix)
    message = out.rsplit("ok", 1)[0].strip()
    expected_in_order = [
        f"cubind could not load {name} ({soname}). Tried:\n",
        f"  - {variable}: not set\n",
        "  - already loaded in this process: not found\n",
        "  - $CONDA_PREFIX: not set\n",
        "  - $CUDA_HOME: not set\n",
        "  - $CUDA_PATH: not set\n",
        f"  - /usr/local/cuda/lib64/{soname}: no such file\n",
        f"  - system loader ({soname}): {soname}: cannot open shared object file",
        f"Set {variable} to the full path of {soname}, or install the CUDA toolkit or the NVIDIA wheel.",
    ]
    at = 0
    for expected in expected_in_order:
        found = message.find(expected, at)
        assert found >= 0, f"missing or out of order: {expected!r}\nin:\n{message}"
        at = found + len(expected)


# ---------------------------------------------------------------------------
# NVRTC of another major version

def test_nvrtc_of_another_major_version_is_refused(tmp_path):
    standin = compile_c(NVRTC12_SOURCE, tmp_path / "libnvrtc.so.12", "-Wl,-soname,libnvrtc.so.12")
    # The stand-in itself answers as NVRTC 12.4 would.
    lib = ctypes.CDLL(standin)
    major, minor = ctypes.c_int(), ctypes.c_int()
    assert lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0 and (major.value, minor.value) == (12, 4)
    child(f"""
        from cubind.bindings import nvrtc
        import cubind.core as cc
        expected = ("cubind could not load NVRTC (libnvrtc.so.13). Tried:\\n"
                    "  - CUBIND_NVRTC_LIBRARY={standin}: its soname is libnvrtc.so.12, not libnvrtc.so.13: "
                    "another version than the one cubind was built for\\n"
                    "CUBIND_NVRTC_LIBRARY is set, so no other place was searched: correct it or unset it.")
        for call in (lambda: nvrtc.nvrtcVersion(), lambda: nvrtc.nvrtcGetErrorString(0),
                     lambda: cc.Program("__global__ void k() {{}}", "c++",
                                        cc.ProgramOptions(arch="sm_90")).compile("ptx")):
            got = message_of(call)
            assert got == expected, got
    """, env={"CUBIND_NVRTC_LIBRARY": standin})


# ---------------------------------------------------------------------------
# Old drivers (the stand-in driver)

def _driver_dir(tmp_path, *flags):
    folder = tmp_path / "driver"
    folder.mkdir()
    compile_c(FAKE_DRIVER_SOURCE, folder / "libcuda.so.1", *flags)
    return str(folder)


def _with_driver(folder):
    return {"LD_LIBRARY_PATH": folder + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")}


def test_driver_older_than_an_entry_point_says_install_a_newer_driver(tmp_path):
    folder = _driver_dir(tmp_path, "-DFAKE_DRIVER_VERSION=12000")
    child("""
        from cubind.bindings import driver
        assert driver.cuDriverGetVersion() == (driver.CUresult.CUDA_SUCCESS, 12000)
        got = message_of(lambda: driver.cuDeviceGetHostAtomicCapabilities([0], 1, 0))
        assert got.startswith("cuDeviceGetHostAtomicCapabilities is not available in the CUDA driver loaded from "), got
        assert got.endswith("libcuda.so.1 (driver API 12.0): it was introduced in CUDA 13.0; "
                            "install a newer NVIDIA driver"), got
        # Entry points the driver has keep working after the failure.
        assert driver.cuDeviceGetCount() == (driver.CUresult.CUDA_SUCCESS, 1)
    """, env=_with_driver(folder))


def test_driver_new_enough_but_lacking_an_entry_point_says_so(tmp_path):
    folder = _driver_dir(tmp_path)
    child("""
        from cubind.bindings import driver
        got = message_of(lambda: driver.cuDeviceGetHostAtomicCapabilities([0], 1, 0))
        assert "(driver API 13.0): the driver is new enough (it came in CUDA 13.0) but does not provide it" in got, got
        assert "install a newer NVIDIA driver" not in got, got
    """, env=_with_driver(folder))


def test_core_on_an_old_driver_names_the_missing_function(tmp_path):
    folder = _driver_dir(tmp_path, "-DFAKE_DRIVER_VERSION=12000")
    child("""
        import cubind.core as cc
        dev = cc.Device(0)
        dev.set_current()
        # The stand-in has no cuDeviceGetPCIBusId: an older driver lacking an entry point.
        got = message_of(lambda: dev.pci_bus_id)
        assert "cuDeviceGetPCIBusId" in got and "(driver API 12.0)" in got, got
    """, env=_with_driver(folder))


def test_driver_without_cu_get_proc_address(tmp_path):
    folder = _driver_dir(tmp_path, "-DFAKE_DRIVER_NO_PROC_ADDRESS")
    child(f"""
        from cubind.bindings import driver
        import cubind.core as cc
        expected = ("the CUDA driver at {folder}/libcuda.so.1 has no cuGetProcAddress_v2: "
                    "it is older than CUDA 12.0; install a newer NVIDIA driver")
        assert message_of(lambda: driver.cuInit(0)) == expected, message_of(lambda: driver.cuInit(0))
        assert message_of(lambda: driver.cuDriverGetVersion()) == expected
        assert message_of(lambda: cc.Device(0)) == expected, message_of(lambda: cc.Device(0))
    """, env=_with_driver(folder))

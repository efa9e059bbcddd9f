"""cubind: low-level CUDA bindings for Python and C++.

Subpackages:
  cubind.bindings  one-to-one bindings of the Driver, Runtime, NVRTC, nvJitLink, libNVVM,
                   nvFatbin, NVML, cuFile and cuDLA APIs (cydriver, cyruntime, cynvrtc,
                   cynvjitlink, cynvvm, cynvfatbin, cynvml, cycufile and cycudla for cimport)
  cubind.core      devices, streams, memory, programs and launches: the API of
                   NVIDIA's cuda.core over cubind's C++ core

For extensions built on cubind: get_include(), get_cuda_include(), get_library_dir().

Importing cubind loads no CUDA library; the first call that needs one does.
"""

import os as _os

__version__ = "0.1.0"

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def get_include():
    """The one directory a Cython or C++ extension that uses cubind adds to its
    include path: cubind's headers (cubind/raw/*.hpp, cubind/detail/...), the
    C++ core's, and, where this build found no EGL, OpenGL or VDPAU headers,
    the stand-ins it used for them.

    The CUDA headers (cuda.h, ...) are not cubind's: get_cuda_include() finds them.
    """
    return _os.path.join(_HERE, "include")


# The headers cubind's own headers include: a directory is taken only when it
# holds the first of them.
_CUDA_HEADER = "cuda.h"
# Every CUDA header cubind's own headers include: a folder that lacks one
# (the nvidia-cuda-runtime wheel alone has no cudaProfiler.h) cannot serve.
_CUDA_HEADERS = ("cuda.h", "cudaProfiler.h", "cuda_profiler_api.h", "cuda_runtime_api.h", "library_types.h",
                 "nvrtc.h", "nvJitLink.h")


def _cuda_include_candidates():
    """(place, directory or None, reason) in search order, as the loader searches for libraries."""
    site_packages = _os.path.dirname(_HERE)
    yield "NVIDIA wheels", _os.path.join(site_packages, "nvidia", "cu13", "include"), None
    conda = _os.environ.get("CONDA_PREFIX")
    if conda:
        yield "$CONDA_PREFIX", _os.path.join(conda, "include"), None
        yield "$CONDA_PREFIX", _os.path.join(conda, "targets", "x86_64-linux", "include"), None
    else:
        yield "$CONDA_PREFIX", None, "not set"
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = _os.environ.get(variable)
        if root:
            yield "$" + variable, _os.path.join(root, "include"), None
        else:
            yield "$" + variable, None, "not set"
    yield "/usr/local/cuda", "/usr/local/cuda/include", None


def _cuda_h_version(path):
    """CUDA_VERSION as cuda.h defines it (13050), or None where it cannot be read."""
    import re
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            match = re.search(r"^#define CUDA_VERSION (\d+)", f.read(), re.M)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _bindings_cuda_text():
    from cubind.bindings._version import cuda_version
    return cuda_version


def _bindings_cuda_version():
    major, minor = (int(x) for x in _bindings_cuda_text().split("."))
    return major * 1000 + minor * 10


def get_cuda_include():
    """The directory holding the CUDA headers (cuda.h, ...) that cubind's headers include.

    Searched in the order the loader searches for NVRTC and the others
    (docs/loading.md): CUBIND_CUDA_INCLUDE (a directory; when set, the only
    place tried), the include directory of NVIDIA's wheels beside cubind
    (<site-packages>/nvidia/cu13/include), $CONDA_PREFIX, $CUDA_HOME, $CUDA_PATH,
    /usr/local/cuda. The first that holds every CUDA header cubind's headers
    include (cuda.h, cudaProfiler.h, cuda_runtime_api.h, nvrtc.h, nvJitLink.h,
    ...) of at least the CUDA release cubind.bindings was generated from
    (cubind.bindings.__version__) is taken: older headers lack its types.
    Raises RuntimeError listing every place tried, and what each lacked, when
    none does.
    """
    tried = []
    override = _os.environ.get("CUBIND_CUDA_INCLUDE")
    if override:
        candidates = [("CUBIND_CUDA_INCLUDE", override, None)]
    else:
        tried.append("  - CUBIND_CUDA_INCLUDE: not set")
        candidates = _cuda_include_candidates()
    seen = set()
    for place, directory, reason in candidates:
        if directory is None:
            tried.append(f"  - {place}: {reason}")
            continue
        if directory in seen:
            continue
        seen.add(directory)
        missing = [h for h in _CUDA_HEADERS if not _os.path.isfile(_os.path.join(directory, h))]
        if not missing:
            version = _cuda_h_version(_os.path.join(directory, _CUDA_HEADER))
            if version is None or version >= _bindings_cuda_version():
                return directory
            tried.append(f"  - {place}: {directory} holds the CUDA {version // 1000}.{version % 1000 // 10} "
                         f"headers, older than the CUDA {_bindings_cuda_text()} headers cubind was generated from")
            continue
        if len(missing) == len(_CUDA_HEADERS):
            tried.append(f"  - {place}: no {_CUDA_HEADER} in {directory}")
        else:
            tried.append(f"  - {place}: {directory} lacks {', '.join(missing)}")
    hint = ("CUBIND_CUDA_INCLUDE is set, so no other place was searched: correct it or unset it."
            if override else
            f"Set CUBIND_CUDA_INCLUDE to the directory holding cuda.h, or install the CUDA {_bindings_cuda_text()} "
            "toolkit (or newer) or the nvidia-cuda-runtime wheel.")
    raise RuntimeError("cubind could not find the CUDA headers (cuda.h). Tried:\n"
                       + "\n".join(tried) + "\n" + hint)


def get_library_dir():
    """The directory holding libcubind_raw.so (the raw layer: link -lcubind_raw
    for cimport cubind.bindings) and libcubind.so (the C++ core, -lcubind).

    A module built against it finds them at run time through an rpath to this
    directory (-Wl,-rpath,<dir>), or by being imported after cubind, which has
    loaded them already."""
    return _HERE


def library_status(name):
    """Whether a CUDA library is loaded, from where, or why it could not be.

    name: "driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "nvml", "cufile" or "cudla". Loads nothing.
    Returns a dict with keys attempted, loaded, path, error and missing: once
    loaded, the (function, CUDA version that introduced it) pairs of the entry
    points the library lacks, because it is older than the headers cubind was
    generated from or leaves out an optional part; calling one raises.
    """
    from cubind import _libraries

    return _libraries.status(name)


def load_library(name):
    """Loads a CUDA library now rather than at its first call.

    Raises RuntimeError listing every place tried when it cannot be found.
    Returns library_status(name).
    """
    from cubind import _libraries

    _libraries.load(name)
    return _libraries.status(name)

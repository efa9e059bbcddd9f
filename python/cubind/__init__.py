"""cubind: low-level CUDA bindings for Python and C++.

Subpackages:
  cubind.bindings  one-to-one bindings of the Driver, Runtime, NVRTC and nvJitLink
                   APIs (cydriver, cyruntime, cynvrtc and cynvjitlink for cimport)

Importing cubind loads no CUDA library; the first call that needs one does.
"""

import os as _os

__version__ = "0.1.0"

_HERE = _os.path.dirname(_os.path.abspath(__file__))


def get_include():
    """Directories a Cython or C++ extension that uses cubind needs to include.

    The CUDA headers (cuda.h, ...) come from the CUDA toolkit: add its include
    directory too. Where this build found no EGL, OpenGL or VDPAU headers, which
    CUDA's interop headers include, the stand-ins it used instead come last.
    """
    include = _os.path.join(_HERE, "include")
    standin = _os.path.join(include, "cubind", "standin")
    extra = sorted(_os.path.join(standin, d) for d in _os.listdir(standin)) if _os.path.isdir(standin) else []
    return [include] + extra


def get_library_dir():
    """The directory holding libcubind_raw.so (the raw layer: link -lcubind_raw
    for cimport cubind.bindings) and libcubind.so (the C++ core, -lcubind)."""
    return _HERE


def library_status(name):
    """Whether a CUDA library is loaded, from where, or why it could not be.

    name: "driver", "runtime", "nvrtc" or "nvjitlink". Loads nothing.
    Returns a dict with keys attempted, loaded, path and error.
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

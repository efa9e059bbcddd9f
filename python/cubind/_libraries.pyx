# cython: language_level=3
"""Status and explicit loading of the CUDA libraries behind cubind."""

from libcpp cimport bool
from libcpp.string cimport string

cdef extern from "cubind/detail/loader_support.hpp" namespace "cubind::detail" nogil:
    cdef cppclass LibraryStatus:
        bool attempted
        bool loaded
        string path
        string error

cdef extern from "cubind/raw/driver.hpp" namespace "cubind::raw" nogil:
    LibraryStatus driver_status()
    void driver_load() except +
cdef extern from "cubind/raw/runtime.hpp" namespace "cubind::raw" nogil:
    LibraryStatus runtime_status()
    void runtime_load() except +
cdef extern from "cubind/raw/nvrtc.hpp" namespace "cubind::raw" nogil:
    LibraryStatus nvrtc_status()
    void nvrtc_load() except +
cdef extern from "cubind/raw/nvjitlink.hpp" namespace "cubind::raw" nogil:
    LibraryStatus nvjitlink_status()
    void nvjitlink_load() except +

NAMES = ("driver", "runtime", "nvrtc", "nvjitlink")


cdef LibraryStatus _status(str name) except *:
    if name == "driver":
        return driver_status()
    if name == "runtime":
        return runtime_status()
    if name == "nvrtc":
        return nvrtc_status()
    if name == "nvjitlink":
        return nvjitlink_status()
    raise ValueError(f"unknown CUDA library {name!r}; expected one of {', '.join(NAMES)}")


def status(name):
    cdef LibraryStatus s = _status(name)
    return {
        "attempted": s.attempted,
        "loaded": s.loaded,
        "path": s.path.decode("utf-8", "replace") if s.loaded else None,
        "error": s.error.decode("utf-8", "replace") if s.attempted and not s.loaded else None,
    }


def load(name):
    if name == "driver":
        with nogil:
            driver_load()
    elif name == "runtime":
        with nogil:
            runtime_load()
    elif name == "nvrtc":
        with nogil:
            nvrtc_load()
    elif name == "nvjitlink":
        with nogil:
            nvjitlink_load()
    else:
        raise ValueError(f"unknown CUDA library {name!r}; expected one of {', '.join(NAMES)}")

# cython: language_level=3
"""Status and explicit loading of the CUDA libraries behind cubind."""

from libcpp cimport bool
from libcpp.pair cimport pair
from libcpp.string cimport string
from libcpp.vector cimport vector

cdef extern from "cubind/detail/loader_support.hpp" namespace "cubind::detail" nogil:
    cdef cppclass LibraryStatus:
        bool attempted
        bool loaded
        string path
        string error
        vector[pair[string, string]] missing


cdef int _unknown(str name) except -1:
    raise ValueError(f"unknown CUDA library {name!r}; expected one of {', '.join(NAMES)}")


# Generated (bindings/python/cubind/_libraries.pxi): each library's status and
# load functions, _status_of(name), _load(name) and NAMES. Found through
# Cython's include directories (bindings/python among them), not beside this file.
include "cubind/_libraries.pxi"


def status(name):
    cdef LibraryStatus s = _status_of(name)
    return {
        "attempted": s.attempted,
        "loaded": s.loaded,
        "path": s.path.decode("utf-8", "replace") if s.loaded else None,
        "error": s.error.decode("utf-8", "replace") if s.attempted and not s.loaded else None,
        # (function, the CUDA version that introduced it or None), for each entry
        # point the loaded library lacks
        "missing": [(m.first.decode(), m.second.decode() or None) for m in s.missing],
    }


def load(name):
    _load(name)

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
"""cubind.core's compiled classes: Cython over the C++ core (libcubind).

One extension module, in one file per concept (the .pxi files beside it), so
that the classes reach each other's C-level fields without a cimport chain.
Every call into a CUDA library releases the GIL.
"""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_CheckExact
from cpython.object cimport Py_TYPE, PyTypeObject
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from cpython.tuple cimport PyTuple_GET_ITEM

cdef extern from "Python.h":
    PyTypeObject PyLong_Type
    PyTypeObject PyFloat_Type
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memcmp, memcpy
from libcpp cimport bool as cbool
from libcpp.memory cimport shared_ptr, unique_ptr, static_pointer_cast
from libcpp.optional cimport optional
from libcpp.string cimport string
from libcpp.utility cimport move, pair
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp

import atexit
import collections.abc
import os
import threading
import weakref
from collections import namedtuple

from cubind.core._options import (
    ContextOptions,
    DeviceMemoryResourceOptions,
    EventOptions,
    LinkerOptions,
    PinnedMemoryResourceOptions,
    ProgramOptions,
    SMResourceOptions,
    StreamOptions,
    WorkqueueResourceOptions,
    _sm_split_request,
)
from cubind.core._host import Host
from cubind.core._memory_options import (
    _OVERLAP_MODE,
    _SRC_ACCESS_ORDER,
    HOST_LOCATION_TYPES,
    CopyOptions,
    ManagedMemoryResourceOptions,
    VirtualMemoryResourceOptions,
    _managed_location,
    _virtual_memory_settings,
)
from cubind.core.typing import ManagedMemoryLocationType

include "_errors.pxi"
include "_module.pxi"
include "_program.pxi"
include "_linker.pxi"
include "_device.pxi"
include "_context.pxi"
include "_device_resources.pxi"
include "_stream.pxi"
include "_ipc.pxi"
include "_event.pxi"
include "_memory.pxi"
include "_dlpack.pxi"
include "_memoryview.pxi"
include "_tensor_map.pxi"
include "_launch.pxi"
include "_graph.pxi"
include "_managed.pxi"
include "_virtual_memory.pxi"
include "_copy_batch.pxi"
include "_graph_definition.pxi"

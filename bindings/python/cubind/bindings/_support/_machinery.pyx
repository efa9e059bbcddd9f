# cython: language_level=3, boundscheck=False, wraparound=False
"""The machinery cubind.bindings' generated modules share, in one extension
module: importing the bindings loads one library and imports one table of C
functions. Its declarations are in _machinery.pxd; its code, one concern per
file, is in the .pxi files included below, in the order of what each needs."""

include "conversions.pxi"
include "handles.pxi"
include "enums.pxi"
include "scalars.pxi"
include "buffers.pxi"
include "fields.pxi"
include "callbacks.pxi"
include "typed_values.pxi"
include "kernel_params.pxi"

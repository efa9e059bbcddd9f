"""Machinery shared by the generated modules of cubind.bindings: one extension
module, _machinery, whose code is one file per concern:

enums          enum classes, and each module's table of them (status codes included)
handles        the Handle and Struct base classes and their argument conversions
conversions    ints, bytes, counts, plain addresses and arrays from Python arguments
buffers        addresses of void * parameters, buffers held for one call
fields         pointer and array fields of the struct classes
callbacks      the lifetime of Python callbacks handed to CUDA
scalars        scalars by struct-module format character
typed_values   void * values whose type an attribute selects
kernel_params  kernel arguments: None, an address or (values, types)
"""

from cubind.bindings._support._machinery import Enum, Handle, Struct, make_enum

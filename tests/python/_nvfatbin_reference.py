"""Builds a fat binary with NVIDIA's cuda.bindings.nvfatbin, for test_nvfatbin.py:
run with the folder of the cuda-bindings release that has nvfatbin first on
sys.path. Reads the inputs from DIR (ptx, cubin, ltoir), writes DIR/fatbin.

    python _nvfatbin_reference.py DIR ARCH LIBRARY

LIBRARY, the libnvfatbin that cubind loaded, is loaded first, so that NVIDIA's
module finds it already in the process and both packages call the same library.
"""
import ctypes
import os
import sys

folder, arch, library = sys.argv[1], sys.argv[2], sys.argv[3]
ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)

from cuda.bindings import nvfatbin  # noqa: E402


def read(name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


ptx, cubin, ltoir = read("ptx"), read("cubin"), read("ltoir")
handle = nvfatbin.create([], 0)
try:
    nvfatbin.add_ptx(handle, ptx, len(ptx), arch, "kernel.ptx", "")
    nvfatbin.add_cubin(handle, cubin, len(cubin), arch, "kernel.cubin")
    nvfatbin.add_ltoir(handle, ltoir, len(ltoir), arch, "kernel.ltoir", "")
    buffer = bytearray(nvfatbin.size(handle))
    nvfatbin.get(handle, buffer)
finally:
    nvfatbin.destroy(handle)
with open(os.path.join(folder, "fatbin"), "wb") as f:
    f.write(buffer)
print(nvfatbin.__file__)

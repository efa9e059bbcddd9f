"""One-to-one bindings of the CUDA Driver, Runtime, NVRTC, nvJitLink, libNVVM,
nvFatbin and NVML APIs.

For Cython:
    from cubind.bindings cimport cydriver, cyruntime, cynvrtc, cynvjitlink, cynvvm, cynvfatbin, cynvml
declares every type and function of cuda.h, cuda_runtime_api.h, nvrtc.h,
nvJitLink.h, nvvm.h, nvFatbin.h and nvml.h. The functions reach the CUDA libraries through libcubind_raw.so,
so a module that uses them links libcubind_raw (see cubind.get_include(),
cubind.get_cuda_include() and cubind.get_library_dir()) and never libcuda.
Such modules compile as C++.
"""

from cubind.bindings._version import cuda_version as _cuda_version

# The CUDA major.minor of the headers these bindings were generated from, and
# the bindings' own patch level.
_PATCH = 0
__version__ = f"{_cuda_version}.{_PATCH}"

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Exceptions. cuda.core raises CUDAError (an Exception subclass) for failed
# CUDA calls and NVRTCError for NVRTC; cubind.core raises the same names with
# the same bases, and NvJitLinkError for nvJitLink. Each carries what the C++
# core's CudaError holds: status, api_function, error_name, error_string.

from libc.stdint cimport uintptr_t

cimport cubind.core._cpp as cpp


class CUDAError(Exception):
    """A CUDA call failed. status is the library's code, api_function the C
    function that returned it, error_name and error_string the library's
    name and text for it (None where the failure is not a CUDA call's)."""

    status = None
    api_function = None
    error_name = None
    error_string = None


def _invalid_value(str message, str api_function=None):
    # A CUDAError for CUDA_ERROR_INVALID_VALUE found before the driver is
    # called: the type and status the driver's refusal would have, with a
    # message that names what is wrong.
    error = CUDAError(message)
    error.status = 1
    error.api_function = api_function
    error.error_name = "CUDA_ERROR_INVALID_VALUE"
    error.error_string = "invalid argument"
    return error


class CUDAWarning(RuntimeWarning):
    """The warning category for CUDA errors that cannot be raised (a failed
    driver call while a resource is released by the garbage collector), as
    cuda.core 1.3 names it: warnings.filterwarnings("error",
    category=CUDAWarning) makes them loud."""


class NVRTCError(CUDAError):
    """An NVRTC call failed, or NVRTC reported a failed compile (the log is in
    the message)."""


class NvJitLinkError(CUDAError):
    """An nvJitLink call failed, or a link did (the error log is in the message)."""


cdef object _raw_handle(str module, str cls, uintptr_t value):
    # The handle types of cubind.bindings, as cuda.core returns cuda.bindings';
    # imported on first use, so importing cubind.core stays light.
    import importlib

    return getattr(importlib.import_module("cubind.bindings." + module), cls)(<object>value)


def _text(value, what):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str):
        return value
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


cdef uintptr_t _handle_address(object handle, object owner, str method, str param) except? 0:
    # An address given as an int, or as an object that converts to one (the
    # handle classes of cubind.bindings and cuda.bindings), for parameter
    # param of owner.method (owner: a class name, or an object whose class it
    # is); the message is built only on failure. A float is refused, not
    # truncated: a rounded address names nothing.
    if isinstance(handle, (float, str, bytes)) or not hasattr(handle, "__int__"):
        raise TypeError(f"{_where(owner, method, param)} must be an int address or a handle object, "
                        f"not {type(handle).__name__}")
    value = int(handle)
    if value < 0 or value >= 2**64:
        raise OverflowError(f"{_where(owner, method, param)} is {value}, which is not a 64-bit address")
    return <uintptr_t>value


cdef str _where(object owner, str method, str param):
    return f"{owner if isinstance(owner, str) else type(owner).__name__}.{method}: {param}"

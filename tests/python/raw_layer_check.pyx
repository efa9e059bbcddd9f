# cython: language_level=3
# A user's Cython module: it cimports the raw layer and links libcubind_raw only.
from cubind.bindings cimport cydriver, cyruntime, cynvrtc, cynvjitlink


def nvrtc_version():
    cdef int major = -1, minor = -1
    cdef cynvrtc.nvrtcResult status
    with nogil:
        status = cynvrtc.nvrtcVersion(&major, &minor)
    return int(status), major, minor


def nvrtc_error_string(int code):
    return cynvrtc.nvrtcGetErrorString(<cynvrtc.nvrtcResult>code).decode()


def nvjitlink_version():
    cdef unsigned int major = 0, minor = 0
    cdef cynvjitlink.nvJitLinkResult status
    with nogil:
        status = cynvjitlink.nvJitLinkVersion(&major, &minor)
    return int(status), major, minor


def runtime_version():
    cdef int version = -1
    cdef cyruntime.cudaError_t status = cyruntime.cudaRuntimeGetVersion(&version)
    return int(status), version


def runtime_stream_query_default():
    # Resolves cudaStreamQuery (or its _ptsz variant); the status tells nothing here.
    return int(cyruntime.cudaStreamQuery(<cyruntime.cudaStream_t>0))


def driver_version():
    cdef int version = -1
    cdef cydriver.CUresult status
    with nogil:
        status = cydriver.cuDriverGetVersion(&version)
    return int(status), version


def device_count():
    cdef int count = -1
    cdef cydriver.CUresult status = cydriver.cuInit(0)
    if status != cydriver.CUDA_SUCCESS:
        return int(status), -1
    status = cydriver.cuDeviceGetCount(&count)
    return int(status), count


def device_name(int ordinal):
    cdef cydriver.CUdevice dev
    cdef char name[256]
    cdef cydriver.CUresult status = cydriver.cuDeviceGet(&dev, ordinal)
    if status != cydriver.CUDA_SUCCESS:
        return int(status), None
    status = cydriver.cuDeviceGetName(name, sizeof(name), dev)
    return int(status), name.decode()


def constants():
    return {
        "CUDA_VERSION": cydriver.CUDA_VERSION,
        "CU_LAUNCH_PARAM_END": <size_t>cydriver.CU_LAUNCH_PARAM_END,
        "CU_STREAM_LEGACY": <size_t>cydriver.CU_STREAM_LEGACY,
        "CU_STREAM_PER_THREAD": <size_t>cydriver.CU_STREAM_PER_THREAD,
        "CUDA_SUCCESS": cydriver.CUDA_SUCCESS,
        "NVRTC_ERROR_INVALID_INPUT": cynvrtc.NVRTC_ERROR_INVALID_INPUT,
    }


def struct_sizes():
    cdef cydriver.CUDA_MEMCPY3D copy
    cdef cydriver.CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc
    # Anonymous union members are reached through their parent.
    desc.handle.fd = 7
    copy.srcXInBytes = 3
    return sizeof(cydriver.CUDA_MEMCPY3D), sizeof(cydriver.CUDA_EXTERNAL_MEMORY_HANDLE_DESC), desc.handle.fd, copy.srcXInBytes

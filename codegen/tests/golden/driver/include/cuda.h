/*
 * A miniature cuda.h: the shapes of the real header that the front end must
 * handle, in a few dozen declarations.
 */
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__

#include <stddef.h>

#define CUDA_VERSION 13000
#define CU_TRSF_READ_AS_INTEGER 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP (0x1 << 1)
#define CU_IPC_HANDLE_SIZE 64

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    #define __CUDA_API_PER_THREAD_DEFAULT_STREAM
    #define __CUDA_API_PTDS(api) api ## _ptds
    #define __CUDA_API_PTSZ(api) api ## _ptsz
#else
    #define __CUDA_API_PTDS(api) api
    #define __CUDA_API_PTSZ(api) api
#endif

#define cuCtxCreate                 cuCtxCreate_v4
#define cuMemAlloc                  cuMemAlloc_v2
#define cuMemcpyHtoD                __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define cuStreamBeginCapture        __CUDA_API_PTSZ(cuStreamBeginCapture_v2)
#define cuGraphInstantiate          cuGraphInstantiateWithFlags

#if defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
    #define cuMemcpy                __CUDA_API_PTDS(cuMemcpy)
#endif

#define CUDAAPI
#define __CUDA_DEPRECATED __attribute__((deprecated))

typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;

typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUarray_st *CUarray;

/**
 * Error codes
 */
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,               /**< The API call returned with no errors. */
    CUDA_ERROR_INVALID_VALUE = 1,   /**< One or more parameters are not acceptable. */
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999
} CUresult;

/**
 * Stream capture modes
 */
typedef enum CUstreamCaptureMode_enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

/** The legacy default stream. */
#define CU_STREAM_LEGACY ((CUstream)0x1)
/** Ends a kernel parameter buffer. */
#define CU_LAUNCH_PARAM_END ((void*)0x00)

/**
 * Interprocess handle for memory
 */
typedef struct CUipcMemHandle_st {
    char reserved[CU_IPC_HANDLE_SIZE];
} CUipcMemHandle_v1;
typedef CUipcMemHandle_v1 CUipcMemHandle;

typedef struct CUctxCreateParams_st CUctxCreateParams;

/**
 * A struct with C11 anonymous members and an unnamed struct field.
 */
typedef struct CUexample_st {
    unsigned int kind;
    union {
        CUdeviceptr ptr;
        CUarray array;
    };
    struct {
        unsigned int x, y, z;
    } dim;
    unsigned int flags : 4;
} CUexample;

/**
 * Host callback
 */
typedef void (CUDAAPI *CUhostFn)(void *userData);

/**
 * \brief Initialize the CUDA driver API
 *
 * \param Flags - Initialization flag for CUDA.
 *
 * \return ::CUDA_SUCCESS
 */
CUresult CUDAAPI cuInit(unsigned int Flags);

/**
 * \brief Returns the latest CUDA version supported by driver
 *
 * \param driverVersion - Returns the CUDA driver version
 */
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);

/**
 * \brief Create a CUDA context
 *
 * \param pctx            - Returned context handle of the new context
 * \param ctxCreateParams - Context creation parameters
 * \param flags           - Context creation flags
 * \param dev             - Device to create context on
 */
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev);

/**
 * \brief Decrement a context's usage-count
 *
 * \deprecated
 *
 * \param ctx - Context to destroy
 */
__CUDA_DEPRECATED CUresult CUDAAPI cuCtxDetach(CUcontext ctx);

/**
 * \brief Returns the device handle for the context
 *
 * \param[out] device - Returned device handle for the context
 * \param[in] ctx     - Context for which to obtain the device
 */
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);

/**
 * \brief Allocates device memory
 *
 * \param dptr     - Returned device pointer
 * \param bytesize - Requested allocation size in bytes
 */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);

/**
 * \brief Copies memory from Host to Device
 *
 * \param dstDevice - Destination device pointer
 * \param srcHost   - Source host pointer
 * \param ByteCount - Size of memory copy in bytes
 */
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);

/**
 * \brief Copies memory
 */
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);

/**
 * \brief Begins graph capture on a stream
 */
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode);

/**
 * \brief Creates an executable graph from a graph
 */
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);

/**
 * \brief Enqueues a host function call in a stream
 */
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);

/**
 * \brief Gets an interprocess memory handle for an existing device memory allocation
 *
 * \param pHandle - Pointer to user allocated ::CUipcMemHandle to return the handle in.
 * \param dptr    - Base pointer to previously allocated device memory
 */
CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);

/**
 * \brief Fills an example struct
 */
CUresult CUDAAPI cuExampleQuery(CUexample *example);

/**
 * \brief Exists on Windows only
 */
CUresult CUDAAPI cuWindowsOnly(void *handle);

#endif

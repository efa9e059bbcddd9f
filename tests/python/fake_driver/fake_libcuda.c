/* A stand-in libcuda.so.1 for the driver tests that need no GPU
 * (tests/python/test_fake_driver.py builds it with the system C compiler).
 *
 * It exports cuGetProcAddress_v2 and the few entry points those tests reach.
 * Launches record what they receive (kernel parameters, extra, launch
 * configs) in exported variables the tests read through ctypes; host
 * functions and stream callbacks run on threads of their own, as the driver
 * runs them, and a "captured" host function runs again at every graph launch.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef void (*host_fn)(void*);
typedef void (*stream_cb)(void*, CUresult, void*);

typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    void* hStream;
    void* attrs;
    unsigned numAttrs;
} launch_config;

/* What the last launch received. */
unsigned char fake_params[16][16];
int fake_nparams = -1;
void* fake_params_pointer;
unsigned char fake_extra_buffer[64];
size_t fake_extra_size;
unsigned fake_config[8];
int fake_first_attr_id = -1;

static pthread_t threads[4096];
static int nthreads;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static host_fn captured_fn;
static void* captured_data;
static int capturing;

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
/* NVRTC loads libcuda.so.1 while it compiles and asks for this; the stand-in
 * has no export tables to give (CUDA_ERROR_NOT_SUPPORTED). */
CUresult cuGetExportTable(const void** table, const void* id) { (void)id; *table = NULL; return 801; }
/* -DFAKE_DRIVER_VERSION=12000 builds a driver that reports an older CUDA. */
#ifndef FAKE_DRIVER_VERSION
#define FAKE_DRIVER_VERSION 13000
#endif
CUresult cuDriverGetVersion(int* v) { *v = FAKE_DRIVER_VERSION; return 0; }

CUresult cuDeviceGetName(char* name, int len, int dev)
{
    (void)dev;
    if (len <= 0) return 1;
    strncpy(name, "Stand-in GPU", (size_t)len);
    name[len - 1] = 0;
    return 0;
}

CUresult cuDeviceGetUuid(unsigned char* uuid, int dev)
{
    for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)(0xF0 + i);
    return dev == 0 ? 0 : 101;
}

CUresult cuPointerGetAttribute(void* data, int attribute, unsigned long long ptr)
{
    switch (attribute) {
    case 1: *(void**)data = (void*)0xC0FFEE; return 0;                 /* CONTEXT */
    case 2: *(unsigned*)data = 2; return 0;                              /* MEMORY_TYPE: device */
    case 3: *(unsigned long long*)data = ptr; return 0;                  /* DEVICE_POINTER */
    case 9: *(int*)data = 0; return 0;                                    /* DEVICE_ORDINAL */
    case 12: *(size_t*)data = 4096; return 0;                             /* RANGE_SIZE */
    default: return 1;
    }
}

static void record(unsigned count, void** params, void** extra)
{
    fake_nparams = (int)count;
    fake_params_pointer = params;
    memset(fake_params, 0, sizeof fake_params);
    for (unsigned i = 0; params != NULL && i < count && i < 16; ++i) memcpy(fake_params[i], params[i], 16);
    fake_extra_size = 0;
    if (extra != NULL && extra[0] == (void*)1 && extra[2] == (void*)2) {
        fake_extra_size = *(size_t*)extra[3];
        memcpy(fake_extra_buffer, extra[1], fake_extra_size < 64 ? fake_extra_size : 64);
    }
}

/* The tests pass the parameter count as sharedMemBytes. */
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void* stream, void** params, void** extra)
{
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)stream;
    record(shmem, params, extra);
    return 0;
}

CUresult cuLaunchKernelEx(const launch_config* config, void* f, void** params, void** extra)
{
    (void)f;
    fake_config[0] = config->gridDimX; fake_config[1] = config->blockDimX;
    fake_config[2] = config->sharedMemBytes; fake_config[3] = config->numAttrs;
    fake_config[4] = (unsigned)(uintptr_t)config->hStream;
    fake_first_attr_id = config->numAttrs ? *(int*)config->attrs : -1;
    record(config->sharedMemBytes, params, extra);
    return 0;
}

struct job { host_fn fn; stream_cb cb; void* stream; void* data; };

static void* run_job(void* arg)
{
    struct job j = *(struct job*)arg;
    if (j.fn) j.fn(j.data); else j.cb(j.stream, 0, j.data);
    return NULL;
}

static struct job jobs[4096];

static CUresult spawn(host_fn fn, stream_cb cb, void* stream, void* data)
{
    pthread_mutex_lock(&lock);
    if (nthreads >= 4096) { pthread_mutex_unlock(&lock); return 2; }
    struct job* j = &jobs[nthreads];
    j->fn = fn; j->cb = cb; j->stream = stream; j->data = data;
    pthread_create(&threads[nthreads], NULL, run_job, j);
    ++nthreads;
    pthread_mutex_unlock(&lock);
    return 0;
}

CUresult cuStreamSynchronize(void* stream)
{
    (void)stream;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nthreads; ++i) pthread_join(threads[i], NULL);
    nthreads = 0;
    pthread_mutex_unlock(&lock);
    return 0;
}

CUresult cuLaunchHostFunc(void* stream, host_fn fn, void* data)
{
    (void)stream;
    if (capturing) { captured_fn = fn; captured_data = data; return 0; }
    return spawn(fn, NULL, stream, data);
}

CUresult cuStreamAddCallback(void* stream, stream_cb cb, void* data, unsigned flags)
{
    if (flags != 0) return 1;
    return spawn(NULL, cb, stream, data);
}

CUresult cuStreamBeginCapture(void* stream, int mode) { (void)stream; (void)mode; capturing = 1; return 0; }
CUresult cuStreamIsCapturing(void* stream, int* status) { (void)stream; *status = capturing ? 1 : 0; return 0; }
/* Only the status and the graph, as cubind.core's host functions ask. */
CUresult cuStreamGetCaptureInfo(void* stream, int* status, unsigned long long* id, void** graph, const void** deps,
                                const void** edges, size_t* ndeps)
{
    (void)stream;
    if (status) *status = capturing ? 1 : 0;
    if (id) *id = 1;
    if (graph) *graph = capturing ? (void*)0x6a : NULL;
    if (deps) *deps = NULL;
    if (edges) *edges = NULL;
    if (ndeps) *ndeps = 0;
    return 0;
}
CUresult cuStreamEndCapture(void* stream, void** graph) { (void)stream; capturing = 0; *graph = (void*)0x6a; return 0; }
CUresult cuGraphInstantiate(void** exec, void* graph, unsigned long long flags)
{ (void)graph; (void)flags; *exec = (void*)0xe6; return 0; }
CUresult cuGraphLaunch(void* exec, void* stream)
{
    (void)exec;
    return captured_fn ? spawn(captured_fn, NULL, stream, captured_data) : 0;
}

/* Copies record their sizes and never touch memory. */
size_t fake_copy_bytes;
void* fake_copy_host;
CUresult cuMemcpyDtoH(void* dst, unsigned long long src, size_t n)
{ (void)src; fake_copy_host = dst; fake_copy_bytes = n; return 0; }
CUresult cuMemcpyHtoD(unsigned long long dst, const void* src, size_t n)
{ (void)dst; fake_copy_host = (void*)src; fake_copy_bytes = n; return 0; }

/* Graphics interop: what was passed, and made-up results. */
void* fake_egl_image;
unsigned fake_vdp_device;
void* fake_vdp_get_proc_address;
CUresult cuGraphicsEGLRegisterImage(void** resource, void* image, unsigned flags)
{ fake_egl_image = image; *resource = (void*)(0x7000 + (size_t)flags); return 0; }
CUresult cuGLGetDevices(unsigned* count, int* devices, unsigned capacity, int list)
{
    (void)list;
    *count = 2;
    for (unsigned i = 0; i < 2 && i < capacity; ++i) devices[i] = (int)(i + 3);
    return 0;
}
CUresult cuVDPAUGetDevice(int* device, unsigned vdp_device, void* get_proc_address)
{ fake_vdp_device = vdp_device; fake_vdp_get_proc_address = get_proc_address; *device = 5; return 0; }

/* Enough of devices, contexts, streams, libraries, kernels and pools for
 * cubind.core to load a "library", launch its kernels and allocate from the
 * default pool. A kernel's parameter sizes are spelled in its name after
 * "k": cuLibraryGetKernel(lib, "k4_8_1") gives a kernel of three parameters
 * of 4, 8 and 1 bytes; "k" alone takes none. */
static int the_context, the_pool, the_library;
static void* current_context;
static int next_stream;
unsigned long long fake_last_alloc, fake_last_free;
size_t fake_last_alloc_size;
int fake_live_allocations;

struct kernel { char name[256]; size_t sizes[64]; size_t count; };
static struct kernel kernels[64];
static int nkernels;

CUresult cuDeviceGetCount(int* count) { *count = 1; return 0; }
CUresult cuDeviceGet(int* device, int ordinal) { *device = ordinal; return ordinal == 0 ? 0 : 101; }
CUresult cuDeviceGetAttribute(int* value, int attribute, int device)
{
    (void)device;
    switch (attribute) {
    case 75: *value = 9; return 0;   /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = 0; return 0;   /* COMPUTE_CAPABILITY_MINOR */
    default: *value = 1; return 0;
    }
}
/* How many times the primary context was retained (read by the thread tests). */
int fake_primary_retains;
CUresult cuDevicePrimaryCtxRetain(void** context, int device)
{
    (void)device;
    __atomic_add_fetch(&fake_primary_retains, 1, __ATOMIC_SEQ_CST);
    *context = &the_context;
    return 0;
}
CUresult cuDevicePrimaryCtxRelease(int device) { (void)device; return 0; }
CUresult cuCtxGetCurrent(void** context) { *context = current_context; return 0; }
CUresult cuCtxSetCurrent(void* context) { current_context = context; return 0; }
CUresult cuCtxPushCurrent(void* context) { current_context = context; return 0; }
CUresult cuCtxPopCurrent(void** context) { if (context) *context = current_context; return 0; }
CUresult cuCtxGetDevice(int* device) { *device = 0; return 0; }
CUresult cuStreamCreateWithPriority(void** stream, unsigned flags, int priority)
{ (void)flags; (void)priority; *stream = (void*)(uintptr_t)(0x5000 + 16 * ++next_stream); return 0; }
CUresult cuStreamDestroy(void* stream) { (void)stream; return 0; }
CUresult cuStreamGetCtx(void* stream, void** context) { (void)stream; *context = &the_context; return 0; }
CUresult cuStreamGetFlags(void* stream, unsigned* flags) { (void)stream; *flags = 1; return 0; }
CUresult cuStreamGetPriority(void* stream, int* priority) { (void)stream; *priority = 0; return 0; }
CUresult cuStreamQuery(void* stream) { (void)stream; return 0; }
CUresult cuDeviceGetDefaultMemPool(void** pool, int device) { (void)device; *pool = &the_pool; return 0; }
CUresult cuMemAllocFromPoolAsync(unsigned long long* ptr, size_t bytes, void* pool, void* stream)
{
    (void)pool; (void)stream;
    fake_last_alloc = 0x10000000ull + 0x100000ull * (unsigned long long)(++fake_live_allocations);
    fake_last_alloc_size = bytes;
    *ptr = fake_last_alloc;
    return 0;
}
CUresult cuMemFreeAsync(unsigned long long ptr, void* stream)
{ (void)stream; fake_last_free = ptr; --fake_live_allocations; return 0; }
CUresult cuLibraryLoadData(void** library, const void* code, void* jit_options, void* jit_values, unsigned n_jit,
                           void* library_options, void* library_values, unsigned n_library)
{
    (void)code; (void)jit_options; (void)jit_values; (void)n_jit; (void)library_options; (void)library_values;
    (void)n_library;
    *library = &the_library;
    return 0;
}
CUresult cuLibraryUnload(void* library) { (void)library; return 0; }
CUresult cuLibraryGetKernel(void** kernel, void* library, const char* name)
{
    (void)library;
    if (name[0] != 'k' || nkernels >= 64 || strlen(name) >= 256) return 500;   /* NOT_FOUND */
    struct kernel* k = &kernels[nkernels++];
    strcpy(k->name, name);
    k->count = 0;
    for (const char* c = name + 1; *c && k->count < 64;) {
        k->sizes[k->count++] = (size_t)strtoul(c, (char**)&c, 10);
        if (*c == '_') ++c;
    }
    *kernel = k;
    return 0;
}
CUresult cuLibraryGetKernelCount(unsigned* count, void* library) { (void)library; *count = 0; return 0; }
CUresult cuKernelGetName(const char** name, void* kernel) { *name = ((struct kernel*)kernel)->name; return 0; }
CUresult cuKernelGetParamInfo(void* kernel, size_t index, size_t* offset, size_t* size)
{
    struct kernel* k = kernel;
    if (index >= k->count) return 1;   /* INVALID_VALUE: past the last parameter */
    size_t at = 0;
    for (size_t i = 0; i < index; ++i) at += k->sizes[i];
    if (offset) *offset = at;
    if (size) *size = k->sizes[index];
    return 0;
}
CUresult cuKernelGetFunction(void** function, void* kernel) { *function = kernel; return 0; }
/* Events that are always complete; stream-ordered fills and copies that
 * touch no memory. */
static int the_events[4096];
static int nevents;
CUresult cuEventCreate(void** event, unsigned flags)
{ (void)flags; *event = &the_events[nevents++ % 4096]; return 0; }
CUresult cuEventRecord(void* event, void* stream) { (void)event; (void)stream; return 0; }
CUresult cuEventDestroy(void* event) { (void)event; return 0; }
CUresult cuEventQuery(void* event) { (void)event; return 0; }
CUresult cuEventSynchronize(void* event) { (void)event; return 0; }
CUresult cuEventElapsedTime(float* ms, void* start, void* end) { (void)start; (void)end; *ms = 0.5f; return 0; }
CUresult cuStreamWaitEvent(void* stream, void* event, unsigned flags) { (void)stream; (void)event; (void)flags; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuMemGetInfo(size_t* free_bytes, size_t* total) { *free_bytes = (size_t)1 << 34; *total = (size_t)1 << 35; return 0; }
CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void* s) { (void)p; (void)v; (void)n; (void)s; return 0; }
CUresult cuMemsetD16Async(unsigned long long p, unsigned short v, size_t n, void* s) { (void)p; (void)v; (void)n; (void)s; return 0; }
CUresult cuMemsetD32Async(unsigned long long p, unsigned v, size_t n, void* s) { (void)p; (void)v; (void)n; (void)s; return 0; }
CUresult cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n, void* st) { (void)d; (void)s; (void)n; (void)st; return 0; }

struct entry { const char* name; void* fn; };
static const struct entry table[] = {
    {"cuInit", (void*)cuInit},
    {"cuMemcpyDtoH", (void*)cuMemcpyDtoH},
    {"cuMemcpyHtoD", (void*)cuMemcpyHtoD},
    {"cuDriverGetVersion", (void*)cuDriverGetVersion},
    {"cuDeviceGetName", (void*)cuDeviceGetName},
    {"cuDeviceGetUuid", (void*)cuDeviceGetUuid},
    {"cuPointerGetAttribute", (void*)cuPointerGetAttribute},
    {"cuLaunchKernel", (void*)cuLaunchKernel},
    {"cuLaunchKernelEx", (void*)cuLaunchKernelEx},
    {"cuStreamSynchronize", (void*)cuStreamSynchronize},
    {"cuLaunchHostFunc", (void*)cuLaunchHostFunc},
    {"cuStreamAddCallback", (void*)cuStreamAddCallback},
    {"cuStreamBeginCapture", (void*)cuStreamBeginCapture},
    {"cuStreamIsCapturing", (void*)cuStreamIsCapturing},
    {"cuStreamEndCapture", (void*)cuStreamEndCapture},
    {"cuStreamGetCaptureInfo", (void*)cuStreamGetCaptureInfo},
    {"cuGraphInstantiate", (void*)cuGraphInstantiate},
    {"cuGraphInstantiateWithFlags", (void*)cuGraphInstantiate},
    {"cuGraphLaunch", (void*)cuGraphLaunch},
    {"cuGraphicsEGLRegisterImage", (void*)cuGraphicsEGLRegisterImage},
    {"cuGLGetDevices", (void*)cuGLGetDevices},
    {"cuVDPAUGetDevice", (void*)cuVDPAUGetDevice},
    {"cuDeviceGetCount", (void*)cuDeviceGetCount},
    {"cuDeviceGet", (void*)cuDeviceGet},
    {"cuDeviceGetAttribute", (void*)cuDeviceGetAttribute},
    {"cuDevicePrimaryCtxRetain", (void*)cuDevicePrimaryCtxRetain},
    {"cuDevicePrimaryCtxRelease", (void*)cuDevicePrimaryCtxRelease},
    {"cuCtxGetCurrent", (void*)cuCtxGetCurrent},
    {"cuCtxSetCurrent", (void*)cuCtxSetCurrent},
    {"cuCtxPushCurrent", (void*)cuCtxPushCurrent},
    {"cuCtxPopCurrent", (void*)cuCtxPopCurrent},
    {"cuCtxGetDevice", (void*)cuCtxGetDevice},
    {"cuStreamCreateWithPriority", (void*)cuStreamCreateWithPriority},
    {"cuStreamDestroy", (void*)cuStreamDestroy},
    {"cuStreamGetCtx", (void*)cuStreamGetCtx},
    {"cuStreamGetFlags", (void*)cuStreamGetFlags},
    {"cuStreamGetPriority", (void*)cuStreamGetPriority},
    {"cuStreamQuery", (void*)cuStreamQuery},
    {"cuDeviceGetDefaultMemPool", (void*)cuDeviceGetDefaultMemPool},
    {"cuMemAllocFromPoolAsync", (void*)cuMemAllocFromPoolAsync},
    {"cuMemFreeAsync", (void*)cuMemFreeAsync},
    {"cuLibraryLoadData", (void*)cuLibraryLoadData},
    {"cuLibraryUnload", (void*)cuLibraryUnload},
    {"cuLibraryGetKernel", (void*)cuLibraryGetKernel},
    {"cuLibraryGetKernelCount", (void*)cuLibraryGetKernelCount},
    {"cuKernelGetName", (void*)cuKernelGetName},
    {"cuKernelGetParamInfo", (void*)cuKernelGetParamInfo},
    {"cuKernelGetFunction", (void*)cuKernelGetFunction},
    {"cuEventCreate", (void*)cuEventCreate},
    {"cuEventRecord", (void*)cuEventRecord},
    {"cuEventDestroy", (void*)cuEventDestroy},
    {"cuEventQuery", (void*)cuEventQuery},
    {"cuEventSynchronize", (void*)cuEventSynchronize},
    {"cuEventElapsedTime", (void*)cuEventElapsedTime},
    {"cuStreamWaitEvent", (void*)cuStreamWaitEvent},
    {"cuCtxSynchronize", (void*)cuCtxSynchronize},
    {"cuMemGetInfo", (void*)cuMemGetInfo},
    {"cuMemsetD8Async", (void*)cuMemsetD8Async},
    {"cuMemsetD16Async", (void*)cuMemsetD16Async},
    {"cuMemsetD32Async", (void*)cuMemsetD32Async},
    {"cuMemcpyAsync", (void*)cuMemcpyAsync},
};

/* -DFAKE_DRIVER_NO_PROC_ADDRESS builds a driver from before CUDA 12.0, which lacks it. */
#ifndef FAKE_DRIVER_NO_PROC_ADDRESS
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status)
{
    (void)version; (void)flags;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        if (strcmp(symbol, table[i].name) == 0) {
            *pfn = table[i].fn;
            if (status) *status = 0;
            return 0;
        }
    }
    *pfn = NULL;
    if (status) *status = 1;
    return 500;
}
#endif

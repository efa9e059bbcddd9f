/* A stand-in libcuda.so.1 for the driver tests that need no GPU
 * (tests/python/test_fake_driver.py builds it with the system C compiler).
 *
 * It exports cuGetProcAddress_v2 and the few entry points those tests reach.
 * Launches record what they receive (kernel parameters, extra, launch
 * configs) in exported variables the tests read through ctypes; host
 * functions and stream callbacks run on threads of their own, as the driver
 * runs them, and a "captured" host function runs again at every graph launch.
 * Graphs built node by node live in fake_graphs.c, compiled beside this file.
 *
 * Three rules of the real driver are kept strictly, so that breaking them
 * fails a test instead of hanging or crashing a GPU machine: releasing the
 * primary context waits for the host functions that are running (one whose
 * thread never returns makes the release abort after 10 s); a process forked
 * after cuInit must not destroy or free anything (the child aborts); and
 * neither may a host function or a user object's destructor, which run on
 * the driver's threads and must not call CUDA (the call aborts).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
void* fake_param_addresses[16];   /* where each parameter was read from */
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
static int capture_mode;          /* CUstreamCaptureMode of the capture */

/* A capture in global or thread-local mode refuses the calls CUDA calls
 * unsafe while it lasts (pool creation, pinned allocation, device-wide
 * synchronization), as the driver does: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
 * Each refusal is counted; so is a pool allocation made during a capture
 * (the driver would make it a graph node), which cubind.core refuses first. */
int fake_capture_refusals;
int fake_pool_allocs_in_capture;
static int refused_in_capture(void)
{
    if (!capturing || capture_mode == 2) return 0;
    ++fake_capture_refusals;
    return 1;
}

/* While set, host functions wait before they run: a test drops its own
 * references meanwhile and checks what the callback still needs is alive. */
int fake_hold_host_functions;

/* Set in the child of a fork made after cuInit. */
static int forked_child;
static void after_fork_in_child(void) { forked_child = 1; }

/* Set on a thread while it runs a host function or a user object's
 * destructor (fake_graphs.c's too). */
__thread int fake_in_callback;

/* The destroy and free entry points start here. */
static void check_release(const char* name)
{
    if (forked_child) {
        fprintf(stderr, "fake driver: %s called in a process forked after cuInit\n", name);
        abort();
    }
    if (fake_in_callback) {
        fprintf(stderr, "fake driver: %s called from a host function or a user object's destructor\n", name);
        abort();
    }
}

/* For the stand-in's other files. */
void fake_check_release(const char* name) { check_release(name); }

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }
CUresult cuInit(unsigned flags)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)flags;
    pthread_once(&once, register_fork_handler);
    return 0;
}
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
    case 8: *(unsigned*)data = 1; return 0;                               /* IS_MANAGED: true */
    case 16: *(int*)data = (int)(ptr >> 12); return 0;                    /* ACCESS_FLAGS: the pointer's page */
    default: return 1;
    }
}

CUresult cuPointerGetAttributes(unsigned count, int* attributes, void** data, unsigned long long ptr)
{
    for (unsigned i = 0; i < count; ++i) {
        if (attributes[i] == 4 || attributes[i] == 5 || attributes[i] == 8) {   /* HOST_POINTER, P2P_TOKENS, IS_MANAGED... */
            if (attributes[i] == 8) *(unsigned*)data[i] = 0;
            else *(void**)data[i] = NULL;
            continue;
        }
        if (cuPointerGetAttribute(data[i], attributes[i], ptr) != 0) *(unsigned long long*)data[i] = 0;
    }
    return 0;
}

/* Tensor maps: the arguments of the last encode, and a map whose words are
 * the address, the rank, the data type and the first box size (so a test can
 * tell two encodes apart). */
unsigned long long fake_tensor_map_dims[5], fake_tensor_map_strides[4];
unsigned fake_tensor_map_box[5], fake_tensor_map_element_strides[5], fake_tensor_map_rank;
int fake_tensor_map_enums[5];   /* data type, interleave, swizzle, L2 promotion, OOB fill */
CUresult cuTensorMapEncodeTiled(unsigned long long* map, int data_type, unsigned rank, void* address,
                                const unsigned long long* dims, const unsigned long long* strides, const unsigned* box,
                                const unsigned* element_strides, int interleave, int swizzle, int l2, int oob)
{
    if (rank < 1 || rank > 5 || ((unsigned long long)address & 15)) return 1;
    fake_tensor_map_rank = rank;
    for (unsigned i = 0; i < rank; ++i) {
        fake_tensor_map_dims[i] = dims[i];
        fake_tensor_map_box[i] = box[i];
        fake_tensor_map_element_strides[i] = element_strides[i];
        if (i + 1 < rank) fake_tensor_map_strides[i] = strides[i];
    }
    int enums[5] = {data_type, interleave, swizzle, l2, oob};
    memcpy(fake_tensor_map_enums, enums, sizeof enums);
    memset(map, 0, 128);
    map[0] = (unsigned long long)address;
    map[1] = rank;
    map[2] = (unsigned long long)data_type;
    map[3] = box[0];
    return 0;
}

CUresult cuTensorMapReplaceAddress(unsigned long long* map, void* address)
{
    if ((unsigned long long)address & 15) return 1;
    map[0] = (unsigned long long)address;
    return 0;
}

static void record(unsigned count, void** params, void** extra)
{
    fake_nparams = (int)count;
    fake_params_pointer = params;
    memset(fake_params, 0, sizeof fake_params);
    for (unsigned i = 0; params != NULL && i < count && i < 16; ++i) {
        memcpy(fake_params[i], params[i], 16);
        fake_param_addresses[i] = params[i];
    }
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

#ifdef CUBIND_FAKE_EVICT
/* benchmarks/instruction_counts.py --cold: each launch first runs 64 KiB of
 * code and touches 128 KiB of data, as a driver call would, so that what the
 * caller reads after it comes from beyond the first-level caches. */
static unsigned char evict_data[1 << 17];
static void __attribute__((noinline)) evict_caches(void)
{
    for (size_t i = 0; i < sizeof evict_data; i += 64) evict_data[i]++;
    __asm__ volatile(".rept 8192\n\t.byte 0x0f,0x1f,0x84,0x00,0x00,0x00,0x00,0x00\n\t.endr" ::: "memory");
}
#else
static void evict_caches(void) {}
#endif

/* What cuLaunchKernelEx returns, as a test sets it (0: it records the launch). */
int fake_launch_status;

CUresult cuLaunchKernelEx(const launch_config* config, void* f, void** params, void** extra)
{
    (void)f;
    evict_caches();
    if (fake_launch_status != 0) return fake_launch_status;
    fake_config[0] = config->gridDimX; fake_config[1] = config->blockDimX;
    fake_config[2] = config->sharedMemBytes; fake_config[3] = config->numAttrs;
    fake_config[4] = (unsigned)(uintptr_t)config->hStream;
    fake_first_attr_id = config->numAttrs ? *(int*)config->attrs : -1;
    record(config->sharedMemBytes, params, extra);
    return 0;
}

struct job { host_fn fn; stream_cb cb; void* stream; void* data; };

/* Host functions that started and have not returned. */
static int running_jobs;

static void* run_job(void* arg)
{
    struct job j = *(struct job*)arg;
    while (__atomic_load_n(&fake_hold_host_functions, __ATOMIC_SEQ_CST)) usleep(1000);
    __atomic_add_fetch(&running_jobs, 1, __ATOMIC_SEQ_CST);
    fake_in_callback = 1;
    if (j.fn) j.fn(j.data); else j.cb(j.stream, 0, j.data);
    fake_in_callback = 0;
    __atomic_sub_fetch(&running_jobs, 1, __ATOMIC_SEQ_CST);
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

/* fake_graphs.c's side: its entry points, and its graphs and instantiations.
 * Weak, so this file alone still builds a driver (without graph building). */
__attribute__((weak)) void* fake_graph_entry(const char* name);
/* fake_texture.c's entry points (arrays, texture and surface objects). */
__attribute__((weak)) void* fake_texture_entry(const char* name);
__attribute__((weak)) int fake_graph_known(void* graph);
__attribute__((weak)) int fake_graph_destroy(void* graph);
__attribute__((weak)) void* fake_graph_instantiate(void* graph);
__attribute__((weak)) int fake_graph_launch(void* exec, void* stream);
__attribute__((weak)) int fake_exec_destroy(void* exec);
/* fake_interop.c's OpenGL interop and checkpoint entry points, weak likewise. */
__attribute__((weak)) void* fake_interop_entry(const char* name);
void fake_record_launch(unsigned count, void** params) { record(count, params, NULL); }
int fake_spawn_host(host_fn fn, void* stream, void* data) { return spawn(fn, NULL, stream, data); }

CUresult cuStreamBeginCapture(void* stream, int mode) { (void)stream; capture_mode = mode; capturing = 1; return 0; }
CUresult cuStreamIsCapturing(void* stream, int* status) { (void)stream; *status = capturing ? 1 : 0; return 0; }
CUresult cuStreamEndCapture(void* stream, void** graph) { (void)stream; capturing = 0; *graph = (void*)0x6a; return 0; }
CUresult cuGraphInstantiate(void** exec, void* graph, unsigned long long flags)
{ (void)graph; (void)flags; *exec = (void*)0xe6; return 0; }
CUresult cuGraphLaunch(void* exec, void* stream)
{
    if (fake_graph_launch && fake_graph_launch(exec, stream) == 0) return 0;
    return captured_fn ? spawn(captured_fn, NULL, stream, captured_data) : 0;
}

/* Enough of graphs for cubind.core's GraphBuilder and Graph: the capture's
 * state, instantiation (with the flags and upload stream recorded), update,
 * and a DOT file holding the flags it was asked for. */
unsigned long long fake_instantiate_flags;
void* fake_upload_stream;
int fake_graph_updates;
int fake_graph_uploads;
int fake_graphs_destroyed;
int fake_execs_destroyed;
typedef struct { unsigned long long flags; void* hUploadStream; void* hErrNode_out; int result_out; } instantiate_params;
CUresult cuStreamGetCaptureInfo(void* stream, int* status, unsigned long long* id, void** graph, const void** deps,
                                const void** edges, size_t* count)
{
    (void)stream;
    if (status) *status = capturing ? 1 : 0;
    if (id) *id = capturing ? 1 : 0;
    if (graph) *graph = capturing ? (void*)0x6a : NULL;
    if (deps) *deps = NULL;
    if (edges) *edges = NULL;
    if (count) *count = 0;
    return 0;
}
CUresult cuGraphInstantiateWithParams(void** exec, void* graph, instantiate_params* params)
{
    fake_instantiate_flags = params->flags;
    fake_upload_stream = params->hUploadStream;
    params->result_out = 0;
    *exec = fake_graph_instantiate ? fake_graph_instantiate(graph) : NULL;
    if (*exec == NULL) *exec = (void*)0xe6;
    return 0;
}
CUresult cuGraphExecDestroy(void* exec) { check_release("cuGraphExecDestroy"); if (fake_exec_destroy) fake_exec_destroy(exec); ++fake_execs_destroyed; return 0; }
CUresult cuGraphDestroy(void* graph) { check_release("cuGraphDestroy"); if (fake_graph_destroy) fake_graph_destroy(graph); ++fake_graphs_destroyed; return 0; }
CUresult cuGraphUpload(void* exec, void* stream) { (void)exec; (void)stream; ++fake_graph_uploads; return 0; }
/* A CUgraphExecUpdateResult a test sets: cuGraphExecUpdate then reports it
   (the first field of CUgraphExecUpdateResultInfo) and fails with
   CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE (910). */
int fake_update_result;
CUresult cuGraphExecUpdate(void* exec, void* graph, void* info) {
    (void)exec;
    (void)graph;
    ++fake_graph_updates;
    if (fake_update_result != 0) {
        *(int*)info = fake_update_result;
        return (CUresult)910;
    }
    return 0;
}
CUresult cuGraphConditionalHandleCreate(unsigned long long* handle, void* graph, void* context, unsigned value,
                                        unsigned flags)
{
    (void)context;
    if (!capturing && !(fake_graph_known && fake_graph_known(graph))) return 400; /* CUDA_ERROR_INVALID_HANDLE */
    *handle = 0x5eed0000ull + value * 2 + flags;
    return 0;
}
#include <stdio.h>
CUresult cuGraphDebugDotPrint(void* graph, const char* path, unsigned flags)
{
    (void)graph;
    FILE* f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "digraph fake { flags=%u }\n", flags);
    fclose(f);
    return 0;
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

struct kernel { char name[512]; size_t sizes[256]; size_t count; };
static struct kernel kernels[512];
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
CUresult cuDevicePrimaryCtxRelease(int device)
{
    (void)device;
    check_release("cuDevicePrimaryCtxRelease");
    /* The real release waits for the context's work, host functions too. */
    for (int waited_ms = 0; __atomic_load_n(&running_jobs, __ATOMIC_SEQ_CST) != 0; ++waited_ms) {
        if (waited_ms == 10000) {
            fprintf(stderr, "fake driver: cuDevicePrimaryCtxRelease waited 10 s for a host function "
                            "that never returned\n");
            abort();
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}
CUresult cuCtxGetCurrent(void** context) { *context = current_context; return 0; }
/* Set to a CUresult to make cuCtxSetCurrent fail with it, changing nothing. */
int fake_set_current_status;
CUresult cuCtxSetCurrent(void* context) {
    if (fake_set_current_status != 0) return (CUresult)fake_set_current_status;
    current_context = context;
    return 0;
}
CUresult cuCtxPushCurrent(void* context) { current_context = context; return 0; }
CUresult cuCtxPopCurrent(void** context) { if (context) *context = current_context; return 0; }
CUresult cuCtxGetDevice(int* device) { *device = 0; return 0; }
CUresult cuStreamCreateWithPriority(void** stream, unsigned flags, int priority)
{ (void)flags; (void)priority; *stream = (void*)(uintptr_t)(0x5000 + 16 * ++next_stream); return 0; }
CUresult cuStreamDestroy(void* stream) { (void)stream; check_release("cuStreamDestroy"); return 0; }
CUresult cuStreamGetCtx(void* stream, void** context) { (void)stream; *context = &the_context; return 0; }
CUresult cuStreamGetFlags(void* stream, unsigned* flags) { (void)stream; *flags = 1; return 0; }
CUresult cuStreamGetPriority(void* stream, int* priority) { (void)stream; *priority = 0; return 0; }
CUresult cuStreamQuery(void* stream) { (void)stream; return 0; }
CUresult cuDeviceGetDefaultMemPool(void** pool, int device) { (void)device; *pool = &the_pool; return 0; }
static void fake_alloc(unsigned long long* ptr, size_t bytes)
{
    fake_last_alloc = 0x10000000ull + 0x100000ull * (unsigned long long)(++fake_live_allocations);
    fake_last_alloc_size = bytes;
    *ptr = fake_last_alloc;
}
/* Pool allocations and stream-ordered frees: the stream and pool of the
 * last of each, and a status to fail them with while it is set. */
int fake_pool_alloc_status, fake_free_status;
void* fake_last_alloc_stream;
void* fake_last_alloc_pool;
void* fake_last_free_stream;
CUresult cuMemAllocFromPoolAsync(unsigned long long* ptr, size_t bytes, void* pool, void* stream)
{
    evict_caches();
    if (fake_pool_alloc_status != 0) return (CUresult)fake_pool_alloc_status;
    if (capturing) ++fake_pool_allocs_in_capture;
    fake_last_alloc_stream = stream;
    fake_last_alloc_pool = pool;
    fake_alloc(ptr, bytes);
    return 0;
}
/* Graph memory (GraphMemoryResource): an allocation node while capturing. */
int fake_graph_allocs;
CUresult cuMemAllocAsync(unsigned long long* ptr, size_t bytes, void* stream)
{
    (void)stream;
    if (capturing) ++fake_graph_allocs;
    fake_alloc(ptr, bytes);
    return 0;
}
CUresult cuMemFreeAsync(unsigned long long ptr, void* stream)
{
    evict_caches();
    if (fake_free_status != 0) return (CUresult)fake_free_status;
    check_release("cuMemFreeAsync"); fake_last_free = ptr; fake_last_free_stream = stream; --fake_live_allocations;
    return 0;
}
CUresult cuLibraryLoadData(void** library, const void* code, void* jit_options, void* jit_values, unsigned n_jit,
                           void* library_options, void* library_values, unsigned n_library)
{
    (void)code; (void)jit_options; (void)jit_values; (void)n_jit; (void)library_options; (void)library_values;
    (void)n_library;
    *library = &the_library;
    return 0;
}
CUresult cuLibraryUnload(void* library) { (void)library; check_release("cuLibraryUnload"); return 0; }
CUresult cuLibraryGetKernel(void** kernel, void* library, const char* name)
{
    (void)library;
    if (name[0] != 'k' || strlen(name) >= 512) return 500;   /* NOT_FOUND */
    for (int i = 0; i < nkernels; ++i) {   /* a kernel asked for again is the same kernel */
        if (strcmp(kernels[i].name, name) == 0) {
            *kernel = &kernels[i];
            return 0;
        }
    }
    if (nkernels >= 512) return 500;
    struct kernel* k = &kernels[nkernels++];
    strcpy(k->name, name);
    k->count = 0;
    for (const char* c = name + 1; *c && k->count < 256;) {
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
/* Every attribute of every kernel reads 1024 more than the attribute's number. */
CUresult cuKernelGetAttribute(int* value, int attribute, void* kernel, int device)
{ (void)kernel; (void)device; *value = 1024 + attribute; return 0; }
/* Events that are always complete; stream-ordered fills and copies that
 * touch no memory. */
static int the_events[4096];
static int nevents;
CUresult cuEventCreate(void** event, unsigned flags)
{ int* e = &the_events[nevents++ % 4096]; *e = (int)flags; *event = e; return 0; }
CUresult cuEventRecord(void* event, void* stream) { (void)event; (void)stream; return 0; }
CUresult cuEventDestroy(void* event) { (void)event; check_release("cuEventDestroy"); return 0; }
CUresult cuEventQuery(void* event) { (void)event; return 0; }
CUresult cuEventSynchronize(void* event) { (void)event; return 0; }
/* What cuEventElapsedTime answers: 0, or a status a test sets (400: an event
   never recorded; 600: one not yet complete). */
int fake_elapsed_status;
CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
    (void)start;
    (void)end;
    if (fake_elapsed_status != 0) return (CUresult)fake_elapsed_status;
    *ms = 0.5f;
    return 0;
}
CUresult cuStreamWaitEvent(void* stream, void* event, unsigned flags) { (void)stream; (void)event; (void)flags; return 0; }
CUresult cuCtxSynchronize(void) { return refused_in_capture() ? 900 : 0; }
CUresult cuMemGetInfo(size_t* free_bytes, size_t* total) { *free_bytes = (size_t)1 << 34; *total = (size_t)1 << 35; return 0; }
CUresult cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void* s) { (void)p; (void)v; (void)n; (void)s; return 0; }
CUresult cuMemsetD16Async(unsigned long long p, unsigned short v, size_t n, void* s) { (void)p; (void)v; (void)n; (void)s; return 0; }
CUresult cuMemsetD32Async(unsigned long long p, unsigned v, size_t n, void* s) { (void)p; (void)v; (void)n; (void)s; return 0; }
CUresult cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n, void* st) { (void)d; (void)s; (void)n; (void)st; return 0; }

/* Pools and IPC, enough for cubind.core's IPC paths to run end to end in one
 * or two processes: a created pool is a slot of its own; an exported pool is
 * a real file descriptor (of /dev/null) and importing checks that it is open;
 * a pointer's export data and an event's IPC handle carry the address behind
 * a marker, and importing gives that address back (interprocess events only,
 * as the driver requires). */
typedef struct { unsigned char reserved[64]; } blob64;
static const char pool_marker[8] = "fakepool";
static const char event_marker[8] = "fakeevnt";
static int the_pools[256], the_host_pool;
static int npools;
int fake_pools_created, fake_pools_destroyed, fake_pools_imported;
unsigned long long fake_pool_release_threshold;

CUresult cuMemPoolCreate(void** pool, const void* props) { (void)props; if (refused_in_capture()) return 900; ++fake_pools_created; *pool = &the_pools[npools++ % 256]; return 0; }
CUresult cuMemPoolDestroy(void* pool) { (void)pool; check_release("cuMemPoolDestroy"); ++fake_pools_destroyed; return 0; }
CUresult cuMemGetMemPool(void** pool, void* location, int type) { (void)location; (void)type; *pool = &the_host_pool; return 0; }
CUresult cuMemPoolGetAttribute(void* pool, int attribute, void* value)
{ (void)pool; *(unsigned long long*)value = attribute == 4 ? fake_pool_release_threshold : 0; return 0; }
CUresult cuMemPoolSetAttribute(void* pool, int attribute, void* value)
{ (void)pool; if (attribute == 4) fake_pool_release_threshold = *(unsigned long long*)value; return 0; }
CUresult cuMemPoolGetAccess(int* flags, void* pool, void* location) { (void)pool; (void)location; *flags = 3; return 0; }
CUresult cuMemPoolSetAccess(void* pool, const void* map, size_t count) { (void)pool; (void)map; (void)count; return 0; }
CUresult cuMemPoolExportToShareableHandle(void* handle, void* pool, int type, unsigned long long flags)
{
    (void)pool; (void)flags;
    if (type != 1) return 1;  /* POSIX file descriptors only */
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 2;
    *(int*)handle = fd;
    return 0;
}
CUresult cuMemPoolImportFromShareableHandle(void** pool, void* handle, int type, unsigned long long flags)
{
    (void)flags;
    int fd = (int)(intptr_t)handle;
    if (type != 1 || fcntl(fd, F_GETFD) < 0) return 1;  /* CUDA_ERROR_INVALID_VALUE */
    ++fake_pools_imported;
    *pool = &the_pools[npools++ % 256];
    return 0;
}
CUresult cuMemPoolExportPointer(blob64* data, unsigned long long ptr)
{
    memset(data, 0, sizeof *data);
    memcpy(data->reserved, pool_marker, 8);
    memcpy(data->reserved + 8, &ptr, sizeof ptr);
    return 0;
}
CUresult cuMemPoolImportPointer(unsigned long long* ptr, void* pool, const blob64* data)
{
    (void)pool;
    if (memcmp(data->reserved, pool_marker, 8) != 0) return 1;
    memcpy(ptr, data->reserved + 8, sizeof *ptr);
    ++fake_live_allocations;
    return 0;
}
/* Page-locked host memory is plain heap memory here. */
CUresult cuMemHostAlloc(void** ptr, size_t bytes, unsigned flags)
{ (void)flags; *ptr = malloc(bytes ? bytes : 1); ++fake_live_allocations; return *ptr ? 0 : 2; }
CUresult cuMemFreeHost(void* ptr) { check_release("cuMemFreeHost"); free(ptr); --fake_live_allocations; return 0; }
CUresult cuMemFree(unsigned long long ptr) { check_release("cuMemFree"); fake_last_free = ptr; --fake_live_allocations; return 0; }
CUresult cuIpcGetEventHandle(blob64* handle, void* event)
{
    if ((*(int*)event & 0x4) == 0) return 1;  /* not CU_EVENT_INTERPROCESS */
    memset(handle, 0, sizeof *handle);
    memcpy(handle->reserved, event_marker, 8);
    memcpy(handle->reserved + 8, &event, sizeof event);
    return 0;
}
CUresult cuIpcOpenEventHandle(void** event, blob64 handle)
{
    if (memcmp(handle.reserved, event_marker, 8) != 0) return 1;
    memcpy(event, handle.reserved + 8, sizeof *event);
    return 0;
}

/* Coredump settings: the C bools are one byte each (the driver reports a
 * size of 1 and checks it); the file name is up to 1023 characters. */
unsigned char fake_coredump_bools[5];
static char coredump_file[1024];
CUresult cuCoredumpSetAttributeGlobal(int attrib, void* value, size_t* size)
{
    if (attrib >= 1 && attrib <= 4) {
        if (*size != 1) return 1;
        fake_coredump_bools[attrib] = *(unsigned char*)value;
        return 0;
    }
    if (attrib == 5) { snprintf(coredump_file, sizeof coredump_file, "%s", (const char*)value); return 0; }
    return 1;
}
CUresult cuCoredumpGetAttributeGlobal(int attrib, void* value, size_t* size)
{
    if (attrib >= 1 && attrib <= 4) {
        if (value == NULL) { *size = 1; return 0; }
        if (*size < 1) return 1;
        *(unsigned char*)value = fake_coredump_bools[attrib];
        *size = 1;
        return 0;
    }
    if (attrib == 5) {
        if (value == NULL) { *size = sizeof coredump_file; return 0; }
        snprintf((char*)value, *size, "%s", coredump_file);
        return 0;
    }
    return 1;
}

/* The driver's log: the text and its NUL go to the caller's buffer, cut to
 * its size as the driver cuts it; *size says how many bytes were written. */
static const char fake_log[] = "[fake] one log line\n";
CUresult cuLogsDumpToMemory(unsigned int* iterator, char* buffer, size_t* size, unsigned int flags)
{
    (void)flags;
    if (buffer == NULL || size == NULL) return 1;
    size_t n = *size < sizeof fake_log ? *size : sizeof fake_log;
    if (n > 0) {
        memcpy(buffer, fake_log, n);
        buffer[n - 1] = '\0';
    }
    *size = n;
    if (iterator != NULL) *iterator += 1;
    return 0;
}

struct entry { const char* name; void* fn; };
static const struct entry table[] = {
    {"cuInit", (void*)cuInit},
    {"cuMemcpyDtoH", (void*)cuMemcpyDtoH},
    {"cuMemcpyHtoD", (void*)cuMemcpyHtoD},
    {"cuDriverGetVersion", (void*)cuDriverGetVersion},
    {"cuDeviceGetName", (void*)cuDeviceGetName},
    {"cuDeviceGetUuid", (void*)cuDeviceGetUuid},
    {"cuPointerGetAttribute", (void*)cuPointerGetAttribute},
    {"cuPointerGetAttributes", (void*)cuPointerGetAttributes},
    {"cuCoredumpSetAttributeGlobal", (void*)cuCoredumpSetAttributeGlobal},
    {"cuCoredumpGetAttributeGlobal", (void*)cuCoredumpGetAttributeGlobal},
    {"cuLogsDumpToMemory", (void*)cuLogsDumpToMemory},
    {"cuTensorMapEncodeTiled", (void*)cuTensorMapEncodeTiled},
    {"cuTensorMapReplaceAddress", (void*)cuTensorMapReplaceAddress},
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
    {"cuGraphInstantiateWithParams", (void*)cuGraphInstantiateWithParams},
    {"cuGraphExecDestroy", (void*)cuGraphExecDestroy},
    {"cuGraphDestroy", (void*)cuGraphDestroy},
    {"cuGraphUpload", (void*)cuGraphUpload},
    {"cuGraphExecUpdate", (void*)cuGraphExecUpdate},
    {"cuGraphConditionalHandleCreate", (void*)cuGraphConditionalHandleCreate},
    {"cuGraphDebugDotPrint", (void*)cuGraphDebugDotPrint},
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
    {"cuMemAllocAsync", (void*)cuMemAllocAsync},
    {"cuMemFreeAsync", (void*)cuMemFreeAsync},
    {"cuLibraryLoadData", (void*)cuLibraryLoadData},
    {"cuLibraryUnload", (void*)cuLibraryUnload},
    {"cuLibraryGetKernel", (void*)cuLibraryGetKernel},
    {"cuLibraryGetKernelCount", (void*)cuLibraryGetKernelCount},
    {"cuKernelGetName", (void*)cuKernelGetName},
    {"cuKernelGetParamInfo", (void*)cuKernelGetParamInfo},
    {"cuKernelGetAttribute", (void*)cuKernelGetAttribute},
    {"cuMemHostAlloc", (void*)cuMemHostAlloc},
    {"cuMemFreeHost", (void*)cuMemFreeHost},
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
    {"cuMemPoolCreate", (void*)cuMemPoolCreate},
    {"cuMemPoolDestroy", (void*)cuMemPoolDestroy},
    {"cuMemGetMemPool", (void*)cuMemGetMemPool},
    {"cuMemPoolGetAttribute", (void*)cuMemPoolGetAttribute},
    {"cuMemPoolSetAttribute", (void*)cuMemPoolSetAttribute},
    {"cuMemPoolGetAccess", (void*)cuMemPoolGetAccess},
    {"cuMemPoolSetAccess", (void*)cuMemPoolSetAccess},
    {"cuMemPoolExportToShareableHandle", (void*)cuMemPoolExportToShareableHandle},
    {"cuMemPoolImportFromShareableHandle", (void*)cuMemPoolImportFromShareableHandle},
    {"cuMemPoolExportPointer", (void*)cuMemPoolExportPointer},
    {"cuMemPoolImportPointer", (void*)cuMemPoolImportPointer},
    {"cuMemFree", (void*)cuMemFree},
    {"cuIpcGetEventHandle", (void*)cuIpcGetEventHandle},
    {"cuIpcOpenEventHandle", (void*)cuIpcOpenEventHandle},
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
    *pfn = fake_graph_entry ? fake_graph_entry(symbol) : NULL;
    if (*pfn == NULL && fake_interop_entry) *pfn = fake_interop_entry(symbol);
    if (*pfn == NULL && fake_texture_entry) *pfn = fake_texture_entry(symbol);
    if (*pfn != NULL) {
        if (status) *status = 0;
        return 0;
    }
    if (status) *status = 1;
    return 500;
}
#endif

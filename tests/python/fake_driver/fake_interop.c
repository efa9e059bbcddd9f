/* The stand-in driver's OpenGL interop and process checkpointing, compiled
 * beside fake_libcuda.c (which asks fake_interop_entry for these names).
 *
 * Graphics: a registered GL buffer of name N has N * 256 bytes at a made-up
 * address; name 0 is refused, as GL knows no such buffer. An image has no
 * pointer and a buffer no array, as the driver says. Mapping twice, or
 * unmapping what is not mapped, fails as the driver fails.
 *
 * Checkpoint: every pid starts running and moves through the states the
 * driver keeps (running -> locked -> checkpointed -> locked -> running); a
 * step out of order is CUDA_ERROR_ILLEGAL_STATE. Setting fake_checkpoint_refuse
 * makes every call return that status (a container that forbids it), and
 * pid 777 reports a state no CUDA 13.0 header names.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

extern __thread int fake_in_callback;

enum { NOT_MAPPED = 211, ALREADY_MAPPED = 208, NOT_MAPPED_AS_ARRAY = 212, NOT_MAPPED_AS_POINTER = 213,
       INVALID_VALUE = 1, INVALID_HANDLE = 400, ILLEGAL_STATE = 401 };

struct resource { int live, image, mapped; unsigned name, target, flags, map_flags; void* stream; };
static struct resource resources[64];

int fake_graphics_registered, fake_graphics_unregistered, fake_graphics_maps, fake_graphics_unmaps;
unsigned fake_graphics_last_flags, fake_graphics_last_target, fake_graphics_last_map_flags;
void* fake_graphics_last_stream;

static struct resource* find(void* handle)
{
    uintptr_t i = (uintptr_t)handle - 0x9000;
    if ((uintptr_t)handle < 0x9000 || i >= 64 || !resources[i].live) return NULL;
    return &resources[i];
}

static CUresult add(void** out, int image, unsigned name, unsigned target, unsigned flags)
{
    if (name == 0) return INVALID_VALUE;
    for (int i = 0; i < 64; ++i) {
        if (!resources[i].live) {
            struct resource r = {1, image, 0, name, target, flags, 0, NULL};
            resources[i] = r;
            *out = (void*)(uintptr_t)(0x9000 + i);
            fake_graphics_last_flags = flags;
            fake_graphics_last_target = target;
            ++fake_graphics_registered;
            return 0;
        }
    }
    return 2;
}

CUresult cuGraphicsGLRegisterBuffer(void** resource, unsigned buffer, unsigned flags)
{ return add(resource, 0, buffer, 0, flags); }
CUresult cuGraphicsGLRegisterImage(void** resource, unsigned image, unsigned target, unsigned flags)
{ return add(resource, 1, image, target, flags); }

CUresult cuGraphicsUnregisterResource(void* handle)
{
    if (fake_in_callback) { fprintf(stderr, "fake driver: cuGraphicsUnregisterResource from a host function\n"); abort(); }
    struct resource* r = find(handle);
    if (r == NULL) return INVALID_HANDLE;
    r->live = 0;
    ++fake_graphics_unregistered;
    return 0;
}

CUresult cuGraphicsMapResources(unsigned count, void** handles, void* stream)
{
    for (unsigned i = 0; i < count; ++i) {
        struct resource* r = find(handles[i]);
        if (r == NULL) return INVALID_HANDLE;
        if (r->mapped) return ALREADY_MAPPED;
    }
    for (unsigned i = 0; i < count; ++i) { find(handles[i])->mapped = 1; find(handles[i])->stream = stream; }
    fake_graphics_last_stream = stream;
    ++fake_graphics_maps;
    return 0;
}

CUresult cuGraphicsUnmapResources(unsigned count, void** handles, void* stream)
{
    for (unsigned i = 0; i < count; ++i) {
        struct resource* r = find(handles[i]);
        if (r == NULL) return INVALID_HANDLE;
        if (!r->mapped) return NOT_MAPPED;
    }
    for (unsigned i = 0; i < count; ++i) find(handles[i])->mapped = 0;
    fake_graphics_last_stream = stream;
    ++fake_graphics_unmaps;
    return 0;
}

CUresult cuGraphicsResourceGetMappedPointer(unsigned long long* pointer, size_t* size, void* handle)
{
    struct resource* r = find(handle);
    if (r == NULL) return INVALID_HANDLE;
    if (!r->mapped) return NOT_MAPPED;
    if (r->image) return NOT_MAPPED_AS_POINTER;
    *pointer = 0x30000000ull + 0x10000ull * r->name;
    *size = (size_t)r->name * 256;
    return 0;
}

CUresult cuGraphicsSubResourceGetMappedArray(void** array, void* handle, unsigned index, unsigned level)
{
    struct resource* r = find(handle);
    if (r == NULL) return INVALID_HANDLE;
    if (!r->mapped) return NOT_MAPPED;
    if (!r->image) return NOT_MAPPED_AS_ARRAY;
    if (index != 0 || level > 4) return INVALID_VALUE;
    *array = (void*)(uintptr_t)(0xA0000 + 0x100 * r->name + level);
    return 0;
}

CUresult cuGraphicsResourceGetMappedMipmappedArray(void** array, void* handle)
{
    struct resource* r = find(handle);
    if (r == NULL) return INVALID_HANDLE;
    if (!r->mapped) return NOT_MAPPED;
    if (!r->image) return NOT_MAPPED_AS_ARRAY;
    *array = (void*)(uintptr_t)(0xB0000 + 0x100 * r->name);
    return 0;
}

CUresult cuGraphicsResourceSetMapFlags(void* handle, unsigned flags)
{
    struct resource* r = find(handle);
    if (r == NULL) return INVALID_HANDLE;
    if (r->mapped) return ALREADY_MAPPED;
    if (flags > 2) return INVALID_VALUE;
    r->map_flags = flags;
    fake_graphics_last_map_flags = flags;
    return 0;
}

/* Checkpointing. */
enum { RUNNING, LOCKED, CHECKPOINTED };
struct process { int pid, state; };
static struct process processes[64];
int fake_checkpoint_refuse;
unsigned fake_checkpoint_lock_timeout;
unsigned fake_checkpoint_restore_pairs;
unsigned char fake_checkpoint_restore_uuids[32];   /* the first pair: old, new */

static struct process* process_of(int pid)
{
    for (int i = 0; i < 64; ++i) if (processes[i].pid == pid) return &processes[i];
    for (int i = 0; i < 64; ++i) if (processes[i].pid == 0) { processes[i].pid = pid; processes[i].state = RUNNING; return &processes[i]; }
    return NULL;
}

static CUresult step(int pid, int from, int to)
{
    if (fake_checkpoint_refuse) return fake_checkpoint_refuse;
    struct process* p = process_of(pid);
    if (p == NULL) return 2;
    if (p->state != from) return ILLEGAL_STATE;
    p->state = to;
    return 0;
}

CUresult cuCheckpointProcessGetState(int pid, int* state)
{
    if (fake_checkpoint_refuse) return fake_checkpoint_refuse;
    if (pid == 777) { *state = 7; return 0; }
    struct process* p = process_of(pid);
    if (p == NULL) return 2;
    *state = p->state;
    return 0;
}

CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int* tid)
{
    if (fake_checkpoint_refuse) return fake_checkpoint_refuse;
    *tid = pid + 1000;
    return 0;
}

typedef struct { unsigned timeoutMs, reserved0; unsigned long long reserved1[7]; } lock_args;
typedef struct { unsigned char old_uuid[16], new_uuid[16]; } gpu_pair;
typedef struct { gpu_pair* pairs; unsigned count; char reserved[44]; unsigned long long reserved1; } restore_args;

CUresult cuCheckpointProcessLock(int pid, lock_args* args)
{
    if (args != NULL) {
        for (int i = 0; i < 7; ++i) if (args->reserved1[i] != 0 || args->reserved0 != 0) return INVALID_VALUE;
        fake_checkpoint_lock_timeout = args->timeoutMs;
    }
    return step(pid, RUNNING, LOCKED);
}
CUresult cuCheckpointProcessCheckpoint(int pid, void* args) { if (args) return INVALID_VALUE; return step(pid, LOCKED, CHECKPOINTED); }
CUresult cuCheckpointProcessRestore(int pid, restore_args* args)
{
    fake_checkpoint_restore_pairs = args ? args->count : 0;
    if (args && args->count) memcpy(fake_checkpoint_restore_uuids, args->pairs, 32);
    return step(pid, CHECKPOINTED, LOCKED);
}
CUresult cuCheckpointProcessUnlock(int pid, void* args) { if (args) return INVALID_VALUE; return step(pid, LOCKED, RUNNING); }

struct entry { const char* name; void* fn; };
static const struct entry interop_table[] = {
    {"cuGraphicsGLRegisterBuffer", (void*)cuGraphicsGLRegisterBuffer},
    {"cuGraphicsGLRegisterImage", (void*)cuGraphicsGLRegisterImage},
    {"cuGraphicsUnregisterResource", (void*)cuGraphicsUnregisterResource},
    {"cuGraphicsMapResources", (void*)cuGraphicsMapResources},
    {"cuGraphicsUnmapResources", (void*)cuGraphicsUnmapResources},
    {"cuGraphicsResourceGetMappedPointer", (void*)cuGraphicsResourceGetMappedPointer},
    {"cuGraphicsSubResourceGetMappedArray", (void*)cuGraphicsSubResourceGetMappedArray},
    {"cuGraphicsResourceGetMappedMipmappedArray", (void*)cuGraphicsResourceGetMappedMipmappedArray},
    {"cuGraphicsResourceSetMapFlags", (void*)cuGraphicsResourceSetMapFlags},
    {"cuCheckpointProcessGetState", (void*)cuCheckpointProcessGetState},
    {"cuCheckpointProcessGetRestoreThreadId", (void*)cuCheckpointProcessGetRestoreThreadId},
    {"cuCheckpointProcessLock", (void*)cuCheckpointProcessLock},
    {"cuCheckpointProcessCheckpoint", (void*)cuCheckpointProcessCheckpoint},
    {"cuCheckpointProcessRestore", (void*)cuCheckpointProcessRestore},
    {"cuCheckpointProcessUnlock", (void*)cuCheckpointProcessUnlock},
};

void* fake_interop_entry(const char* name)
{
    for (size_t i = 0; i < sizeof interop_table / sizeof interop_table[0]; ++i)
        if (strcmp(name, interop_table[i].name) == 0) return interop_table[i].fn;
    return NULL;
}

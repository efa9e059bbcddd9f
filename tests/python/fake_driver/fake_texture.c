/* The texture and surface part of the stand-in libcuda.so.1 (fake_libcuda.c
 * looks its entry points up here): CUDA arrays with real host storage, so
 * that whole-array copies from and to host memory round-trip; mipmapped
 * arrays whose levels halve; texture and surface objects that record what
 * they were created with. Copies to or from device addresses are recorded,
 * not made (the stand-in's device memory is no memory). The live counts let
 * tests see what is destroyed, and when. */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

/* From fake_libcuda.c: aborts where the real driver must not be called. */
void fake_check_release(const char* name);

#define ARRAY_MAGIC 0x7a7a
#define MIPMAP_MAGIC 0x7b7b
#define MAX_LEVELS 16

struct farray {
    int magic;
    CUDA_ARRAY3D_DESCRIPTOR desc;
    unsigned char* data;
    int level_of_mipmap; /* destroyed with its mipmap, never alone */
};
struct fmipmap {
    int magic;
    unsigned levels;
    struct farray* level[MAX_LEVELS];
};

int fake_live_arrays;
int fake_live_mipmaps;
int fake_live_textures;
int fake_live_surfaces;

/* What the last cuTexObjectCreate received. */
int fake_tex_res_type = -1;
unsigned long long fake_tex_res_address; /* the array, mipmapped array or device pointer */
int fake_tex_format;
unsigned fake_tex_channels;
size_t fake_tex_size, fake_tex_width, fake_tex_height, fake_tex_pitch;
int fake_tex_address[3];
int fake_tex_filter, fake_tex_mipmap_filter;
unsigned fake_tex_flags, fake_tex_max_anisotropy;
float fake_tex_bias, fake_tex_min_clamp, fake_tex_max_clamp;
float fake_tex_border[4];

/* What the last cuMemcpy3DAsync received. */
int fake_copy3d_count;
int fake_copy3d_src_type, fake_copy3d_dst_type;
size_t fake_copy3d_width_bytes, fake_copy3d_height, fake_copy3d_depth;
unsigned long long fake_copy3d_device_address;
void* fake_copy3d_stream;

static size_t format_bytes(CUarray_format format)
{
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}

static size_t at_least_one(size_t n) { return n ? n : 1; }

static size_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR* d)
{
    return d->Width * at_least_one(d->Height) * at_least_one(d->Depth) * format_bytes(d->Format) * d->NumChannels;
}

static int descriptor_ok(const CUDA_ARRAY3D_DESCRIPTOR* d)
{
    if (d == NULL || d->Width == 0 || format_bytes(d->Format) == 0) return 0;
    if (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4) return 0;
    if (d->Depth && !d->Height) return 0;
    return 1;
}

static struct farray* new_array(const CUDA_ARRAY3D_DESCRIPTOR* d, int level)
{
    struct farray* a = calloc(1, sizeof *a);
    a->magic = ARRAY_MAGIC;
    a->desc = *d;
    a->data = calloc(1, array_bytes(d));
    a->level_of_mipmap = level;
    return a;
}

static void free_array(struct farray* a)
{
    a->magic = 0;
    free(a->data);
    free(a);
}

static CUresult fx_cuArray3DCreate(CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* d)
{
    if (!descriptor_ok(d)) return CUDA_ERROR_INVALID_VALUE;
    *handle = (CUarray)new_array(d, 0);
    ++fake_live_arrays;
    return CUDA_SUCCESS;
}

static struct farray* as_array(CUarray handle)
{
    struct farray* a = (struct farray*)handle;
    return a != NULL && a->magic == ARRAY_MAGIC ? a : NULL;
}

static CUresult fx_cuArrayDestroy(CUarray handle)
{
    struct farray* a = as_array(handle);
    fake_check_release("cuArrayDestroy");
    if (a == NULL || a->level_of_mipmap) return CUDA_ERROR_INVALID_HANDLE;
    free_array(a);
    --fake_live_arrays;
    return CUDA_SUCCESS;
}

static CUresult fx_cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR* d, CUarray handle)
{
    struct farray* a = as_array(handle);
    if (a == NULL) return CUDA_ERROR_INVALID_HANDLE;
    *d = a->desc;
    return CUDA_SUCCESS;
}

static unsigned max_levels(const CUDA_ARRAY3D_DESCRIPTOR* d)
{
    size_t largest = d->Width;
    if (d->Height > largest) largest = d->Height;
    if (d->Depth > largest) largest = d->Depth;
    unsigned levels = 1;
    while (largest >>= 1) ++levels;
    return levels;
}

static CUresult fx_cuMipmappedArrayCreate(CUmipmappedArray* handle, const CUDA_ARRAY3D_DESCRIPTOR* d, unsigned levels)
{
    if (!descriptor_ok(d) || levels == 0 || levels > max_levels(d) || levels > MAX_LEVELS)
        return CUDA_ERROR_INVALID_VALUE;
    struct fmipmap* m = calloc(1, sizeof *m);
    m->magic = MIPMAP_MAGIC;
    m->levels = levels;
    for (unsigned i = 0; i < levels; ++i) {
        CUDA_ARRAY3D_DESCRIPTOR level = *d;
        level.Width = at_least_one(d->Width >> i);
        if (d->Height) level.Height = at_least_one(d->Height >> i);
        if (d->Depth) level.Depth = at_least_one(d->Depth >> i);
        m->level[i] = new_array(&level, 1);
    }
    *handle = (CUmipmappedArray)m;
    ++fake_live_mipmaps;
    return CUDA_SUCCESS;
}

static struct fmipmap* as_mipmap(CUmipmappedArray handle)
{
    struct fmipmap* m = (struct fmipmap*)handle;
    return m != NULL && m->magic == MIPMAP_MAGIC ? m : NULL;
}

static CUresult fx_cuMipmappedArrayGetLevel(CUarray* level, CUmipmappedArray handle, unsigned index)
{
    struct fmipmap* m = as_mipmap(handle);
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    if (index >= m->levels) return CUDA_ERROR_INVALID_VALUE;
    *level = (CUarray)m->level[index];
    return CUDA_SUCCESS;
}

static CUresult fx_cuMipmappedArrayDestroy(CUmipmappedArray handle)
{
    struct fmipmap* m = as_mipmap(handle);
    fake_check_release("cuMipmappedArrayDestroy");
    if (m == NULL) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < m->levels; ++i) free_array(m->level[i]);
    m->magic = 0;
    free(m);
    --fake_live_mipmaps;
    return CUDA_SUCCESS;
}

/* One side of a copy: the array's storage, or packed host rows. */
static CUresult copy_rows(const CUDA_MEMCPY3D* p)
{
    int to_array = p->dstMemoryType == CU_MEMORYTYPE_ARRAY;
    struct farray* a = as_array(to_array ? p->dstArray : p->srcArray);
    if (a == NULL) return CUDA_ERROR_INVALID_HANDLE;
    size_t row_bytes = a->desc.Width * format_bytes(a->desc.Format) * a->desc.NumChannels;
    if (p->WidthInBytes > row_bytes || p->Height > at_least_one(a->desc.Height) ||
        p->Depth > at_least_one(a->desc.Depth))
        return CUDA_ERROR_INVALID_VALUE;
    CUmemorytype other = to_array ? p->srcMemoryType : p->dstMemoryType;
    if (other != CU_MEMORYTYPE_HOST) return CUDA_SUCCESS; /* device memory: recorded only */
    size_t pitch = to_array ? p->srcPitch : p->dstPitch;
    size_t rows = to_array ? p->srcHeight : p->dstHeight;
    if (pitch < p->WidthInBytes || rows < p->Height) return CUDA_ERROR_INVALID_VALUE;
    for (size_t z = 0; z < p->Depth; ++z) {
        for (size_t y = 0; y < p->Height; ++y) {
            unsigned char* cell = a->data + (z * at_least_one(a->desc.Height) + y) * row_bytes;
            size_t offset = (z * rows + y) * pitch;
            if (to_array)
                memcpy(cell, (const unsigned char*)p->srcHost + offset, p->WidthInBytes);
            else
                memcpy((unsigned char*)p->dstHost + offset, cell, p->WidthInBytes);
        }
    }
    return CUDA_SUCCESS;
}

static CUresult fx_cuMemcpy3DAsync(const CUDA_MEMCPY3D* p, CUstream stream)
{
    ++fake_copy3d_count;
    fake_copy3d_src_type = p->srcMemoryType;
    fake_copy3d_dst_type = p->dstMemoryType;
    fake_copy3d_width_bytes = p->WidthInBytes;
    fake_copy3d_height = p->Height;
    fake_copy3d_depth = p->Depth;
    fake_copy3d_device_address = p->srcMemoryType == CU_MEMORYTYPE_ARRAY ? p->dstDevice : p->srcDevice;
    fake_copy3d_stream = stream;
    if ((p->srcMemoryType == CU_MEMORYTYPE_ARRAY) == (p->dstMemoryType == CU_MEMORYTYPE_ARRAY))
        return CUDA_ERROR_NOT_SUPPORTED; /* the stand-in copies only between an array and other memory */
    return copy_rows(p);
}

static unsigned long long next_object = 0x7e0001;

static CUresult fx_cuTexObjectCreate(CUtexObject* handle, const CUDA_RESOURCE_DESC* res, const CUDA_TEXTURE_DESC* tex,
                                     const CUDA_RESOURCE_VIEW_DESC* view)
{
    if (view != NULL) return CUDA_ERROR_NOT_SUPPORTED;
    fake_tex_res_type = res->resType;
    switch (res->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
        if (as_array(res->res.array.hArray) == NULL) return CUDA_ERROR_INVALID_HANDLE;
        fake_tex_res_address = (unsigned long long)(size_t)res->res.array.hArray;
        break;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        if (as_mipmap(res->res.mipmap.hMipmappedArray) == NULL) return CUDA_ERROR_INVALID_HANDLE;
        fake_tex_res_address = (unsigned long long)(size_t)res->res.mipmap.hMipmappedArray;
        break;
    case CU_RESOURCE_TYPE_LINEAR:
        fake_tex_res_address = res->res.linear.devPtr;
        fake_tex_format = res->res.linear.format;
        fake_tex_channels = res->res.linear.numChannels;
        fake_tex_size = res->res.linear.sizeInBytes;
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        fake_tex_res_address = res->res.pitch2D.devPtr;
        fake_tex_format = res->res.pitch2D.format;
        fake_tex_channels = res->res.pitch2D.numChannels;
        fake_tex_width = res->res.pitch2D.width;
        fake_tex_height = res->res.pitch2D.height;
        fake_tex_pitch = res->res.pitch2D.pitchInBytes;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (int i = 0; i < 3; ++i) fake_tex_address[i] = tex->addressMode[i];
    fake_tex_filter = tex->filterMode;
    fake_tex_flags = tex->flags;
    fake_tex_max_anisotropy = tex->maxAnisotropy;
    fake_tex_mipmap_filter = tex->mipmapFilterMode;
    fake_tex_bias = tex->mipmapLevelBias;
    fake_tex_min_clamp = tex->minMipmapLevelClamp;
    fake_tex_max_clamp = tex->maxMipmapLevelClamp;
    for (int i = 0; i < 4; ++i) fake_tex_border[i] = tex->borderColor[i];
    *handle = next_object++;
    ++fake_live_textures;
    return CUDA_SUCCESS;
}

static CUresult fx_cuTexObjectDestroy(CUtexObject handle)
{
    fake_check_release("cuTexObjectDestroy");
    if (handle == 0) return CUDA_ERROR_INVALID_HANDLE;
    --fake_live_textures;
    return CUDA_SUCCESS;
}

static CUresult fx_cuSurfObjectCreate(CUsurfObject* handle, const CUDA_RESOURCE_DESC* res)
{
    if (res->resType != CU_RESOURCE_TYPE_ARRAY) return CUDA_ERROR_INVALID_VALUE;
    struct farray* a = as_array(res->res.array.hArray);
    if (a == NULL) return CUDA_ERROR_INVALID_HANDLE;
    if (!(a->desc.Flags & CUDA_ARRAY3D_SURFACE_LDST)) return CUDA_ERROR_INVALID_VALUE;
    *handle = next_object++;
    ++fake_live_surfaces;
    return CUDA_SUCCESS;
}

static CUresult fx_cuSurfObjectDestroy(CUsurfObject handle)
{
    fake_check_release("cuSurfObjectDestroy");
    if (handle == 0) return CUDA_ERROR_INVALID_HANDLE;
    --fake_live_surfaces;
    return CUDA_SUCCESS;
}

struct texture_entry { const char* name; void* fn; };
static const struct texture_entry texture_table[] = {
    {"cuArray3DCreate", (void*)fx_cuArray3DCreate},
    {"cuArrayDestroy", (void*)fx_cuArrayDestroy},
    {"cuArray3DGetDescriptor", (void*)fx_cuArray3DGetDescriptor},
    {"cuMipmappedArrayCreate", (void*)fx_cuMipmappedArrayCreate},
    {"cuMipmappedArrayGetLevel", (void*)fx_cuMipmappedArrayGetLevel},
    {"cuMipmappedArrayDestroy", (void*)fx_cuMipmappedArrayDestroy},
    {"cuMemcpy3DAsync", (void*)fx_cuMemcpy3DAsync},
    {"cuTexObjectCreate", (void*)fx_cuTexObjectCreate},
    {"cuTexObjectDestroy", (void*)fx_cuTexObjectDestroy},
    {"cuSurfObjectCreate", (void*)fx_cuSurfObjectCreate},
    {"cuSurfObjectDestroy", (void*)fx_cuSurfObjectDestroy},
};

void* fake_texture_entry(const char* name)
{
    for (size_t i = 0; i < sizeof texture_table / sizeof texture_table[0]; ++i)
        if (strcmp(name, texture_table[i].name) == 0) return texture_table[i].fn;
    return NULL;
}

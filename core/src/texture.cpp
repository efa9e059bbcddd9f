#include "cubind/texture.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

void check_channels(unsigned int num_channels, const char* where) {
  if (num_channels != 1 && num_channels != 2 && num_channels != 4) {
    throw std::invalid_argument(std::string(where) + ": num_channels must be 1, 2, or 4, got " +
                                std::to_string(num_channels));
  }
}

// Destructors release in the owner's context, where they know it, so that
// no context need be current on the thread that lets go of the last share.
template <typename Release>
void release_in(CUcontext context, Release&& release) noexcept {
  detail::release_quietly([&] {
    std::optional<ContextGuard> guard;
    if (context != nullptr) guard.emplace(Context::from_native_handle(context));
    return release();
  });
}

// One side of a whole-array copy: the array, or the packed rows of the other side.
void set_array_side(CUDA_MEMCPY3D& copy, bool source, CUarray array) {
  if (source) {
    copy.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    copy.srcArray = array;
  } else {
    copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    copy.dstArray = array;
  }
}

void set_linear_side(CUDA_MEMCPY3D& copy, bool source, CUmemorytype type, const void* host, CUdeviceptr address,
                     std::size_t pitch, std::size_t height) {
  if (source) {
    copy.srcMemoryType = type;
    copy.srcHost = host;
    copy.srcDevice = address;
    copy.srcPitch = pitch;
    copy.srcHeight = height;
  } else {
    copy.dstMemoryType = type;
    copy.dstHost = const_cast<void*>(host);
    copy.dstDevice = address;
    copy.dstPitch = pitch;
    copy.dstHeight = height;
  }
}

// The whole of `array` to or from the other side (host memory at `host`, or
// the address `address` known to CUDA), which holds `bytes`.
void copy_whole(const ArrayRef& array, bool to_array, CUmemorytype type, const void* host, CUdeviceptr address,
                std::size_t bytes, StreamRef stream, const char* where) {
  detail::require_stream(stream, where);
  const ArrayDescriptor& d = array.descriptor();
  const std::size_t needed = d.size_bytes();
  if (bytes < needed) {
    throw std::invalid_argument(std::string(where) + ": the " + (to_array ? "source" : "destination") + " has " +
                                std::to_string(bytes) + " bytes, smaller than the array extent (" +
                                std::to_string(needed) + " bytes)");
  }
  CUDA_MEMCPY3D copy;
  std::memset(&copy, 0, sizeof copy);
  copy.WidthInBytes = d.width * d.element_bytes();
  copy.Height = std::max<std::size_t>(d.height, 1);
  copy.Depth = std::max<std::size_t>(d.depth, 1);
  set_array_side(copy, !to_array, array.handle());
  set_linear_side(copy, to_array, type, host, address, copy.WidthInBytes, copy.Height);
  StreamContextGuard guard(stream);
  detail::check(raw::cuMemcpy3DAsync(&copy, stream.handle()), "cuMemcpy3DAsync");
}

}  // namespace

std::size_t array_format_bytes(CUarray_format format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      throw std::invalid_argument("cubind::array_format_bytes: format " + std::to_string(static_cast<int>(format)) +
                                  " is none of the 8-, 16- and 32-bit integer, half and float formats");
  }
}

std::size_t ArrayDescriptor::size_bytes() const {
  return width * std::max<std::size_t>(height, 1) * std::max<std::size_t>(depth, 1) * element_bytes();
}

CUDA_ARRAY3D_DESCRIPTOR to_native(const ArrayDescriptor& d) {
  const char* where = "cubind::to_native(ArrayDescriptor)";
  if (d.width == 0) throw std::invalid_argument(std::string(where) + ": width must be >= 1, got 0");
  if (d.depth > 0 && d.height == 0) {
    throw std::invalid_argument(std::string(where) + ": a depth of " + std::to_string(d.depth) +
                                " needs a height of at least 1, got 0");
  }
  check_channels(d.num_channels, where);
  (void)array_format_bytes(d.format);
  CUDA_ARRAY3D_DESCRIPTOR native;
  std::memset(&native, 0, sizeof native);
  native.Width = d.width;
  native.Height = d.height;
  native.Depth = d.depth;
  native.Format = d.format;
  native.NumChannels = d.num_channels;
  native.Flags = d.surface_load_store ? CUDA_ARRAY3D_SURFACE_LDST : 0u;
  return native;
}

ArrayDescriptor from_native(const CUDA_ARRAY3D_DESCRIPTOR& native) {
  ArrayDescriptor d;
  d.width = native.Width;
  d.height = native.Height;
  d.depth = native.Depth;
  d.format = native.Format;
  d.num_channels = native.NumChannels;
  d.surface_load_store = (native.Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0;
  return d;
}

ArrayRef ArrayRef::from_native_handle(CUarray handle) {
  if (handle == nullptr) throw std::invalid_argument("cubind::ArrayRef::from_native_handle: the handle is null");
  CUDA_ARRAY3D_DESCRIPTOR native;
  std::memset(&native, 0, sizeof native);
  detail::check(raw::cuArray3DGetDescriptor(&native, handle), "cuArray3DGetDescriptor");
  return ArrayRef(handle, from_native(native));
}

void ArrayRef::require_array(const char* where) const {
  if (handle_ == nullptr) detail::throw_null(where, "array");
}

void ArrayRef::copy_from_host(const void* src, std::size_t bytes, StreamRef stream) const {
  require_array("cubind::ArrayRef::copy_from_host");
  copy_whole(*this, true, CU_MEMORYTYPE_HOST, src, 0, bytes, stream, "cubind::ArrayRef::copy_from_host");
}

void ArrayRef::copy_from(CUdeviceptr src, std::size_t bytes, StreamRef stream) const {
  require_array("cubind::ArrayRef::copy_from");
  copy_whole(*this, true, CU_MEMORYTYPE_UNIFIED, nullptr, src, bytes, stream, "cubind::ArrayRef::copy_from");
}

void ArrayRef::copy_to_host(void* dst, std::size_t bytes, StreamRef stream) const {
  require_array("cubind::ArrayRef::copy_to_host");
  copy_whole(*this, false, CU_MEMORYTYPE_HOST, dst, 0, bytes, stream, "cubind::ArrayRef::copy_to_host");
}

void ArrayRef::copy_to(CUdeviceptr dst, std::size_t bytes, StreamRef stream) const {
  require_array("cubind::ArrayRef::copy_to");
  copy_whole(*this, false, CU_MEMORYTYPE_UNIFIED, nullptr, dst, bytes, stream, "cubind::ArrayRef::copy_to");
}

namespace {

CUarray create_array(const Device& device, const ArrayDescriptor& descriptor) {
  const CUDA_ARRAY3D_DESCRIPTOR native = to_native(descriptor);
  ContextGuard guard(device);
  CUarray handle = nullptr;
  detail::check(raw::cuArray3DCreate(&handle, &native), "cuArray3DCreate");
  return handle;
}

}  // namespace

OpaqueArray::OpaqueArray(const Device& device, const ArrayDescriptor& descriptor)
    : ArrayRef(create_array(device, descriptor), descriptor), context_(detail::primary_context(device.ordinal())) {}

OpaqueArray OpaqueArray::from_native_handle(CUarray handle) {
  if (handle == nullptr) throw std::invalid_argument("cubind::OpaqueArray::from_native_handle: the handle is null");
  const ArrayRef view = ArrayRef::from_native_handle(handle);
  const std::optional<Context> current = Context::current();
  return OpaqueArray(handle, view.descriptor(), current ? current->handle() : nullptr);
}

OpaqueArray::OpaqueArray(OpaqueArray&& other) noexcept
    : ArrayRef(std::exchange(other.handle_, nullptr), other.descriptor_),
      context_(std::exchange(other.context_, nullptr)) {}

OpaqueArray& OpaqueArray::operator=(OpaqueArray&& other) noexcept {
  if (this != &other) {
    OpaqueArray old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    descriptor_ = other.descriptor_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

OpaqueArray::~OpaqueArray() {
  if (handle_ != nullptr) release_in(context_, [this] { return raw::cuArrayDestroy(handle_); });
}

CUarray OpaqueArray::release() {
  require_array("cubind::OpaqueArray::release");
  return std::exchange(handle_, nullptr);
}

namespace {

CUmipmappedArray create_mipmapped(const Device& device, const ArrayDescriptor& descriptor, unsigned int levels) {
  const CUDA_ARRAY3D_DESCRIPTOR native = to_native(descriptor);
  if (levels == 0) throw std::invalid_argument("cubind::MipmappedArray: num_levels must be >= 1, got 0");
  ContextGuard guard(device);
  CUmipmappedArray handle = nullptr;
  detail::check(raw::cuMipmappedArrayCreate(&handle, &native, levels), "cuMipmappedArrayCreate");
  return handle;
}

}  // namespace

MipmappedArray::MipmappedArray(const Device& device, const ArrayDescriptor& descriptor, unsigned int num_levels)
    : handle_(create_mipmapped(device, descriptor, num_levels)),
      descriptor_(descriptor),
      num_levels_(num_levels),
      context_(detail::primary_context(device.ordinal())) {}

MipmappedArray::MipmappedArray(MipmappedArray&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      descriptor_(other.descriptor_),
      num_levels_(std::exchange(other.num_levels_, 0u)),
      context_(std::exchange(other.context_, nullptr)) {}

MipmappedArray& MipmappedArray::operator=(MipmappedArray&& other) noexcept {
  if (this != &other) {
    MipmappedArray old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    descriptor_ = other.descriptor_;
    num_levels_ = std::exchange(other.num_levels_, 0u);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

MipmappedArray::~MipmappedArray() {
  if (handle_ != nullptr) release_in(context_, [this] { return raw::cuMipmappedArrayDestroy(handle_); });
}

ArrayRef MipmappedArray::level(unsigned int level) const {
  if (handle_ == nullptr) detail::throw_null("cubind::MipmappedArray::level", "mipmapped array");
  if (level >= num_levels_) {
    throw std::out_of_range("cubind::MipmappedArray::level: level (" + std::to_string(level) +
                            ") must be < num_levels (" + std::to_string(num_levels_) + ")");
  }
  ContextGuard guard(Context::from_native_handle(context_));
  CUarray array = nullptr;
  detail::check(raw::cuMipmappedArrayGetLevel(&array, handle_, level), "cuMipmappedArrayGetLevel");
  return ArrayRef::from_native_handle(array);
}

std::shared_ptr<const ArrayRef> MipmappedArray::level(std::shared_ptr<const MipmappedArray> mipmap,
                                                      unsigned int level) {
  if (mipmap == nullptr) throw std::invalid_argument("cubind::MipmappedArray::level: the mipmapped array is null");
  // The view and the share of its parent live in one block; the pointer
  // handed out aliases the view.
  struct Level {
    std::shared_ptr<const MipmappedArray> parent;
    ArrayRef view;
  };
  ArrayRef view = mipmap->level(level);
  auto block = std::make_shared<Level>(Level{std::move(mipmap), view});
  return std::shared_ptr<const ArrayRef>(block, &block->view);
}

TextureResource::TextureResource() noexcept { std::memset(&desc_, 0, sizeof desc_); }

TextureResource TextureResource::array(std::shared_ptr<const ArrayRef> array) {
  if (array == nullptr || array->handle() == nullptr) {
    throw std::invalid_argument("cubind::TextureResource::array: the array is null");
  }
  TextureResource resource;
  resource.desc_.resType = CU_RESOURCE_TYPE_ARRAY;
  resource.desc_.res.array.hArray = array->handle();
  resource.array_ = std::move(array);
  return resource;
}

TextureResource TextureResource::mipmapped_array(std::shared_ptr<const MipmappedArray> mipmap) {
  if (mipmap == nullptr || mipmap->handle() == nullptr) {
    throw std::invalid_argument("cubind::TextureResource::mipmapped_array: the mipmapped array is null");
  }
  TextureResource resource;
  resource.desc_.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  resource.desc_.res.mipmap.hMipmappedArray = mipmap->handle();
  resource.owner_ = std::move(mipmap);
  return resource;
}

TextureResource TextureResource::linear(CUdeviceptr ptr, CUarray_format format, unsigned int num_channels,
                                        std::size_t bytes, std::shared_ptr<const void> owner) {
  const char* where = "cubind::TextureResource::linear";
  check_channels(num_channels, where);
  const std::size_t element = array_format_bytes(format) * num_channels;
  if (bytes < element || bytes % element != 0) {
    throw std::invalid_argument(std::string(where) + ": size_bytes (" + std::to_string(bytes) +
                                ") must be a positive multiple of the element size (" + std::to_string(element) +
                                " bytes)");
  }
  TextureResource resource;
  resource.desc_.resType = CU_RESOURCE_TYPE_LINEAR;
  resource.desc_.res.linear.devPtr = ptr;
  resource.desc_.res.linear.format = format;
  resource.desc_.res.linear.numChannels = num_channels;
  resource.desc_.res.linear.sizeInBytes = bytes;
  resource.owner_ = std::move(owner);
  return resource;
}

TextureResource TextureResource::pitch2d(CUdeviceptr ptr, CUarray_format format, unsigned int num_channels,
                                         std::size_t width, std::size_t height, std::size_t pitch_bytes,
                                         std::shared_ptr<const void> owner) {
  const char* where = "cubind::TextureResource::pitch2d";
  check_channels(num_channels, where);
  const std::size_t element = array_format_bytes(format) * num_channels;
  if (width == 0) throw std::invalid_argument(std::string(where) + ": width must be >= 1, got 0");
  if (height == 0) throw std::invalid_argument(std::string(where) + ": height must be >= 1, got 0");
  if (pitch_bytes < width * element) {
    throw std::invalid_argument(std::string(where) + ": pitch_bytes (" + std::to_string(pitch_bytes) +
                                ") must be >= width * element_bytes (" + std::to_string(width * element) + ")");
  }
  TextureResource resource;
  resource.desc_.resType = CU_RESOURCE_TYPE_PITCH2D;
  resource.desc_.res.pitch2D.devPtr = ptr;
  resource.desc_.res.pitch2D.format = format;
  resource.desc_.res.pitch2D.numChannels = num_channels;
  resource.desc_.res.pitch2D.width = width;
  resource.desc_.res.pitch2D.height = height;
  resource.desc_.res.pitch2D.pitchInBytes = pitch_bytes;
  resource.owner_ = std::move(owner);
  return resource;
}

CUDA_TEXTURE_DESC to_native(const TextureOptions& options) {
  CUDA_TEXTURE_DESC desc;
  std::memset(&desc, 0, sizeof desc);
  for (int i = 0; i < 3; ++i) desc.addressMode[i] = options.address_mode[i];
  desc.filterMode = options.filter_mode;
  unsigned int flags = 0;
  if (options.read_mode == TextureReadMode::element_type) flags |= CU_TRSF_READ_AS_INTEGER;
  if (options.normalized_coords) flags |= CU_TRSF_NORMALIZED_COORDINATES;
  if (options.srgb) flags |= CU_TRSF_SRGB;
  if (options.disable_trilinear_optimization) flags |= CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION;
  if (options.seamless_cubemap) flags |= CU_TRSF_SEAMLESS_CUBEMAP;
  desc.flags = flags;
  desc.maxAnisotropy = options.max_anisotropy;
  desc.mipmapFilterMode = options.mipmap_filter_mode;
  desc.mipmapLevelBias = options.mipmap_level_bias;
  desc.minMipmapLevelClamp = options.min_mipmap_level_clamp;
  desc.maxMipmapLevelClamp = options.max_mipmap_level_clamp;
  for (int i = 0; i < 4; ++i) desc.borderColor[i] = options.border_color[i];
  return desc;
}

namespace {

CUtexObject create_texture(const Device& device, const TextureResource& resource, const TextureOptions& options) {
  const CUDA_TEXTURE_DESC desc = to_native(options);
  ContextGuard guard(device);
  CUtexObject handle = 0;
  detail::check(raw::cuTexObjectCreate(&handle, &resource.native(), &desc, nullptr), "cuTexObjectCreate");
  return handle;
}

CUsurfObject create_surface(const Device& device, const std::shared_ptr<const ArrayRef>& array) {
  const char* where = "cubind::SurfaceObject";
  if (array == nullptr || array->handle() == nullptr) {
    throw std::invalid_argument(std::string(where) + ": the array is null");
  }
  if (!array->descriptor().surface_load_store) {
    throw std::invalid_argument(std::string(where) +
                                ": the array must be created with is_surface_load_store=True "
                                "(CUDA_ARRAY3D_SURFACE_LDST) to be bound as a SurfaceObject");
  }
  CUDA_RESOURCE_DESC desc;
  std::memset(&desc, 0, sizeof desc);
  desc.resType = CU_RESOURCE_TYPE_ARRAY;
  desc.res.array.hArray = array->handle();
  ContextGuard guard(device);
  CUsurfObject handle = 0;
  detail::check(raw::cuSurfObjectCreate(&handle, &desc), "cuSurfObjectCreate");
  return handle;
}

}  // namespace

TextureObject::TextureObject(const Device& device, TextureResource resource, const TextureOptions& options)
    : handle_(create_texture(device, resource, options)),
      resource_(std::move(resource)),
      context_(detail::primary_context(device.ordinal())) {}

TextureObject::TextureObject(TextureObject&& other) noexcept
    : handle_(std::exchange(other.handle_, 0)),
      resource_(std::move(other.resource_)),
      context_(std::exchange(other.context_, nullptr)) {}

TextureObject& TextureObject::operator=(TextureObject&& other) noexcept {
  if (this != &other) {
    TextureObject old(std::move(*this));
    handle_ = std::exchange(other.handle_, 0);
    resource_ = std::move(other.resource_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

TextureObject::~TextureObject() {
  if (handle_ != 0) release_in(context_, [this] { return raw::cuTexObjectDestroy(handle_); });
}

SurfaceObject::SurfaceObject(const Device& device, std::shared_ptr<const ArrayRef> array)
    : handle_(create_surface(device, array)),
      array_(std::move(array)),
      context_(detail::primary_context(device.ordinal())) {}

SurfaceObject::SurfaceObject(SurfaceObject&& other) noexcept
    : handle_(std::exchange(other.handle_, 0)),
      array_(std::move(other.array_)),
      context_(std::exchange(other.context_, nullptr)) {}

SurfaceObject& SurfaceObject::operator=(SurfaceObject&& other) noexcept {
  if (this != &other) {
    SurfaceObject old(std::move(*this));
    handle_ = std::exchange(other.handle_, 0);
    array_ = std::move(other.array_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

SurfaceObject::~SurfaceObject() {
  if (handle_ != 0) release_in(context_, [this] { return raw::cuSurfObjectDestroy(handle_); });
}

}  // namespace cubind

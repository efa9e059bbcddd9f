// Texture and surface memory. A CUDA array is storage laid out by the
// hardware for 2-D and 3-D locality: it has no address, kernels reach it only
// through a texture object (sampled reads) or a surface object (typed loads
// and stores), and the host fills and reads it with whole-array copies.
//
// ArrayRef is a view of an array owned elsewhere; OpaqueArray owns one
// (cuArray3DCreate); MipmappedArray owns a chain of levels, each an ArrayRef.
// TextureObject and SurfaceObject own their handles and hold a share of the
// array they read, so an array outlives every object bound to it.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <memory>

namespace cubind {

class Device;
class StreamRef;

// Bytes of one channel of `format`: 1, 2 or 4, for the eight formats of
// 8-, 16- and 32-bit integers (signed and unsigned), half and float.
// @throws std::invalid_argument for any other format.
std::size_t array_format_bytes(CUarray_format format);

// The shape and element of an array. A 1-D array has height 0 and depth 0, a
// 2-D array depth 0, as cuArray3DCreate takes them.
struct ArrayDescriptor {
  std::size_t width = 0;   // in elements
  std::size_t height = 0;  // in rows; 0 for a 1-D array
  std::size_t depth = 0;   // 0 for a 1-D or 2-D array
  CUarray_format format = CU_AD_FORMAT_FLOAT;
  unsigned int num_channels = 1;  // 1, 2 or 4
  // CUDA_ARRAY3D_SURFACE_LDST: the array may back a SurfaceObject.
  bool surface_load_store = false;

  // 1, 2 or 3.
  int rank() const noexcept { return depth > 0 ? 3 : height > 0 ? 2 : 1; }
  // Bytes of one element: the format's bytes times the channels.
  std::size_t element_bytes() const { return array_format_bytes(format) * num_channels; }
  // Bytes of the whole array, every row packed: what a copy moves.
  std::size_t size_bytes() const;
};

// The driver's descriptor of `descriptor`, checked first: width at least 1, a
// depth only with a height, 1, 2 or 4 channels, a known format.
// @throws std::invalid_argument naming the field and its value.
CUDA_ARRAY3D_DESCRIPTOR to_native(const ArrayDescriptor& descriptor);
// The other way, for an array made elsewhere (cuArray3DGetDescriptor).
ArrayDescriptor from_native(const CUDA_ARRAY3D_DESCRIPTOR& descriptor);

class ArrayRef {
 public:
  // A view of an array owned elsewhere, described by `descriptor`.
  ArrayRef(CUarray handle, const ArrayDescriptor& descriptor) noexcept : handle_(handle), descriptor_(descriptor) {}
  ArrayRef(int, const ArrayDescriptor&) = delete;
  ArrayRef(std::nullptr_t, const ArrayDescriptor&) = delete;

  // A view of an array made elsewhere (a graphics resource's), described by
  // the driver (cuArray3DGetDescriptor). @throws std::invalid_argument for a null handle, CudaError
  static ArrayRef from_native_handle(CUarray handle);

  CUarray handle() const noexcept { return handle_; }
  const ArrayDescriptor& descriptor() const noexcept { return descriptor_; }

  // Whole-array copies (cuMemcpy3DAsync), ordered on `stream` and made in its
  // context. `bytes` is the size of the other side, which must hold
  // descriptor().size_bytes(): rows packed, one after another. The host
  // variants take host memory the driver need not know (pageable memory
  // makes the copy synchronous); the others an address CUDA knows (device,
  // pinned or managed memory), read through unified addressing.
  // @throws std::logic_error for a null array or the StreamRef of a null
  //         Stream, std::invalid_argument when `bytes` is too small, CudaError
  void copy_from_host(const void* src, std::size_t bytes, StreamRef stream) const;
  void copy_from(CUdeviceptr src, std::size_t bytes, StreamRef stream) const;
  void copy_to_host(void* dst, std::size_t bytes, StreamRef stream) const;
  void copy_to(CUdeviceptr dst, std::size_t bytes, StreamRef stream) const;

 protected:
  // Names the class and method in the std::logic_error a null array raises.
  void require_array(const char* where) const;

  CUarray handle_;
  ArrayDescriptor descriptor_;
};

// An owned CUDA array.
class OpaqueArray : public ArrayRef {
 public:
  // cuArray3DCreate in the device's primary context.
  // @throws std::invalid_argument for a descriptor to_native refuses, CudaError
  OpaqueArray(const Device& device, const ArrayDescriptor& descriptor);

  // Takes ownership of an array made elsewhere; ~OpaqueArray destroys it.
  // @throws std::invalid_argument for a null handle, CudaError
  static OpaqueArray from_native_handle(CUarray handle);

  OpaqueArray(OpaqueArray&& other) noexcept;
  OpaqueArray& operator=(OpaqueArray&& other) noexcept;
  OpaqueArray(const OpaqueArray&) = delete;
  OpaqueArray& operator=(const OpaqueArray&) = delete;
  // cuArrayDestroy, in the context it was made in; errors, a driver shut
  // down included, are ignored.
  ~OpaqueArray();

  // Gives up ownership; the OpaqueArray becomes null.
  // @throws std::logic_error when already null.
  CUarray release();

 private:
  OpaqueArray(CUarray handle, const ArrayDescriptor& descriptor, CUcontext context) noexcept
      : ArrayRef(handle, descriptor), context_(context) {}

  CUcontext context_;  // current while it is destroyed; null when adopted with none current
};

// An owned mipmapped array: `num_levels` arrays, each half the size of the
// one before in every dimension (at least 1), level 0 of `descriptor`'s size.
class MipmappedArray {
 public:
  // cuMipmappedArrayCreate in the device's primary context.
  // @throws std::invalid_argument for a descriptor to_native refuses or 0
  //         levels, CudaError (more levels than the largest extent allows)
  MipmappedArray(const Device& device, const ArrayDescriptor& descriptor, unsigned int num_levels);

  MipmappedArray(MipmappedArray&& other) noexcept;
  MipmappedArray& operator=(MipmappedArray&& other) noexcept;
  MipmappedArray(const MipmappedArray&) = delete;
  MipmappedArray& operator=(const MipmappedArray&) = delete;
  // cuMipmappedArrayDestroy (every level with it), in its context; errors are ignored.
  ~MipmappedArray();

  CUmipmappedArray handle() const noexcept { return handle_; }
  // Level 0's descriptor.
  const ArrayDescriptor& descriptor() const noexcept { return descriptor_; }
  unsigned int num_levels() const noexcept { return num_levels_; }

  // A view of one level (cuMipmappedArrayGetLevel), valid while this array lives.
  // @throws std::logic_error for a null array, std::out_of_range for a level
  //         not below num_levels(), CudaError
  ArrayRef level(unsigned int level) const;
  // The same view, holding a share of `mipmap`: the level keeps the whole
  // mipmapped array alive, however long the caller's share lasts.
  static std::shared_ptr<const ArrayRef> level(std::shared_ptr<const MipmappedArray> mipmap, unsigned int level);

 private:
  CUmipmappedArray handle_;
  ArrayDescriptor descriptor_;
  unsigned int num_levels_;
  CUcontext context_;  // the device's primary context: current for level() and the destructor
};

// What a texture object reads: an array, a mipmapped array, or linear memory
// as a typed 1-D range or a pitched 2-D image. It holds a share of what it
// reads (the arrays themselves, or any owner the caller passes with a
// pointer), which every TextureObject made from it keeps.
class TextureResource {
 public:
  // @throws std::invalid_argument for a null array.
  static TextureResource array(std::shared_ptr<const ArrayRef> array);
  static TextureResource mipmapped_array(std::shared_ptr<const MipmappedArray> mipmap);
  // `bytes` of `ptr`, a whole number of elements of at least one.
  // @throws std::invalid_argument naming the value that is wrong.
  static TextureResource linear(CUdeviceptr ptr, CUarray_format format, unsigned int num_channels,
                                std::size_t bytes, std::shared_ptr<const void> owner = nullptr);
  // `height` rows of `width` elements, `pitch_bytes` apart.
  // @throws std::invalid_argument for an extent of 0 or a pitch below a row.
  static TextureResource pitch2d(CUdeviceptr ptr, CUarray_format format, unsigned int num_channels,
                                 std::size_t width, std::size_t height, std::size_t pitch_bytes,
                                 std::shared_ptr<const void> owner = nullptr);

  CUresourcetype type() const noexcept { return desc_.resType; }
  const CUDA_RESOURCE_DESC& native() const noexcept { return desc_; }
  // The array of an array resource; null for the other kinds.
  const std::shared_ptr<const ArrayRef>& array() const noexcept { return array_; }

 private:
  TextureResource() noexcept;

  CUDA_RESOURCE_DESC desc_;
  std::shared_ptr<const ArrayRef> array_;
  std::shared_ptr<const void> owner_;
};

// How sampled integer texels reach the kernel: as they are, or promoted to
// floats in [0, 1] (unsigned) or [-1, 1] (signed). Float texels are unchanged.
enum class TextureReadMode { element_type, normalized_float };

// The sampling state of a texture object: CUDA_TEXTURE_DESC, by name.
struct TextureOptions {
  // Per dimension (x, y, z): what a coordinate outside the texture reads.
  std::array<CUaddress_mode, 3> address_mode{CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_CLAMP,
                                             CU_TR_ADDRESS_MODE_CLAMP};
  CUfilter_mode filter_mode = CU_TR_FILTER_MODE_POINT;
  TextureReadMode read_mode = TextureReadMode::element_type;
  bool normalized_coords = false;  // coordinates in [0, 1) rather than in texels
  bool srgb = false;
  bool disable_trilinear_optimization = false;
  bool seamless_cubemap = false;
  unsigned int max_anisotropy = 0;
  CUfilter_mode mipmap_filter_mode = CU_TR_FILTER_MODE_POINT;
  float mipmap_level_bias = 0.0f;
  float min_mipmap_level_clamp = 0.0f;
  float max_mipmap_level_clamp = 0.0f;
  // What a coordinate outside reads with CU_TR_ADDRESS_MODE_BORDER.
  std::array<float, 4> border_color{};
};

// The driver's descriptor: the flags CU_TRSF_READ_AS_INTEGER (element_type),
// CU_TRSF_NORMALIZED_COORDINATES, CU_TRSF_SRGB,
// CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION and CU_TRSF_SEAMLESS_CUBEMAP, and
// every other field as it is.
CUDA_TEXTURE_DESC to_native(const TextureOptions& options);

// An owned texture object (cuTexObjectCreate), passed to kernels as its
// 64-bit handle (cudaTextureObject_t).
class TextureObject {
 public:
  // In the device's primary context. @throws CudaError
  TextureObject(const Device& device, TextureResource resource, const TextureOptions& options = {});

  TextureObject(TextureObject&& other) noexcept;
  TextureObject& operator=(TextureObject&& other) noexcept;
  TextureObject(const TextureObject&) = delete;
  TextureObject& operator=(const TextureObject&) = delete;
  // cuTexObjectDestroy, then the share of the resource goes; errors are ignored.
  ~TextureObject();

  // 0 once moved from.
  CUtexObject handle() const noexcept { return handle_; }
  const TextureResource& resource() const noexcept { return resource_; }

 private:
  CUtexObject handle_;
  TextureResource resource_;
  CUcontext context_;  // current while it is destroyed
};

// An owned surface object (cuSurfObjectCreate) over one array: kernels load
// and store its elements by integer coordinates (surf2Dread, surf2Dwrite).
class SurfaceObject {
 public:
  // In the device's primary context.
  // @throws std::invalid_argument for a null array or one made without
  //         surface_load_store, CudaError
  SurfaceObject(const Device& device, std::shared_ptr<const ArrayRef> array);

  SurfaceObject(SurfaceObject&& other) noexcept;
  SurfaceObject& operator=(SurfaceObject&& other) noexcept;
  SurfaceObject(const SurfaceObject&) = delete;
  SurfaceObject& operator=(const SurfaceObject&) = delete;
  // cuSurfObjectDestroy, then the share of the array goes; errors are ignored.
  ~SurfaceObject();

  // 0 once moved from.
  CUsurfObject handle() const noexcept { return handle_; }
  const std::shared_ptr<const ArrayRef>& array() const noexcept { return array_; }

 private:
  CUsurfObject handle_;
  std::shared_ptr<const ArrayRef> array_;
  CUcontext context_;  // current while it is destroyed
};

}  // namespace cubind

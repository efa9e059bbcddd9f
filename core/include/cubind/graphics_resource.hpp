// Graphics interop with OpenGL: a GL buffer object, texture or renderbuffer
// registered for CUDA (cuGraphicsGLRegisterBuffer / cuGraphicsGLRegisterImage),
// owned by a GraphicsResource that unregisters it. While mapped
// (cuGraphicsMapResources) CUDA may use its memory, through a device pointer
// (buffers) or a CUDA array (images), and GL must not; unmapping hands it back.
//
// Registration needs both a current CUDA context and a current GL context on
// the calling thread, of the same GPU. The GL object must outlive the
// registration.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cubind/buffer.hpp"
#include "cubind/stream.hpp"

namespace cubind {

// CU_GRAPHICS_REGISTER_FLAGS_*, combined with |.
struct GraphicsRegisterFlags {
  static constexpr unsigned int none = CU_GRAPHICS_REGISTER_FLAGS_NONE;
  static constexpr unsigned int read_only = CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY;
  static constexpr unsigned int write_discard = CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD;
  static constexpr unsigned int surface_load_store = CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST;
  static constexpr unsigned int texture_gather = CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER;
  static constexpr unsigned int all = read_only | write_discard | surface_load_store | texture_gather;
};

// CU_GRAPHICS_MAP_RESOURCE_FLAGS_*: how CUDA will use the next mappings (one value).
enum class GraphicsMapFlags : unsigned int {
  none = CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE,
  read_only = CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY,
  write_discard = CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD,
};

// The memory of a mapped buffer object.
struct MappedPointer {
  CUdeviceptr pointer;
  std::size_t size;
};

namespace detail {
struct GraphicsState;
}

class GraphicsResource {
 public:
  // A null resource, as one moved from; it can only be assigned or destroyed.
  GraphicsResource() noexcept = default;

  // Registers GL buffer object `gl_buffer` (cuGraphicsGLRegisterBuffer) in the
  // current CUDA context. @throws std::invalid_argument for unknown flags,
  // CudaError (e.g. CUDA_ERROR_INVALID_CONTEXT without a current context,
  // CUDA_ERROR_INVALID_VALUE for a name GL does not know)
  static GraphicsResource register_gl_buffer(unsigned int gl_buffer,
                                             unsigned int flags = GraphicsRegisterFlags::none);
  // Registers GL texture or renderbuffer `image` of `target` (GL_TEXTURE_2D,
  // GL_RENDERBUFFER, ...) (cuGraphicsGLRegisterImage).
  static GraphicsResource register_gl_image(unsigned int image, unsigned int target,
                                            unsigned int flags = GraphicsRegisterFlags::none);
  // Takes ownership of a resource registered elsewhere (not mapped).
  // @throws std::invalid_argument for a null handle.
  static GraphicsResource from_native_handle(CUgraphicsResource handle);

  GraphicsResource(GraphicsResource&& other) noexcept = default;
  // Closes the resource held before, as the destructor does.
  GraphicsResource& operator=(GraphicsResource&& other) noexcept;
  GraphicsResource(const GraphicsResource&) = delete;
  GraphicsResource& operator=(const GraphicsResource&) = delete;
  // close(); errors, a driver already shut down included, are ignored.
  ~GraphicsResource();

  // Null once moved from, released or closed.
  CUgraphicsResource handle() const noexcept;
  explicit operator bool() const noexcept { return handle() != nullptr; }
  bool is_mapped() const noexcept;

  // How the next mappings will be used (cuGraphicsResourceSetMapFlags).
  // @throws std::logic_error when null or mapped, CudaError
  void set_map_flags(GraphicsMapFlags flags) const;

  // Maps the resource for CUDA, ordered on `stream` (cuGraphicsMapResources):
  // work submitted to it afterwards sees the GL object's contents.
  // @throws std::logic_error when null or already mapped, CudaError
  void map(StreamRef stream);
  // Maps a registered buffer object and returns a Buffer over its memory;
  // closing that Buffer (or destroying it) unmaps the resource, on the
  // Buffer's stream (`stream`, unless close(other) says otherwise). The
  // Buffer has no resource of its own to allocate from: its memory is GL's.
  // @throws std::logic_error when null or already mapped, CudaError
  // (CUDA_ERROR_NOT_MAPPED_AS_POINTER for an image: it is unmapped again)
  Buffer map_buffer(StreamRef stream);

  // While mapped: the memory of a buffer object (cuGraphicsResourceGetMappedPointer).
  // @throws std::logic_error when not mapped, CudaError for an image
  MappedPointer mapped_pointer() const;
  // While mapped: the CUDA array of one layer (array_index: a cube face or an
  // array layer) and mip level of an image (cuGraphicsSubResourceGetMappedArray).
  // The array is GL's: valid until unmapped, never destroyed by CUDA.
  // @throws std::logic_error when not mapped, CudaError for a buffer object
  CUarray mapped_array(unsigned int array_index = 0, unsigned int mip_level = 0) const;
  // While mapped: every level of a mipmapped texture
  // (cuGraphicsResourceGetMappedMipmappedArray).
  CUmipmappedArray mapped_mipmapped_array() const;

  // Hands the resource back to GL, ordered on `stream`, or on the stream it
  // was mapped on (cuGraphicsUnmapResources). A Buffer from map_buffer must
  // no longer be used; closing it later does nothing more.
  // @throws std::logic_error when null or not mapped, CudaError
  void unmap(StreamRef stream);
  void unmap();

  // Unmaps (on the stream it was mapped on) if mapped, then unregisters
  // (cuGraphicsUnregisterResource); the resource becomes null. Closing a null
  // resource does nothing.
  // @throws CudaError
  void close();
  // Gives up ownership (the resource must not be mapped); it becomes null.
  // @throws std::logic_error when null or mapped
  CUgraphicsResource release();

 private:
  explicit GraphicsResource(CUgraphicsResource handle);
  void require(const char* where) const;

  std::shared_ptr<detail::GraphicsState> state_;
};

}  // namespace cubind

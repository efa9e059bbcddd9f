#include "cubind/graphics_resource.hpp"

#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace detail {

// What a GraphicsResource and the Buffers it mapped share: a Buffer may be
// closed after the resource was unmapped, mapped again, or closed, and must
// then leave the resource alone.
struct GraphicsState {
  std::mutex mutex;
  CUgraphicsResource handle = nullptr;
  CUcontext context = nullptr;  // current at registration; unregistered in it
  bool mapped = false;
  CUstream stream = nullptr;    // the stream of the current mapping
  std::uint64_t mapping = 0;    // counts the mappings, so that a Buffer knows its own
};

namespace {

// Unmaps on `stream`, in the stream's context. Called with the state's mutex held.
void unmap_locked(GraphicsState& state, StreamRef stream) {
  StreamContextGuard guard(stream);
  check(raw::cuGraphicsUnmapResources(1, &state.handle, stream.handle()), "cuGraphicsUnmapResources");
  state.mapped = false;
  state.stream = nullptr;
}

// The resource a Buffer over a mapped buffer object holds: it allocates
// nothing, and taking the memory back unmaps the resource, if the mapping it
// was made for is still the current one.
class GraphicsMapping final : public MemoryResource {
 public:
  GraphicsMapping(std::shared_ptr<GraphicsState> state, std::uint64_t mapping, int device) noexcept
      : state_(std::move(state)), mapping_(mapping), device_(device) {}

  void* allocate(std::size_t, StreamRef) override {
    throw std::logic_error(
        "cubind::GraphicsResource: the memory of a mapped graphics resource belongs to OpenGL; it cannot allocate");
  }
  void deallocate(void*, std::size_t, StreamRef stream) override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->handle == nullptr || !state_->mapped || state_->mapping != mapping_) return;
    unmap_locked(*state_, stream);
  }
  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return false; }
  int device_id() const noexcept override { return device_; }

 private:
  std::shared_ptr<GraphicsState> state_;
  std::uint64_t mapping_;
  int device_;
};

void check_register_flags(unsigned int flags, const char* where) {
  if ((flags & ~GraphicsRegisterFlags::all) != 0) {
    throw std::invalid_argument(std::string(where) + ": flags is " + std::to_string(flags) +
                                "; it must combine CU_GRAPHICS_REGISTER_FLAGS_* (at most " +
                                std::to_string(GraphicsRegisterFlags::all) + ")");
  }
}

CUcontext current_context() {
  CUcontext context = nullptr;
  check(raw::cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  return context;
}

}  // namespace
}  // namespace detail

GraphicsResource::GraphicsResource(CUgraphicsResource handle) : state_(std::make_shared<detail::GraphicsState>()) {
  state_->handle = handle;
}

GraphicsResource GraphicsResource::register_gl_buffer(unsigned int gl_buffer, unsigned int flags) {
  detail::check_register_flags(flags, "cubind::GraphicsResource::register_gl_buffer");
  detail::init_driver();
  CUgraphicsResource handle = nullptr;
  detail::check(raw::cuGraphicsGLRegisterBuffer(&handle, gl_buffer, flags), "cuGraphicsGLRegisterBuffer");
  GraphicsResource resource(handle);
  resource.state_->context = detail::current_context();
  return resource;
}

GraphicsResource GraphicsResource::register_gl_image(unsigned int image, unsigned int target, unsigned int flags) {
  detail::check_register_flags(flags, "cubind::GraphicsResource::register_gl_image");
  detail::init_driver();
  CUgraphicsResource handle = nullptr;
  detail::check(raw::cuGraphicsGLRegisterImage(&handle, image, target, flags), "cuGraphicsGLRegisterImage");
  GraphicsResource resource(handle);
  resource.state_->context = detail::current_context();
  return resource;
}

GraphicsResource GraphicsResource::from_native_handle(CUgraphicsResource handle) {
  if (handle == nullptr) {
    throw std::invalid_argument("cubind::GraphicsResource::from_native_handle: the handle is null");
  }
  return GraphicsResource(handle);
}

GraphicsResource& GraphicsResource::operator=(GraphicsResource&& other) noexcept {
  if (this != &other) {
    detail::release_quietly([this] {
      close();
      return 0;
    });
    state_ = std::move(other.state_);
  }
  return *this;
}

GraphicsResource::~GraphicsResource() {
  if (state_ && state_->handle != nullptr) {
    detail::release_quietly([this] {
      close();
      return 0;
    });
  }
}

CUgraphicsResource GraphicsResource::handle() const noexcept { return state_ ? state_->handle : nullptr; }

bool GraphicsResource::is_mapped() const noexcept {
  if (!state_) return false;
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->mapped;
}

void GraphicsResource::require(const char* where) const {
  if (!state_ || state_->handle == nullptr) detail::throw_null(where, "GraphicsResource");
}

void GraphicsResource::set_map_flags(GraphicsMapFlags flags) const {
  constexpr const char* where = "cubind::GraphicsResource::set_map_flags";
  require(where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->mapped) throw std::logic_error(std::string(where) + ": the resource is mapped; unmap it first");
  detail::check(raw::cuGraphicsResourceSetMapFlags(state_->handle, static_cast<unsigned int>(flags)),
                "cuGraphicsResourceSetMapFlags");
}

void GraphicsResource::map(StreamRef stream) {
  constexpr const char* where = "cubind::GraphicsResource::map";
  require(where);
  detail::require_stream(stream, where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->mapped) throw std::logic_error(std::string(where) + ": the resource is already mapped");
  StreamContextGuard guard(stream);
  detail::check(raw::cuGraphicsMapResources(1, &state_->handle, stream.handle()), "cuGraphicsMapResources");
  state_->mapped = true;
  state_->stream = stream.handle();
  ++state_->mapping;
}

Buffer GraphicsResource::map_buffer(StreamRef stream) {
  map(stream);
  std::uint64_t mapping = 0;
  MappedPointer memory{};
  try {
    memory = mapped_pointer();
    std::lock_guard<std::mutex> lock(state_->mutex);
    mapping = state_->mapping;
  } catch (...) {
    // An image has no pointer: leave it as it was, unmapped.
    detail::release_quietly([&] {
      unmap(stream);
      return 0;
    });
    throw;
  }
  const std::optional<Device> device = Device::current_if_any();
  auto resource =
      std::make_shared<detail::GraphicsMapping>(state_, mapping, device ? device->ordinal() : -1);
  return Buffer::from_native_handle(reinterpret_cast<void*>(static_cast<std::uintptr_t>(memory.pointer)),
                                    memory.size, std::move(resource), stream);
}

MappedPointer GraphicsResource::mapped_pointer() const {
  constexpr const char* where = "cubind::GraphicsResource::mapped_pointer";
  require(where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->mapped) throw std::logic_error(std::string(where) + ": the resource is not mapped; map it first");
  MappedPointer memory{};
  detail::check(raw::cuGraphicsResourceGetMappedPointer(&memory.pointer, &memory.size, state_->handle),
                "cuGraphicsResourceGetMappedPointer");
  return memory;
}

CUarray GraphicsResource::mapped_array(unsigned int array_index, unsigned int mip_level) const {
  constexpr const char* where = "cubind::GraphicsResource::mapped_array";
  require(where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->mapped) throw std::logic_error(std::string(where) + ": the resource is not mapped; map it first");
  CUarray array = nullptr;
  detail::check(raw::cuGraphicsSubResourceGetMappedArray(&array, state_->handle, array_index, mip_level),
                "cuGraphicsSubResourceGetMappedArray");
  return array;
}

CUmipmappedArray GraphicsResource::mapped_mipmapped_array() const {
  constexpr const char* where = "cubind::GraphicsResource::mapped_mipmapped_array";
  require(where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->mapped) throw std::logic_error(std::string(where) + ": the resource is not mapped; map it first");
  CUmipmappedArray array = nullptr;
  detail::check(raw::cuGraphicsResourceGetMappedMipmappedArray(&array, state_->handle),
                "cuGraphicsResourceGetMappedMipmappedArray");
  return array;
}

void GraphicsResource::unmap(StreamRef stream) {
  constexpr const char* where = "cubind::GraphicsResource::unmap";
  require(where);
  detail::require_stream(stream, where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->mapped) throw std::logic_error(std::string(where) + ": the resource is not mapped");
  detail::unmap_locked(*state_, stream);
}

void GraphicsResource::unmap() {
  require("cubind::GraphicsResource::unmap");
  CUstream stream = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (!state_->mapped) throw std::logic_error("cubind::GraphicsResource::unmap: the resource is not mapped");
    stream = state_->stream;
  }
  unmap(StreamRef(stream));
}

void GraphicsResource::close() {
  if (!state_ || state_->handle == nullptr) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->mapped) detail::unmap_locked(*state_, StreamRef(state_->stream));
  if (state_->context != nullptr) {
    ContextGuard guard(Context::from_native_handle(state_->context));
    detail::check(raw::cuGraphicsUnregisterResource(state_->handle), "cuGraphicsUnregisterResource");
  } else {
    detail::check(raw::cuGraphicsUnregisterResource(state_->handle), "cuGraphicsUnregisterResource");
  }
  state_->handle = nullptr;
}

CUgraphicsResource GraphicsResource::release() {
  constexpr const char* where = "cubind::GraphicsResource::release";
  require(where);
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->mapped) throw std::logic_error(std::string(where) + ": the resource is mapped; unmap it first");
  return std::exchange(state_->handle, nullptr);
}

}  // namespace cubind

// Glue between cubind.core's Cython and the C++ core, for what Cython cannot
// hold, since it has no default constructor: owners the core returns by value
// or constructs, moved to the heap for a Python object to hold, and a Device
// reached by ordinal (or a TimedEvent pair's duration) asked for plain values.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/checkpoint.hpp"
#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/device_resources.hpp"
#include "cubind/error.hpp"
#include "cubind/graph.hpp"
#include "cubind/graph_definition.hpp"
#include "cubind/graph_memory_resource.hpp"
#include "cubind/event.hpp"
#include "cubind/graphics_resource.hpp"
#include "cubind/green_context.hpp"
#include "cubind/kernel.hpp"
#include "cubind/managed_memory.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/stream.hpp"
#include "cubind/texture.hpp"
#include "cubind/virtual_memory.hpp"

namespace cubind_core {

inline int device_count() { return cubind::Device::count(); }
// cubind::Device::get asks the driver for the device count and the device's
// handle at every call; neither changes in a process, so each ordinal's
// Device is kept after its first get, and set_current, create_stream,
// create_event and the rest make no driver call to name their device.
inline cubind::Device device(int ordinal) {
  constexpr int kept = 64;
  static std::atomic<bool> ready[kept];
  static std::optional<cubind::Device> devices[kept];
  if (ordinal >= 0 && ordinal < kept && ready[ordinal].load(std::memory_order_acquire)) return *devices[ordinal];
  cubind::Device found = cubind::Device::get(ordinal);  // a bad ordinal throws, as always
  if (ordinal < kept) {
    static std::mutex guard;
    std::lock_guard<std::mutex> lock(guard);
    if (!ready[ordinal].load(std::memory_order_relaxed)) {
      devices[ordinal].emplace(found);
      ready[ordinal].store(true, std::memory_order_release);
    }
  }
  return found;
}
inline int device_attribute(int ordinal, CUdevice_attribute attribute) { return device(ordinal).attribute(attribute); }
inline std::string device_name(int ordinal) { return device(ordinal).name(); }
inline std::string device_uuid(int ordinal) { return device(ordinal).uuid(); }
inline std::string device_pci_bus_id(int ordinal) { return device(ordinal).pci_bus_id(); }
inline cubind::ComputeCapability device_compute_capability(int ordinal) { return device(ordinal).compute_capability(); }
inline CUcontext device_primary_context(int ordinal) { return device(ordinal).primary_context().handle(); }
inline void device_set_current(int ordinal) { device(ordinal).set_current(); }
inline void device_sync(int ordinal) { device(ordinal).sync(); }
inline bool device_can_access_peer(int ordinal, int peer) { return device(ordinal).can_access_peer(device(peer)); }
inline void device_peer_access(int ordinal, int peer, bool enable) {
  if (enable) {
    device(ordinal).enable_peer_access(device(peer));
  } else {
    device(ordinal).disable_peer_access(device(peer));
  }
}

inline cubind::DeviceMemoryResource* device_pool_default(int ordinal) {
  return new cubind::DeviceMemoryResource(device(ordinal));
}
inline cubind::DeviceMemoryResource* device_pool_new(int ordinal, const cubind::DeviceMemoryResourceOptions& options) {
  return new cubind::DeviceMemoryResource(device(ordinal), options);
}
// change: 1 grants `peer` access to the pool, -1 revokes it, 0 asks.
inline bool pool_peer_access(cubind::DeviceMemoryResource* pool, int peer, int change) {
  if (change > 0) {
    pool->grant_peer_access(device(peer));
  } else if (change < 0) {
    pool->revoke_peer_access(device(peer));
  } else {
    return pool->is_accessible_from(device(peer));
  }
  return change > 0;
}
inline cubind::MemoryResource* legacy_pinned_new(int ordinal) {
  return new cubind::LegacyPinnedMemoryResource(device(ordinal));
}
inline cubind::PinnedMemoryResource* pinned_pool_current(int ordinal) {
  return new cubind::PinnedMemoryResource(device(ordinal));
}
inline cubind::PinnedMemoryResource* pinned_pool_new(int ordinal, const cubind::PinnedMemoryResourceOptions& options) {
  return new cubind::PinnedMemoryResource(device(ordinal), options);
}

inline cubind::ManagedMemoryResource* managed_pool_new(int ordinal,
                                                      const cubind::ManagedMemoryResourceOptions& options) {
  return new cubind::ManagedMemoryResource(device(ordinal), options);
}
inline std::shared_ptr<cubind::ManagedMemoryResource> managed_pool_current(int ordinal) {
  return cubind::ManagedMemoryResource::current_pool(device(ordinal), CUmemLocation{});
}
inline cubind::VirtualMemoryResource* virtual_memory_new(int ordinal,
                                                        const cubind::VirtualMemoryResourceOptions& options) {
  return new cubind::VirtualMemoryResource(device(ordinal), options);
}
// `into` (a null Buffer) over memory `resource` already allocated (a VirtualMemoryResource's grown range).
inline void buffer_adopt(cubind::Buffer& into, std::uintptr_t ptr, std::size_t size,
                         const std::shared_ptr<cubind::MemoryResource>& resource, CUstream stream) {
  into = cubind::Buffer::from_native_handle(reinterpret_cast<void*>(ptr), size, resource, cubind::StreamRef(stream));
}

// OpenGL interop: a registered resource on the heap, and the Buffer over a
// mapped buffer object, whose close unmaps it.
inline cubind::GraphicsResource* graphics_register_gl_buffer(unsigned int buffer, unsigned int flags) {
  return new cubind::GraphicsResource(cubind::GraphicsResource::register_gl_buffer(buffer, flags));
}
inline cubind::GraphicsResource* graphics_register_gl_image(unsigned int image, unsigned int target,
                                                            unsigned int flags) {
  return new cubind::GraphicsResource(cubind::GraphicsResource::register_gl_image(image, target, flags));
}
inline void graphics_map_buffer(cubind::Buffer& into, cubind::GraphicsResource& resource, CUstream stream) {
  into = resource.map_buffer(cubind::StreamRef(stream));
}

// Checkpointing: GPU UUIDs travel as 16 bytes each. `pairs` holds a restore's
// remapping, each pair's checkpointed UUID then the one to restore onto.
inline std::string checkpoint_uuid_bytes(const std::string& text) {
  const CUuuid id = cubind::checkpoint::parse_uuid(text);
  return std::string(id.bytes, sizeof id.bytes);
}
inline void checkpoint_restore(const cubind::checkpoint::Process& process, const std::string& pairs) {
  std::vector<cubind::checkpoint::GpuPair> mapping(pairs.size() / 32);
  for (std::size_t i = 0; i < mapping.size(); ++i) {
    std::memcpy(mapping[i].checkpointed.bytes, pairs.data() + 32 * i, 16);
    std::memcpy(mapping[i].restore_onto.bytes, pairs.data() + 32 * i + 16, 16);
  }
  process.restore(mapping);
}

// IPC. A descriptor the caller owns is lent, not taken: the IpcPoolHandle
// gives it back before it would close it.
template <typename Pool>
std::shared_ptr<cubind::MemoryPool> pool_import(int ordinal, int fd) {
  cubind::IpcPoolHandle handle = cubind::IpcPoolHandle::from_native_handle(fd);
  try {
    std::shared_ptr<cubind::MemoryPool> pool = Pool::from_ipc_handle(device(ordinal), handle);
    handle.release();
    return pool;
  } catch (...) {
    handle.release();
    throw;
  }
}
inline std::shared_ptr<cubind::MemoryPool> device_pool_import(int ordinal, int fd) {
  return pool_import<cubind::DeviceMemoryResource>(ordinal, fd);
}
inline std::shared_ptr<cubind::MemoryPool> pinned_pool_import(int ordinal, int fd) {
  return pool_import<cubind::PinnedMemoryResource>(ordinal, fd);
}
// A new descriptor of the pool, owned by the caller.
inline int pool_export_fd(const cubind::MemoryPool& pool) { return pool.export_ipc_handle().release(); }

constexpr std::size_t kIpcPayloadBytes = sizeof(CUmemPoolPtrExportData);
static_assert(sizeof(CUipcEventHandle) == kIpcPayloadBytes, "both IPC payloads are 64 bytes");
// `out` receives kIpcPayloadBytes.
inline void buffer_export_ipc(const cubind::Buffer& buffer, char* out) {
  const cubind::IpcBufferDescriptor descriptor = buffer.export_ipc();
  std::memcpy(out, &descriptor.data, kIpcPayloadBytes);
}
inline void buffer_import_ipc(cubind::Buffer& into, const std::shared_ptr<cubind::MemoryPool>& pool,
                              const char* payload, std::size_t size, CUstream stream) {
  cubind::IpcBufferDescriptor descriptor{};
  std::memcpy(&descriptor.data, payload, kIpcPayloadBytes);
  descriptor.size = size;
  into = cubind::Buffer::from_ipc(pool, descriptor, cubind::StreamRef(stream));
}
inline void event_export_ipc(const cubind::Event& event, char* out) {
  const CUipcEventHandle handle = event.ipc_handle();
  std::memcpy(out, &handle, kIpcPayloadBytes);
}
inline cubind::Event* event_import_ipc(int ordinal, const char* payload) {
  CUipcEventHandle handle{};
  std::memcpy(&handle, payload, kIpcPayloadBytes);
  return new cubind::Event(cubind::Event::from_ipc_handle(device(ordinal), handle));
}
inline int kernel_attribute(const cubind::Kernel& kernel, CUfunction_attribute attribute, int ordinal) {
  return kernel.attribute(attribute, device(ordinal));
}

// A new stream built in place, in the slot a Python Stream holds it in.
inline void stream_make(std::optional<cubind::Stream>& slot, int ordinal, const cubind::StreamOptions& options) {
  slot.emplace(device(ordinal), options);
}

// Device resources and green contexts.
inline cubind::SmResource* sm_resource_of_device(int ordinal) {
  return new cubind::SmResource(cubind::SmResource::of(device(ordinal)));
}
inline cubind::SmResource* sm_resource_of_context(CUcontext context) {
  return new cubind::SmResource(cubind::SmResource::of(cubind::Context::from_native_handle(context)));
}
inline cubind::SmResource* sm_resource_of_green(const cubind::GreenContext& green) {
  return new cubind::SmResource(green.sm_resource());
}
inline cubind::SmResource* sm_resource_copy(const cubind::SmResource& resource) {
  return new cubind::SmResource(resource);
}
inline std::uintptr_t sm_resource_address(const cubind::SmResource& resource) {
  return reinterpret_cast<std::uintptr_t>(&resource.native());
}
// The groups of the split, then its remainder as the last element.
inline std::vector<cubind::SmResource> sm_resource_split(const cubind::SmResource& resource,
                                                         const cubind::SmSplitOptions& options) {
  cubind::SmSplit split = resource.split(options);
  split.groups.push_back(split.remainder);
  return std::move(split.groups);
}
inline cubind::GreenContext* green_context_new(int ordinal, const std::vector<cubind::SmResource*>& resources) {
  std::vector<cubind::SmResource> copies;
  copies.reserve(resources.size());
  for (const cubind::SmResource* resource : resources) copies.push_back(*resource);
  return new cubind::GreenContext(device(ordinal), copies);
}
inline CUcontext green_context_context(const cubind::GreenContext& green) { return green.context().handle(); }
inline void green_stream_make(std::optional<cubind::Stream>& slot, const cubind::GreenContext& green,
                              const cubind::StreamOptions& options) {
  slot.emplace(green.create_stream(options));
}

inline cubind::Event* event_new(int ordinal, const cubind::EventOptions& options) {
  return new cubind::Event(device(ordinal), options);
}

inline cubind::TimedEvent* timed_event_new(int ordinal, bool blocking_sync) {
  return new cubind::TimedEvent(device(ordinal), blocking_sync);
}

// Events of a green context's streams are made in that context.
inline cubind::Event* event_new_in(CUcontext context, const cubind::EventOptions& options) {
  return new cubind::Event(cubind::Context::from_native_handle(context), options);
}

inline cubind::TimedEvent* timed_event_new_in(CUcontext context, bool blocking_sync) {
  return new cubind::TimedEvent(cubind::Context::from_native_handle(context), blocking_sync);
}

// The Buffers of cubind.core's Python Buffer objects live inside them (a
// null one until filled): these fill one in place, and let one go.
// A null one (the usual case: a new Python Buffer) is built over in place,
// with no temporary Buffer to move from and destroy: a null Buffer holds
// nothing, so nothing is lost by not destroying it. Should allocate throw,
// a null Buffer is built there again.
inline void buffer_allocate(cubind::Buffer& into, const std::shared_ptr<cubind::MemoryResource>& resource,
                            std::size_t size, CUstream stream) {
  if (into.data() != nullptr || into.resource()) {
    into = cubind::Buffer::allocate(resource, size, cubind::StreamRef(stream));
    return;
  }
  try {
    ::new (static_cast<void*>(&into))
        cubind::Buffer(cubind::Buffer::allocate(resource, size, cubind::StreamRef(stream)));
  } catch (...) {
    ::new (static_cast<void*>(&into)) cubind::Buffer();
    throw;
  }
}

// A pool's allocations (DeviceMemoryResource, PinnedMemoryResource, a
// ManagedMemoryResource over a pool) on a stream of the caller's, made here
// rather than through the resource's virtual allocate and deallocate: the
// same driver calls (cuStreamIsCapturing, then cuMemAllocFromPoolAsync; at
// close cuMemFreeAsync; cubind::pool_entry_points) and the same Buffer,
// holding the resource, less the calls, checks and context guards around
// them that such a stream never needs. A default stream (the pool's context
// current around the call), an invalid one, a capturing one and a driver
// error all go the resource's own way, which makes the call again and
// raises what it raises.
inline bool pool_stream(CUstream stream) noexcept {
  return stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD &&
         stream != cubind::detail::invalid_stream();
}

// Looked up at the first allocation from a pool (the driver is loaded by then).
inline const cubind::PoolEntryPoints& pool_entries() {
  static const cubind::PoolEntryPoints entries = cubind::pool_entry_points();
  return entries;
}

}  // namespace cubind_core

namespace cubind::detail {
// Buffer::allocate's and Buffer::close's own work around the resource's
// calls, in place: fill a null Buffer, and empty one whose memory was freed.
struct BufferAccess {
  static void hold(Buffer& buffer, CUdeviceptr ptr, std::size_t size, const std::shared_ptr<MemoryResource>& resource,
                   CUstream stream) noexcept {
    buffer.ptr_ = reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr));
    buffer.size_ = size;
    buffer.resource_ = resource;
    buffer.stream_ = StreamRef(stream);
  }
  static void forget(Buffer& buffer) noexcept {
    buffer.ptr_ = nullptr;
    buffer.size_ = 0;
    buffer.resource_.reset();
  }
};
}  // namespace cubind::detail

namespace cubind_core {

// Returns whether the memory came from `pool` here (buffer_close_to_pool then
// returns it); `pool` is null for a resource that is not a pool. `into` is
// null (a new Buffer's).
inline bool buffer_allocate_from_pool(cubind::Buffer& into, const std::shared_ptr<cubind::MemoryResource>& resource,
                                      CUmemoryPool pool, std::size_t size, CUstream stream) {
  if (pool != nullptr && size != 0 && pool_stream(stream) && into.data() == nullptr) {
    const cubind::PoolEntryPoints& driver = pool_entries();
    CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    CUdeviceptr ptr = 0;
    if (driver.stream_is_capturing(stream, &capturing) == CUDA_SUCCESS && capturing == CU_STREAM_CAPTURE_STATUS_NONE &&
        driver.alloc_from_pool_async(&ptr, size, pool, stream) == CUDA_SUCCESS && ptr != 0) {
      cubind::detail::BufferAccess::hold(into, ptr, size, resource, stream);
      return true;
    }
  }
  buffer_allocate(into, resource, size, stream);
  return false;
}

// Closes, on `stream`, a Buffer buffer_allocate_from_pool filled from a pool.
inline void buffer_close_to_pool(cubind::Buffer& buffer, CUstream stream) {
  // The entries were looked up by the allocation.
  if (pool_stream(stream) && buffer.data() != nullptr &&
      pool_entries().free_async(buffer.handle(), stream) == CUDA_SUCCESS) {
    cubind::detail::BufferAccess::forget(buffer);
    return;
  }
  buffer.close(cubind::StreamRef(stream));
}

// Closes what it holds, as its destructor does (an error is ignored).
inline void buffer_reset(cubind::Buffer& buffer) noexcept { buffer = cubind::Buffer(); }
// Lets go of it without a driver call (in a forked child, where the memory
// is the parent's): its resource is kept alive for good, as the parent's is.
inline void buffer_abandon(cubind::Buffer& buffer) noexcept {
  static_cast<void>(new (std::nothrow) cubind::Buffer(std::move(buffer)));
}

inline cubind::ObjectCode* object_code_take(cubind::ObjectCode& code) { return new cubind::ObjectCode(std::move(code)); }

inline cubind::ObjectCode* object_code_from_bytes(cubind::CodeKind kind, const char* data, std::size_t size,
                                                  const std::string& name) {
  return new cubind::ObjectCode(cubind::ObjectCode::from_bytes(kind, std::vector<char>(data, data + size), name));
}

inline cubind::ObjectCode* object_code_from_file(const std::string& path, cubind::CodeKind kind) {
  return new cubind::ObjectCode(cubind::ObjectCode::from_file(path, kind));
}

inline float elapsed_ms(const cubind::TimedEvent& end, const cubind::TimedEvent& start) {
  return (end - start).count();
}

// Graphs.
inline cubind::Graph* graph_create_new() { return new cubind::Graph(cubind::create_graph()); }

inline cubind::Graph* graph_from_capture(cubind::StreamRef stream) { return new cubind::Graph(stream.end_capture()); }

inline cubind::GraphExec* graph_instantiate(CUgraph graph, CUcontext context,
                                            const cubind::GraphInstantiateOptions& options) {
  return new cubind::GraphExec(cubind::instantiate(cubind::GraphRef(graph), context, options));
}

inline std::shared_ptr<cubind::GraphMemoryResource> graph_memory_resource_new(int ordinal) {
  return std::make_shared<cubind::GraphMemoryResource>(cubind::Device::get(ordinal));
}

// Texture and surface memory. Arrays are shared (a texture or surface object,
// a mipmap level, holds a share of what it reads); Cython holds them as
// shared_ptr<ArrayRef> (the core's are of const ArrayRef, which Cython cannot
// name), made here.
inline std::shared_ptr<cubind::ArrayRef> opaque_array_new(int ordinal, const cubind::ArrayDescriptor& descriptor) {
  return std::make_shared<cubind::OpaqueArray>(device(ordinal), descriptor);
}
// An array made elsewhere (a graphics resource's), owned or viewed.
inline std::shared_ptr<cubind::ArrayRef> array_adopt(std::uintptr_t handle, bool owning) {
  const CUarray array = reinterpret_cast<CUarray>(handle);
  if (owning) return std::make_shared<cubind::OpaqueArray>(cubind::OpaqueArray::from_native_handle(array));
  return std::make_shared<cubind::ArrayRef>(cubind::ArrayRef::from_native_handle(array));
}
inline std::shared_ptr<cubind::MipmappedArray> mipmapped_array_new(int ordinal,
                                                                   const cubind::ArrayDescriptor& descriptor,
                                                                   unsigned int num_levels) {
  return std::make_shared<cubind::MipmappedArray>(device(ordinal), descriptor, num_levels);
}
inline std::shared_ptr<cubind::ArrayRef> mipmapped_array_level(const std::shared_ptr<cubind::MipmappedArray>& mipmap,
                                                               unsigned int level) {
  return std::const_pointer_cast<cubind::ArrayRef>(cubind::MipmappedArray::level(mipmap, level));
}
inline cubind::TextureObject* texture_object_of_array(int ordinal, const std::shared_ptr<cubind::ArrayRef>& array,
                                                      const cubind::TextureOptions& options) {
  return new cubind::TextureObject(device(ordinal), cubind::TextureResource::array(array), options);
}
inline cubind::TextureObject* texture_object_of_mipmap(int ordinal,
                                                       const std::shared_ptr<cubind::MipmappedArray>& mipmap,
                                                       const cubind::TextureOptions& options) {
  return new cubind::TextureObject(device(ordinal), cubind::TextureResource::mipmapped_array(mipmap), options);
}
inline cubind::TextureObject* texture_object_of_linear(int ordinal, CUdeviceptr ptr, CUarray_format format,
                                                       unsigned int num_channels, std::size_t bytes,
                                                       const cubind::TextureOptions& options) {
  return new cubind::TextureObject(device(ordinal), cubind::TextureResource::linear(ptr, format, num_channels, bytes),
                                   options);
}
inline cubind::TextureObject* texture_object_of_pitch2d(int ordinal, CUdeviceptr ptr, CUarray_format format,
                                                        unsigned int num_channels, std::size_t width,
                                                        std::size_t height, std::size_t pitch_bytes,
                                                        const cubind::TextureOptions& options) {
  return new cubind::TextureObject(
      device(ordinal), cubind::TextureResource::pitch2d(ptr, format, num_channels, width, height, pitch_bytes),
      options);
}
inline cubind::SurfaceObject* surface_object_new(int ordinal, const std::shared_ptr<cubind::ArrayRef>& array) {
  return new cubind::SurfaceObject(device(ordinal), array);
}
// TextureOptions' per-dimension and per-channel arrays, by index.
inline void texture_options_set_address_mode(cubind::TextureOptions& options, int axis, CUaddress_mode mode) {
  options.address_mode[static_cast<std::size_t>(axis)] = mode;
}
inline void texture_options_set_border(cubind::TextureOptions& options, int channel, float value) {
  options.border_color[static_cast<std::size_t>(channel)] = value;
}
inline void texture_options_set_normalized_float(cubind::TextureOptions& options, bool normalized) {
  options.read_mode = normalized ? cubind::TextureReadMode::normalized_float : cubind::TextureReadMode::element_type;
}

}  // namespace cubind_core

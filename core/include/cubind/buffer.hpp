// Buffer: a block of memory from a MemoryResource, owned. It keeps its
// resource alive and frees itself stream-ordered on the stream it was
// allocated on, so that stream must outlive the Buffer, or the Buffer must be
// closed on another stream first (close(stream)).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cubind/memory_resource.hpp"
#include "cubind/stream.hpp"

namespace cubind {

namespace detail {
// cubind.core's allocations from a pool on a stream of the caller's make the
// driver calls themselves and fill and empty the Buffer in place (its
// _owners.hpp); nothing else does.
struct BufferAccess;
}  // namespace detail

// What another process needs to map an allocation of an exported pool
// (cuMemPoolExportPointer): plain bytes, to send over any channel.
struct IpcBufferDescriptor {
  CUmemPoolPtrExportData data;
  std::size_t size;
};

class Buffer {
 public:
  // resource->allocate(size, stream).
  // @throws std::invalid_argument for a null resource, std::out_of_range for 0 bytes.
  static Buffer allocate(std::shared_ptr<MemoryResource> resource, std::size_t size, StreamRef stream);

  // Takes ownership of memory `resource` allocated elsewhere; it is returned to
  // `resource` on `stream`.
  static Buffer from_native_handle(void* ptr, std::size_t size, std::shared_ptr<MemoryResource> resource,
                                   StreamRef stream);

  // Maps an allocation another process exported with export_ipc(), from the
  // pool it imported with DeviceMemoryResource::from_ipc_handle or
  // PinnedMemoryResource::from_ipc_handle (cuMemPoolImportPointer). Closing it
  // unmaps it here; the exporting process frees the memory, after this one has
  // closed it.
  // @throws std::logic_error for a pool that was not imported;
  // std::invalid_argument when the descriptor claims more bytes than the
  // mapping has.
  static Buffer from_ipc(std::shared_ptr<MemoryPool> imported_pool, const IpcBufferDescriptor& descriptor,
                         StreamRef stream);

  // A null Buffer (as one moved from): assign a Buffer to it.
  Buffer() noexcept : stream_(StreamRef::legacy_default()) {}
  Buffer(Buffer&& other) noexcept;
  // Closes the buffer held before, as the destructor does.
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  // close(); an error (a driver already shut down included) is ignored.
  ~Buffer();

  // Null (0 bytes, no resource) when default-constructed, or once moved from,
  // released or closed.
  void* data() const noexcept { return ptr_; }
  CUdeviceptr handle() const noexcept { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr_)); }
  std::size_t size() const noexcept { return size_; }
  const std::shared_ptr<MemoryResource>& resource() const noexcept { return resource_; }
  // The stream the buffer is freed on.
  StreamRef stream() const noexcept { return stream_; }
  // From the resource; -1 for host memory. @throws std::logic_error when null.
  int device_id() const;
  bool is_device_accessible() const;
  bool is_host_accessible() const;

  // Returns the memory to its resource on the allocation stream, or on
  // `stream`; the Buffer becomes null. @throws std::logic_error when null.
  void close();
  void close(StreamRef stream);
  // Gives up ownership of the memory; the Buffer becomes null.
  void* release();

  // Copies all of `src` to the start of this buffer, on `stream`
  // (cuMemcpyAsync; cuMemcpyPeerAsync between device memory of two devices).
  // @throws std::out_of_range when src is larger than this buffer;
  // std::invalid_argument when the stream belongs to neither buffer's device.
  void copy_from(const Buffer& src, StreamRef stream);
  // Copies all of this buffer to the start of `dst`.
  void copy_to(Buffer& dst, StreamRef stream) const;
  // Copies `bytes` from any memory CUDA can address (pageable or pinned host
  // memory, device memory) to the start of this buffer.
  // @throws std::out_of_range for 0 bytes or more than size().
  void copy_from(const void* src, std::size_t bytes, StreamRef stream);
  void copy_to(void* dst, std::size_t bytes, StreamRef stream) const;

  // Sets every byte, 16-bit or 32-bit word (cuMemsetD8Async/D16/D32). Write
  // the value's type (std::uint8_t{0}): a plain 0 does not say which width.
  // @throws std::invalid_argument when the size is not a multiple of the width.
  void fill(std::uint8_t value, StreamRef stream);
  void fill(std::uint16_t value, StreamRef stream);
  void fill(std::uint32_t value, StreamRef stream);
  template <typename T>
  void fill(T value, StreamRef stream) = delete;

  // The descriptor another process passes to from_ipc (cuMemPoolExportPointer).
  // @throws std::logic_error unless allocated from an IPC-enabled pool.
  IpcBufferDescriptor export_ipc() const;

 private:
  friend struct detail::BufferAccess;
  Buffer(void* ptr, std::size_t size, std::shared_ptr<MemoryResource> resource, StreamRef stream) noexcept;
  void require_buffer(const char* where) const;
  void copy_between(CUdeviceptr dst, const MemoryResource* dst_resource, CUdeviceptr src,
                    const MemoryResource* src_resource, std::size_t bytes, StreamRef stream,
                    const char* where) const;

  void* ptr_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<MemoryResource> resource_;
  StreamRef stream_;
};

}  // namespace cubind

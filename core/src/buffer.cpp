#include "cubind/buffer.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

void* to_pointer(CUdeviceptr ptr) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)); }
CUdeviceptr to_deviceptr(const void* ptr) { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr)); }

std::string bytes_text(std::size_t bytes) { return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes"); }

// The primary context that owns memory living on one device only; null for
// memory every context reaches alike (pinned, managed, unknown raw pointers).
CUcontext device_memory_context(const MemoryResource* resource) {
  if (resource == nullptr || !resource->is_device_accessible() || resource->is_host_accessible() ||
      resource->device_id() < 0) {
    return nullptr;
  }
  return detail::primary_context(resource->device_id());
}

void require_resource(const std::shared_ptr<MemoryResource>& resource, const char* where) {
  if (!resource) throw std::invalid_argument(std::string(where) + ": the memory resource is null");
}

void require_size(std::size_t size, const char* where) {
  if (size == 0) throw std::out_of_range(std::string(where) + ": size is 0 bytes; a buffer holds at least 1 byte");
}

}  // namespace

Buffer::Buffer(void* ptr, std::size_t size, std::shared_ptr<MemoryResource> resource, StreamRef stream) noexcept
    : ptr_(ptr), size_(size), resource_(std::move(resource)), stream_(stream) {}

Buffer Buffer::allocate(std::shared_ptr<MemoryResource> resource, std::size_t size, StreamRef stream) {
  require_resource(resource, "cubind::Buffer::allocate");
  require_size(size, "cubind::Buffer::allocate");
  detail::require_stream(stream, "cubind::Buffer::allocate");
  void* ptr = resource->allocate(size, stream);
  return Buffer(ptr, size, std::move(resource), stream);
}

Buffer Buffer::from_native_handle(void* ptr, std::size_t size, std::shared_ptr<MemoryResource> resource,
                                  StreamRef stream) {
  if (ptr == nullptr) throw std::invalid_argument("cubind::Buffer::from_native_handle: the pointer is null");
  require_resource(resource, "cubind::Buffer::from_native_handle");
  require_size(size, "cubind::Buffer::from_native_handle");
  detail::require_stream(stream, "cubind::Buffer::from_native_handle");
  return Buffer(ptr, size, std::move(resource), stream);
}

Buffer Buffer::from_ipc(std::shared_ptr<MemoryPool> imported_pool, const IpcBufferDescriptor& descriptor,
                        StreamRef stream) {
  constexpr const char* where = "cubind::Buffer::from_ipc";
  if (!imported_pool) throw std::invalid_argument(std::string(where) + ": the memory resource is null");
  if (!imported_pool->is_imported()) {
    throw std::logic_error(std::string(where) +
                           ": the pool was not imported from another process (from_ipc_handle); a buffer maps "
                           "only into the imported pool of the pool that allocated it");
  }
  require_size(descriptor.size, where);
  detail::require_stream(stream, where);
  ContextGuard guard(imported_pool->device());
  CUdeviceptr ptr = 0;
  CUmemPoolPtrExportData data = descriptor.data;
  detail::check(raw::cuMemPoolImportPointer(&ptr, imported_pool->handle(), &data), "cuMemPoolImportPointer");
  // The size comes from the other process: never claim more than was mapped.
  std::size_t mapped = 0;
  const CUresult range = raw::cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr);
  if (range != CUDA_SUCCESS || descriptor.size > mapped) {
    raw::cuMemFree(ptr);
    detail::check(range, "cuPointerGetAttribute");
    throw std::invalid_argument(std::string(where) + ": the descriptor's size, " + std::to_string(descriptor.size) +
                                " bytes, exceeds the " + std::to_string(mapped) + " bytes of the mapped allocation");
  }
  return Buffer(to_pointer(ptr), descriptor.size, std::move(imported_pool), stream);
}

Buffer::Buffer(Buffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      resource_(std::move(other.resource_)),
      stream_(other.stream_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) {
      Buffer old(std::move(*this));  // closed here, as by the destructor
    }
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = std::exchange(other.size_, 0);
    resource_ = std::move(other.resource_);
    stream_ = other.stream_;
  }
  return *this;
}

Buffer::~Buffer() {
  if (ptr_ != nullptr) {
    detail::release_quietly([this] {
      close();
      return 0;
    });
  }
}

void Buffer::require_buffer(const char* where) const {
  if (ptr_ == nullptr) detail::throw_null(where, "Buffer");
}

int Buffer::device_id() const {
  require_buffer("cubind::Buffer::device_id");
  return resource_->device_id();
}

bool Buffer::is_device_accessible() const {
  require_buffer("cubind::Buffer::is_device_accessible");
  return resource_->is_device_accessible();
}

bool Buffer::is_host_accessible() const {
  require_buffer("cubind::Buffer::is_host_accessible");
  return resource_->is_host_accessible();
}

void Buffer::close() {
  require_buffer("cubind::Buffer::close");
  close(stream_);
}

void Buffer::close(StreamRef stream) {
  require_buffer("cubind::Buffer::close");
  detail::require_stream(stream, "cubind::Buffer::close");
  // Only once the resource has taken the memory back does the Buffer let go,
  // so a failed close (the resource refused the stream, or the driver
  // failed) can be retried.
  resource_->deallocate(ptr_, size_, stream);
  ptr_ = nullptr;
  size_ = 0;
  resource_.reset();
}

void* Buffer::release() {
  require_buffer("cubind::Buffer::release");
  size_ = 0;
  resource_.reset();
  return std::exchange(ptr_, nullptr);
}

void Buffer::copy_between(CUdeviceptr dst, const MemoryResource* dst_resource, CUdeviceptr src,
                          const MemoryResource* src_resource, std::size_t bytes, StreamRef stream,
                          const char* where) const {
  detail::require_stream(stream, where);
  const CUcontext dst_context = device_memory_context(dst_resource);
  const CUcontext src_context = device_memory_context(src_resource);
  // Under this guard a default stream is the one of the device the memory is on.
  const CUcontext preferred = dst_context != nullptr ? dst_context : src_context;
  std::optional<ContextGuard> guard;
  if (preferred != nullptr) guard.emplace(Context::from_native_handle(preferred));
  const CUcontext stream_context = detail::stream_context(stream, where);
  // A stream of a green context fits the memory of its device's primary context.
  const bool stream_fits = stream_context == dst_context || stream_context == src_context ||
                           (dst_context != nullptr && detail::shares_device_memory(stream_context, dst_context)) ||
                           (src_context != nullptr && detail::shares_device_memory(stream_context, src_context));
  if (preferred != nullptr && !stream_fits) {
    std::string contexts = detail::describe_context(preferred);
    if (src_context != nullptr && src_context != preferred) contexts += " or " + detail::describe_context(src_context);
    throw std::invalid_argument(std::string(where) + ": the stream belongs to " +
                                detail::describe_context(stream_context) +
                                ", but the copy involves device memory of " + contexts +
                                "; pass a stream of one of those");
  }
  std::optional<ContextGuard> stream_guard;
  if (stream_context != preferred) stream_guard.emplace(Context::from_native_handle(stream_context));
  if (dst_context != nullptr && src_context != nullptr && dst_context != src_context) {
    detail::check(raw::cuMemcpyPeerAsync(dst, dst_context, src, src_context, bytes, stream.handle()),
                  "cuMemcpyPeerAsync");
  } else {
    detail::check(raw::cuMemcpyAsync(dst, src, bytes, stream.handle()), "cuMemcpyAsync");
  }
}

void Buffer::copy_from(const Buffer& src, StreamRef stream) {
  require_buffer("cubind::Buffer::copy_from");
  if (src.ptr_ == nullptr) detail::throw_null("cubind::Buffer::copy_from (the source)", "Buffer");
  if (src.size_ > size_) {
    throw std::out_of_range("cubind::Buffer::copy_from: the source holds " + bytes_text(src.size_) +
                            ", more than this buffer's " + bytes_text(size_));
  }
  copy_between(handle(), resource_.get(), src.handle(), src.resource_.get(), src.size_, stream,
               "cubind::Buffer::copy_from");
}

void Buffer::copy_to(Buffer& dst, StreamRef stream) const {
  require_buffer("cubind::Buffer::copy_to");
  if (dst.ptr_ == nullptr) detail::throw_null("cubind::Buffer::copy_to (the destination)", "Buffer");
  if (size_ > dst.size_) {
    throw std::out_of_range("cubind::Buffer::copy_to: this buffer holds " + bytes_text(size_) +
                            ", more than the destination's " + bytes_text(dst.size_));
  }
  copy_between(dst.handle(), dst.resource_.get(), handle(), resource_.get(), size_, stream, "cubind::Buffer::copy_to");
}

namespace {
void require_span(const void* ptr, std::size_t bytes, std::size_t size, const char* where) {
  if (ptr == nullptr) throw std::invalid_argument(std::string(where) + ": the pointer is null");
  if (bytes == 0) throw std::out_of_range(std::string(where) + ": 0 bytes to copy");
  if (bytes > size) {
    throw std::out_of_range(std::string(where) + ": " + bytes_text(bytes) + " do not fit in this buffer of " +
                            bytes_text(size));
  }
}
}  // namespace

void Buffer::copy_from(const void* src, std::size_t bytes, StreamRef stream) {
  require_buffer("cubind::Buffer::copy_from");
  require_span(src, bytes, size_, "cubind::Buffer::copy_from");
  copy_between(handle(), resource_.get(), to_deviceptr(src), nullptr, bytes, stream, "cubind::Buffer::copy_from");
}

void Buffer::copy_to(void* dst, std::size_t bytes, StreamRef stream) const {
  require_buffer("cubind::Buffer::copy_to");
  require_span(dst, bytes, size_, "cubind::Buffer::copy_to");
  copy_between(to_deviceptr(dst), nullptr, handle(), resource_.get(), bytes, stream, "cubind::Buffer::copy_to");
}

namespace {

template <typename Word, typename Set>
void fill_words(const Buffer& buffer, Word value, StreamRef stream, Set set, const char* api) {
  constexpr const char* where = "cubind::Buffer::fill";
  detail::require_stream(stream, where);
  if (buffer.size() % sizeof(Word) != 0) {
    throw std::invalid_argument(std::string(where) + ": the buffer's " + bytes_text(buffer.size()) +
                                " are not a whole number of " + std::to_string(sizeof(Word)) + "-byte words");
  }
  const CUcontext context = device_memory_context(buffer.resource().get());
  std::optional<ContextGuard> guard;
  if (context != nullptr) {
    guard.emplace(Context::from_native_handle(context));
    detail::require_stream_context(stream, context, where);
  }
  detail::check(set(buffer.handle(), value, buffer.size() / sizeof(Word), stream.handle()), api);
}

}  // namespace

void Buffer::fill(std::uint8_t value, StreamRef stream) {
  require_buffer("cubind::Buffer::fill");
  fill_words(*this, value, stream, raw::cuMemsetD8Async, "cuMemsetD8Async");
}

void Buffer::fill(std::uint16_t value, StreamRef stream) {
  require_buffer("cubind::Buffer::fill");
  fill_words(*this, value, stream, raw::cuMemsetD16Async, "cuMemsetD16Async");
}

void Buffer::fill(std::uint32_t value, StreamRef stream) {
  require_buffer("cubind::Buffer::fill");
  fill_words(*this, value, stream, raw::cuMemsetD32Async, "cuMemsetD32Async");
}

IpcBufferDescriptor Buffer::export_ipc() const {
  require_buffer("cubind::Buffer::export_ipc");
  const auto* pool = dynamic_cast<const MemoryPool*>(resource_.get());
  if (pool == nullptr || !pool->is_ipc_enabled()) {
    throw std::logic_error(
        "cubind::Buffer::export_ipc: the buffer was not allocated from a DeviceMemoryResource or "
        "PinnedMemoryResource created with ipc_enabled");
  }
  ContextGuard guard(pool->device());
  IpcBufferDescriptor descriptor{};
  detail::check(raw::cuMemPoolExportPointer(&descriptor.data, handle()), "cuMemPoolExportPointer");
  descriptor.size = size_;
  return descriptor;
}

}  // namespace cubind

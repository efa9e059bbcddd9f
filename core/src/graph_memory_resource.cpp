#include "cubind/graph_memory_resource.hpp"

#include <stdexcept>
#include <string>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/graph_capture.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind {

GraphMemoryResource::GraphMemoryResource(const Device& device) : device_(device) {}

void* GraphMemoryResource::allocate(std::size_t bytes, StreamRef stream) {
  detail::require_stream(stream, "cubind::GraphMemoryResource::allocate");
  if (capture_status(stream) != CaptureStatus::active) {
    throw std::logic_error(
        "GraphMemoryResource cannot perform memory operations on a non-capturing stream: "
        "allocate while the stream is captured into a graph (GraphBuilder.begin_building)");
  }
  if (bytes == 0) throw std::invalid_argument("cubind::GraphMemoryResource::allocate: 0 bytes");
  ContextGuard guard(device_);
  CUdeviceptr ptr = 0;
  detail::check(raw::cuMemAllocAsync(&ptr, bytes, stream.handle()), "cuMemAllocAsync");
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr));
}

void GraphMemoryResource::deallocate(void* ptr, std::size_t /*bytes*/, StreamRef stream) {
  detail::require_stream(stream, "cubind::GraphMemoryResource::deallocate");
  ContextGuard guard(device_);
  detail::check(raw::cuMemFreeAsync(static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr)), stream.handle()),
                "cuMemFreeAsync");
}

std::uint64_t GraphMemoryResource::attribute(CUgraphMem_attribute attribute) const {
  cuuint64_t value = 0;
  detail::check(raw::cuDeviceGetGraphMemAttribute(device_.handle(), attribute, &value),
                "cuDeviceGetGraphMemAttribute");
  return value;
}

void GraphMemoryResource::reset_high_watermark(CUgraphMem_attribute attribute) const {
  if (attribute != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH && attribute != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) {
    throw std::invalid_argument("cubind::GraphMemoryResource::reset_high_watermark: attribute " +
                                std::to_string(static_cast<int>(attribute)) + " is not a high watermark");
  }
  cuuint64_t zero = 0;
  detail::check(raw::cuDeviceSetGraphMemAttribute(device_.handle(), attribute, &zero),
                "cuDeviceSetGraphMemAttribute");
}

void GraphMemoryResource::trim() const {
  detail::check(raw::cuDeviceGraphMemTrim(device_.handle()), "cuDeviceGraphMemTrim");
}

}  // namespace cubind

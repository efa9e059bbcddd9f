// Memory that belongs to a graph: allocated while a stream is captured, it
// becomes an allocation node of the graph (cuMemAllocAsync under capture),
// backed by the device's graph memory pool, which the driver keeps apart from
// the stream-ordered pools.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "cubind/device.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/stream.hpp"

namespace cubind {

class GraphMemoryResource final : public MemoryResource {
 public:
  explicit GraphMemoryResource(const Device& device);

  // An allocation node in the graph `stream` is capturing (cuMemAllocAsync).
  // @throws std::logic_error when the stream is not capturing.
  void* allocate(std::size_t bytes, StreamRef stream) override;
  // cuMemFreeAsync: a free node while `stream` is capturing; outside a
  // capture, frees what a launched graph allocated and did not free.
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override;

  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return false; }
  int device_id() const noexcept override { return device_.ordinal(); }

  // cuDeviceGetGraphMemAttribute: bytes used or reserved for graphs on the
  // device, now or at the high watermark (CU_GRAPH_MEM_ATTR_*).
  std::uint64_t attribute(CUgraphMem_attribute attribute) const;
  // Resets a high watermark (CU_GRAPH_MEM_ATTR_USED_MEM_HIGH or
  // _RESERVED_MEM_HIGH) to the current value (cuDeviceSetGraphMemAttribute
  // with 0, the only value the driver takes).
  // @throws std::invalid_argument for any other attribute.
  void reset_high_watermark(CUgraphMem_attribute attribute) const;
  // Returns the graph pool's unused memory to the OS (cuDeviceGraphMemTrim).
  void trim() const;

 private:
  Device device_;
};

}  // namespace cubind

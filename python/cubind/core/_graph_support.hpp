// What cubind.core's graphs need beside the C++ core: owners moved to the
// heap for a Python object to hold.
#pragma once

#include <cuda.h>

#include <memory>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/graph.hpp"
#include "cubind/graph_memory_resource.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind_core {

// Captures on any stream, owned by cubind or not.
inline void stream_begin_capture(CUstream stream, CUstreamCaptureMode mode) {
  cubind::detail::check(cubind::raw::cuStreamBeginCapture(stream, mode), "cuStreamBeginCapture");
}

inline cubind::Graph* stream_end_capture(CUstream stream) {
  CUgraph graph = nullptr;
  cubind::detail::check(cubind::raw::cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  return new cubind::Graph(cubind::Graph::from_native_handle(graph));
}

inline cubind::GraphExec* graph_instantiate(CUgraph graph, CUcontext context,
                                            const cubind::GraphInstantiateOptions& options) {
  return new cubind::GraphExec(cubind::instantiate(cubind::GraphRef(graph), context, options));
}

inline std::shared_ptr<cubind::GraphMemoryResource> graph_memory_resource_new(int ordinal) {
  return std::make_shared<cubind::GraphMemoryResource>(cubind::Device::get(ordinal));
}

}  // namespace cubind_core

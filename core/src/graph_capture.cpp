#include "cubind/graph_capture.hpp"

#include <stdexcept>
#include <string>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "conditional_bodies.hpp"
#include "context_registry.hpp"

namespace cubind {

namespace {

struct CaptureInfo {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph graph = nullptr;
  const CUgraphNode* dependencies = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  std::size_t count = 0;
};

CaptureInfo capture_info(StreamRef stream) {
  CaptureInfo info;
  detail::check(raw::cuStreamGetCaptureInfo(stream.handle(), &info.status, nullptr, &info.graph, &info.dependencies,
                                            &info.edges, &info.count),
                "cuStreamGetCaptureInfo");
  return info;
}

CaptureInfo active_capture(StreamRef stream, const char* where) {
  detail::require_stream(stream, where);
  CaptureInfo info = capture_info(stream);
  if (info.status != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    throw std::logic_error(std::string(where) + ": the stream is not capturing" +
                           (info.status == CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                ? " (its capture was invalidated by an illegal call; end it)"
                                : " (begin a capture first)"));
  }
  return info;
}

// Adds a node after the stream's captured work and makes it the work later
// calls depend on.
CUgraphNode add_after_capture(StreamRef stream, const CaptureInfo& info, CUgraphNodeParams& params) {
  CUgraphNode node = nullptr;
  detail::check(raw::cuGraphAddNode(&node, info.graph, info.dependencies, info.edges, info.count, &params),
                "cuGraphAddNode");
  detail::check(raw::cuStreamUpdateCaptureDependencies(stream.handle(), &node, nullptr, 1,
                                                       CU_STREAM_SET_CAPTURE_DEPENDENCIES),
                "cuStreamUpdateCaptureDependencies");
  return node;
}

}  // namespace

CaptureStatus capture_status(StreamRef stream) {
  detail::require_stream(stream, "cubind::capture_status");
  switch (capture_info(stream).status) {
    case CU_STREAM_CAPTURE_STATUS_ACTIVE: return CaptureStatus::active;
    case CU_STREAM_CAPTURE_STATUS_INVALIDATED: return CaptureStatus::invalidated;
    default: return CaptureStatus::none;
  }
}

CUgraph capturing_graph(StreamRef stream, const char* where) { return active_capture(stream, where).graph; }

void begin_capture_into(StreamRef stream, GraphRef graph, CUstreamCaptureMode mode) {
  detail::require_stream(stream, "cubind::begin_capture_into");
  if (graph.handle() == nullptr) throw std::invalid_argument("cubind::begin_capture_into: the graph is null");
  detail::check(raw::cuStreamBeginCaptureToGraph(stream.handle(), graph.handle(), nullptr, nullptr, 0, mode),
                "cuStreamBeginCaptureToGraph");
}

void end_capture_into(StreamRef stream) {
  detail::require_stream(stream, "cubind::end_capture_into");
  CUgraph graph = nullptr;
  detail::check(raw::cuStreamEndCapture(stream.handle(), &graph), "cuStreamEndCapture");
}

CUgraphConditionalHandle create_condition(StreamRef stream, std::optional<unsigned int> default_value) {
  const CaptureInfo info = active_capture(stream, "cubind::create_condition");
  const CUcontext context = detail::stream_context(stream, "cubind::create_condition");
  CUgraphConditionalHandle handle = 0;
  detail::check(raw::cuGraphConditionalHandleCreate(&handle, info.graph, context, default_value.value_or(0),
                                                    default_value ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0),
                "cuGraphConditionalHandleCreate");
  return handle;
}

std::vector<CUgraph> capture_conditional(StreamRef stream, CUgraphConditionalHandle condition,
                                         CUgraphConditionalNodeType type, unsigned int count) {
  detail::require_conditional_body_count(type, count, "cubind::capture_conditional");
  const CaptureInfo info = active_capture(stream, "cubind::capture_conditional");
  CUgraphNodeParams params{};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = condition;
  params.conditional.type = type;
  params.conditional.size = count;
  params.conditional.ctx = detail::stream_context(stream, "cubind::capture_conditional");
  add_after_capture(stream, info, params);
  return std::vector<CUgraph>(params.conditional.phGraph_out, params.conditional.phGraph_out + count);
}

void capture_child_graph(StreamRef stream, GraphRef child) {
  if (child.handle() == nullptr) throw std::invalid_argument("cubind::capture_child_graph: the child graph is null");
  const CaptureInfo info = active_capture(stream, "cubind::capture_child_graph");
  CUgraphNodeParams params{};
  params.type = CU_GRAPH_NODE_TYPE_GRAPH;
  params.graph.graph = child.handle();
  add_after_capture(stream, info, params);
}

void capture_host_func(StreamRef stream, CUhostFn fn, void* data, CUhostFn release) {
  if (fn == nullptr || release == nullptr) throw std::invalid_argument("cubind::capture_host_func: a null function");
  CUuserObject object = nullptr;
  CaptureInfo info;
  try {
    info = active_capture(stream, "cubind::capture_host_func");
    ContextGuard guard(Context::from_native_handle(detail::stream_context(stream, "cubind::capture_host_func")));
    detail::check(raw::cuUserObjectCreate(&object, data, release, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
                  "cuUserObjectCreate");
  } catch (...) {
    release(data);
    throw;
  }
  // The user object owns `data` now: releasing it (on failure) runs `release`.
  const CUresult retained = raw::cuGraphRetainUserObject(info.graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
  if (retained != CUDA_SUCCESS) {
    raw::cuUserObjectRelease(object, 1);
    detail::check(retained, "cuGraphRetainUserObject");
  }
  detail::check(raw::cuLaunchHostFunc(stream.handle(), fn, data), "cuLaunchHostFunc");
}

}  // namespace cubind

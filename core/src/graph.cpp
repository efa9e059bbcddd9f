#include "cubind/graph.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

const char* instantiate_result_name(CUgraphInstantiateResult result) {
  switch (result) {
    case CUDA_GRAPH_INSTANTIATE_SUCCESS: return "CUDA_GRAPH_INSTANTIATE_SUCCESS";
    case CUDA_GRAPH_INSTANTIATE_ERROR: return "CUDA_GRAPH_INSTANTIATE_ERROR";
    case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE: return "CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE (a cycle?)";
    case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED:
      return "CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED (an operation device launch cannot run)";
    case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED:
      return "CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED (nodes of several contexts, for device launch)";
    case CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED:
      return "CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED (a condition no conditional node uses)";
  }
  return "an unknown CUgraphInstantiateResult";
}

const char* update_result_name(CUgraphExecUpdateResult result) {
  switch (result) {
    case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "CU_GRAPH_EXEC_UPDATE_SUCCESS";
    case CU_GRAPH_EXEC_UPDATE_ERROR: return "CU_GRAPH_EXEC_UPDATE_ERROR";
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED";
  }
  return "an unknown CUgraphExecUpdateResult";
}

// A failed call whose driver also said why in a result code of its own.
[[noreturn]] void throw_with_reason(CUresult status, const char* api_function, const char* reason) {
  throw CudaError(status, api_function, detail::driver_error_name(status),
                  detail::driver_error_string(status) + "; the driver's reason: " + reason);
}

}  // namespace

GraphExec instantiate(GraphRef graph, CUcontext context, const GraphInstantiateOptions& options) {
  if (graph.handle() == nullptr) throw std::invalid_argument("cubind::instantiate: the graph is null");
  if (options.device_launch && options.auto_free_on_launch) {
    throw std::invalid_argument(
        "cubind::instantiate: device_launch cannot be combined with auto_free_on_launch (CUDA refuses both)");
  }
  CUDA_GRAPH_INSTANTIATE_PARAMS params{};
  if (options.auto_free_on_launch) params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
  if (options.device_launch) params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH;
  if (options.use_node_priority) params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
  if (options.upload_stream != nullptr) {
    detail::require_stream(StreamRef(options.upload_stream), "cubind::instantiate");
    params.flags |= CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
    params.hUploadStream = options.upload_stream;
  }
  std::optional<ContextGuard> guard;
  if (context != nullptr) guard.emplace(Context::from_native_handle(context));
  CUgraphExec exec = nullptr;
  const CUresult status = raw::cuGraphInstantiateWithParams(&exec, graph.handle(), &params);
  if (status != CUDA_SUCCESS) {
    if (params.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS) {
      throw_with_reason(status, "cuGraphInstantiateWithParams", instantiate_result_name(params.result_out));
    }
    detail::check(status, "cuGraphInstantiateWithParams");
  }
  return GraphExec(exec);
}

void debug_dot_print(GraphRef graph, const std::string& path, unsigned int flags) {
  if (graph.handle() == nullptr) throw std::invalid_argument("cubind::debug_dot_print: the graph is null");
  detail::check(raw::cuGraphDebugDotPrint(graph.handle(), path.c_str(), flags), "cuGraphDebugDotPrint");
}

Graph Graph::from_native_handle(CUgraph handle) {
  if (handle == nullptr) throw std::invalid_argument("cubind::Graph::from_native_handle: the handle is null");
  return Graph(handle, nullptr);
}

Graph::Graph(Graph&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), context_(std::exchange(other.context_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    Graph old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

Graph::~Graph() {
  if (handle_ != nullptr) detail::release_quietly([this] { return raw::cuGraphDestroy(handle_); });
}

CUgraph Graph::release() {
  if (handle_ == nullptr) detail::throw_null("cubind::Graph::release", "Graph");
  context_ = nullptr;
  return std::exchange(handle_, nullptr);
}

std::size_t Graph::node_count() const {
  if (handle_ == nullptr) detail::throw_null("cubind::Graph::node_count", "Graph");
  std::size_t count = 0;
  detail::check(raw::cuGraphGetNodes(handle_, nullptr, &count), "cuGraphGetNodes");
  return count;
}

GraphExec Graph::instantiate(unsigned long long flags) const {
  if (handle_ == nullptr) detail::throw_null("cubind::Graph::instantiate", "Graph");
  std::optional<ContextGuard> guard;
  if (context_ != nullptr) guard.emplace(Context::from_native_handle(context_));
  CUgraphExec exec = nullptr;
  detail::check(raw::cuGraphInstantiateWithFlags(&exec, handle_, flags), "cuGraphInstantiateWithFlags");
  return GraphExec(exec);
}

GraphExec GraphExec::from_native_handle(CUgraphExec handle) {
  if (handle == nullptr) throw std::invalid_argument("cubind::GraphExec::from_native_handle: the handle is null");
  return GraphExec(handle);
}

GraphExec::GraphExec(GraphExec&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    GraphExec old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

GraphExec::~GraphExec() {
  if (handle_ != nullptr) detail::release_quietly([this] { return raw::cuGraphExecDestroy(handle_); });
}

CUgraphExec GraphExec::release() {
  if (handle_ == nullptr) detail::throw_null("cubind::GraphExec::release", "GraphExec");
  return std::exchange(handle_, nullptr);
}

void GraphExec::launch(StreamRef stream) const {
  if (handle_ == nullptr) detail::throw_null("cubind::GraphExec::launch", "GraphExec");
  detail::require_stream(stream, "cubind::GraphExec::launch");
  detail::check(raw::cuGraphLaunch(handle_, stream.handle()), "cuGraphLaunch");
}

void GraphExec::upload(StreamRef stream) const {
  if (handle_ == nullptr) detail::throw_null("cubind::GraphExec::upload", "GraphExec");
  detail::require_stream(stream, "cubind::GraphExec::upload");
  detail::check(raw::cuGraphUpload(handle_, stream.handle()), "cuGraphUpload");
}

void GraphExec::update(GraphRef graph) const {
  if (handle_ == nullptr) detail::throw_null("cubind::GraphExec::update", "GraphExec");
  if (graph.handle() == nullptr) throw std::invalid_argument("cubind::GraphExec::update: the graph is null");
  CUgraphExecUpdateResultInfo info{};
  const CUresult status = raw::cuGraphExecUpdate(handle_, graph.handle(), &info);
  if (status == CUDA_SUCCESS) return;
  if (info.result != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
    throw_with_reason(status, "cuGraphExecUpdate", update_result_name(info.result));
  }
  detail::check(status, "cuGraphExecUpdate");
}

}  // namespace cubind

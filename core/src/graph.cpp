#include "cubind/graph.hpp"

#include <optional>
#include <stdexcept>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "runtime_support.hpp"

namespace cubind {

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

}  // namespace cubind

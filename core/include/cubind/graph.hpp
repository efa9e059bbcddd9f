// CUDA graphs: Graph owns a CUgraph (usually from Stream::end_capture),
// GraphRef views one owned elsewhere (a conditional node's body), GraphExec
// owns an instantiation, which is what runs on a stream.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cubind {

class StreamRef;
class GraphExec;
class Graph;

// A graph owned elsewhere: by a Graph, or by the conditional node whose body it is.
class GraphRef {
 public:
  constexpr explicit GraphRef(CUgraph handle) noexcept : handle_(handle) {}
  GraphRef(const Graph& graph) noexcept;  // NOLINT: implicit, as views are
  GraphRef(int) = delete;
  GraphRef(std::nullptr_t) = delete;

  constexpr CUgraph handle() const noexcept { return handle_; }

 private:
  CUgraph handle_;
};

// How a graph is instantiated (cuGraphInstantiateWithParams).
struct GraphInstantiateOptions {
  // Frees the graph's allocations that are still live when it is launched again.
  bool auto_free_on_launch = false;
  // Launchable from device code; not with auto_free_on_launch.
  bool device_launch = false;
  // Runs nodes at their own priority attributes, not the launching stream's.
  bool use_node_priority = false;
  // Uploads the instantiation on this stream right away (null: no upload).
  CUstream upload_stream = nullptr;
};

// cuGraphInstantiateWithParams with `context` current (null: the current one).
// @throws std::invalid_argument for a null graph or device_launch with
// auto_free_on_launch; CudaError, whose message adds the driver's
// CUgraphInstantiateResult when instantiation itself fails.
GraphExec instantiate(GraphRef graph, CUcontext context, const GraphInstantiateOptions& options);

// cuGraphDebugDotPrint: writes a GraphViz description of `graph` to `path`;
// `flags` are CU_GRAPH_DEBUG_DOT_FLAGS_* bits.
void debug_dot_print(GraphRef graph, const std::string& path, unsigned int flags);

class Graph {
 public:
  // Takes ownership of a graph created elsewhere; ~Graph destroys it.
  // @throws std::invalid_argument for a null handle.
  static Graph from_native_handle(CUgraph handle);

  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // cuGraphDestroy; errors are ignored.
  ~Graph();

  // Null once moved from or released.
  CUgraph handle() const noexcept { return handle_; }
  // @throws std::logic_error when null.
  CUgraph release();

  // The number of nodes (cuGraphGetNodes).
  std::size_t node_count() const;

  // cuGraphInstantiateWithFlags, in the context the graph was captured in.
  GraphExec instantiate(unsigned long long flags = 0) const;

 private:
  friend class Stream;
  friend class StreamRef;
  Graph(CUgraph handle, CUcontext context) noexcept : handle_(handle), context_(context) {}

  CUgraph handle_;
  CUcontext context_;  // where it was captured; null for an adopted graph
};

class GraphExec {
 public:
  // Takes ownership; ~GraphExec destroys it.
  // @throws std::invalid_argument for a null handle.
  static GraphExec from_native_handle(CUgraphExec handle);

  GraphExec(GraphExec&& other) noexcept;
  GraphExec& operator=(GraphExec&& other) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  // cuGraphExecDestroy; errors are ignored.
  ~GraphExec();

  CUgraphExec handle() const noexcept { return handle_; }
  // @throws std::logic_error when null.
  CUgraphExec release();

  // Runs the whole graph on `stream` (cuGraphLaunch).
  void launch(StreamRef stream) const;
  // Moves the graph's resources to the device ahead of the first launch (cuGraphUpload).
  void upload(StreamRef stream) const;
  // Takes over the parameters of `graph`, whose topology must match the one
  // instantiated (cuGraphExecUpdate). @throws CudaError naming why it could
  // not (CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, ...); the instantiation
  // is unchanged then.
  void update(GraphRef graph) const;

 private:
  friend class Graph;
  friend GraphExec instantiate(GraphRef, CUcontext, const GraphInstantiateOptions&);
  explicit GraphExec(CUgraphExec handle) noexcept : handle_(handle) {}

  CUgraphExec handle_;
};

inline GraphRef::GraphRef(const Graph& graph) noexcept : handle_(graph.handle()) {}

}  // namespace cubind

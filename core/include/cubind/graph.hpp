// CUDA graphs: Graph owns a CUgraph (usually from Stream::end_capture),
// GraphExec owns its instantiation, which is what runs on a stream.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace cubind {

class StreamRef;
class GraphExec;

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

 private:
  friend class Graph;
  explicit GraphExec(CUgraphExec handle) noexcept : handle_(handle) {}

  CUgraphExec handle_;
};

}  // namespace cubind

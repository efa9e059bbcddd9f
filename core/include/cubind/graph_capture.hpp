// Building graphs by stream capture beyond Stream::begin_capture/end_capture:
// capture into a graph that already exists (a conditional node's body), the
// conditional nodes and their condition handles, child graphs, and host
// callbacks whose data the graph owns. Each adds its node after the work the
// stream has captured so far; the stream's later work depends on it.
#pragma once

#include <cuda.h>

#include <optional>
#include <vector>

#include "cubind/graph.hpp"
#include "cubind/stream.hpp"

namespace cubind {

enum class CaptureStatus { none, active, invalidated };

// Where a stream's capture stands (cuStreamGetCaptureInfo).
CaptureStatus capture_status(StreamRef stream);

// The graph `stream` is capturing into, owned by the capture.
// @throws std::logic_error, naming `where`, when the capture is not active.
CUgraph capturing_graph(StreamRef stream, const char* where);

// cuStreamBeginCaptureToGraph: work submitted to `stream` from now on is
// added to `graph`, which stays owned where it is (by a conditional node).
void begin_capture_into(StreamRef stream, GraphRef graph, CUstreamCaptureMode mode);

// cuStreamEndCapture of a capture begun by begin_capture_into; the graph it
// filled is not handed over.
void end_capture_into(StreamRef stream);

// cuGraphConditionalHandleCreate in the graph `stream` is capturing, for the
// stream's context. With a default value, the condition is set to it at the
// start of every launch (CU_GRAPH_COND_ASSIGN_DEFAULT); without, device code
// must set it before the conditional node runs.
CUgraphConditionalHandle create_condition(StreamRef stream, std::optional<unsigned int> default_value);

// Adds a conditional node on `condition` (CU_GRAPH_COND_TYPE_IF with 1 or 2
// bodies, _WHILE with 1, _SWITCH with any number). Returns its body graphs,
// owned by the node, to be filled with begin_capture_into.
// @throws std::invalid_argument for a count the type does not take.
std::vector<CUgraph> capture_conditional(StreamRef stream, CUgraphConditionalHandle condition,
                                         CUgraphConditionalNodeType type, unsigned int count);

// Adds a child graph node running a copy of `child`.
void capture_child_graph(StreamRef stream, GraphRef child);

// Adds a host node calling fn(data) at every launch of the graph; the graph
// owns `data` through a user object: `release(data)` runs (on a driver
// thread) once the graph and every instantiation of it are destroyed. The
// call takes `data` in every case: when it throws, release(data) has run or
// will run.
void capture_host_func(StreamRef stream, CUhostFn fn, void* data, CUhostFn release);

}  // namespace cubind

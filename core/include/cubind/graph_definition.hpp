// Building a graph node by node (cuGraphCreate, cuGraphAddNode) and reading
// it back: its nodes, edges and each node's parameters; changing nodes of a
// graph and of an instantiation of it. Thin checked calls over the driver:
// what a node holds is the driver's CUgraphNodeParams, so the same graph can
// be built here, by capture (graph_capture.hpp) or by both.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "cubind/graph.hpp"

namespace cubind {

// An empty graph (cuGraphCreate).
Graph create_graph();

// A copy of `graph` (cuGraphClone), owned by the caller.
Graph clone_graph(GraphRef graph);

// Adds a node after `dependencies` (cuGraphAddNode); outputs of `params`
// (an allocation's address, a conditional node's bodies) are filled in.
// @throws std::invalid_argument for a null graph.
CUgraphNode add_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, CUgraphNodeParams& params);

// Adds a host node calling fn(data) at every launch; the graph owns `data`
// through a user object whose release(data) runs once the graph and its
// instantiations are gone. `data` is taken in every case: when the call
// throws, release(data) has run or will run.
CUgraphNode add_host_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, CUhostFn fn, void* data,
                          CUhostFn release);

// Makes the graph own `data` (a user object moved into it): release(data)
// runs once the graph and its instantiations are gone, or now if this throws.
void graph_retain(GraphRef graph, void* data, CUhostFn release);

// A condition for conditional nodes of `graph` in `context`
// (cuGraphConditionalHandleCreate); with a default value it is reset to it
// at every launch.
CUgraphConditionalHandle create_graph_condition(GraphRef graph, CUcontext context, bool has_default,
                                                unsigned int default_value);

// What the graph holds (cuGraphGetNodes, cuGraphGetEdges).
std::vector<CUgraphNode> graph_nodes(GraphRef graph);
std::vector<std::pair<CUgraphNode, CUgraphNode>> graph_edges(GraphRef graph);

// A node's predecessors (cuGraphNodeGetDependencies) or successors
// (cuGraphNodeGetDependentNodes).
std::vector<CUgraphNode> node_neighbours(CUgraphNode node, bool successors);

// Adds or removes the edges from[i] -> to[i] (cuGraphAddDependencies,
// cuGraphRemoveDependencies).
void change_edges(GraphRef graph, const std::vector<CUgraphNode>& from, const std::vector<CUgraphNode>& to, bool add);

CUgraphNodeType node_type(CUgraphNode node);

// Removes the node and its edges (cuGraphDestroyNode).
void destroy_node(CUgraphNode node);

// Each node type's parameters, as the driver reports them.
CUDA_KERNEL_NODE_PARAMS kernel_node_params(CUgraphNode node);
CUDA_MEMSET_NODE_PARAMS memset_node_params(CUgraphNode node);
CUDA_MEMCPY3D memcpy_node_params(CUgraphNode node);
CUDA_MEM_ALLOC_NODE_PARAMS alloc_node_params(CUgraphNode node);
CUdeviceptr free_node_address(CUgraphNode node);
CUevent event_node_event(CUgraphNode node, bool record);
CUgraph child_graph_of(CUgraphNode node);
CUDA_HOST_NODE_PARAMS host_node_params(CUgraphNode node);

// New parameters for a node of a graph (cuGraphNodeSetParams).
void set_node_params(CUgraphNode node, CUgraphNodeParams& params);

// New parameters for the instance of `node` in an instantiation
// (cuGraphExecNodeSetParams); they apply to later launches.
void set_exec_node_params(CUgraphExec exec, CUgraphNode node, CUgraphNodeParams& params);

// Whether the instance of `node` runs (cuGraphNodeGetEnabled, cuGraphNodeSetEnabled).
bool exec_node_enabled(CUgraphExec exec, CUgraphNode node);
void set_exec_node_enabled(CUgraphExec exec, CUgraphNode node, bool enabled);

}  // namespace cubind

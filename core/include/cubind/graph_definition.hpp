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
#include "cubind/launch.hpp"

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

// Each node type's CUgraphNodeParams, built from plain values, for add_node,
// set_node_params and set_exec_node_params. They check nothing (the driver
// does, when the node is added or changed) and point into nothing they own.

// A kernel node: kernel(arguments...) on grid x block in `context` (null: the
// current one at add_node). `arguments` is an array of pointers to each
// argument's bytes, as cuLaunchKernel takes; the driver copies them.
struct KernelNode {
  CUkernel kernel = nullptr;
  CUcontext context = nullptr;
  Dim3 grid;
  Dim3 block;
  unsigned int shared_memory_bytes = 0;
  void** arguments = nullptr;
};
CUgraphNodeParams kernel_node(const KernelNode& node);

// A memset node: `height` rows of `width` elements of element_size (1, 2 or
// 4) bytes from `dst`, `pitch` bytes apart, set to `value`, in `context`.
struct MemsetNode {
  CUdeviceptr dst = 0;
  unsigned int value = 0;
  unsigned int element_size = 1;
  std::size_t width = 0;
  std::size_t height = 1;
  std::size_t pitch = 0;
  CUcontext context = nullptr;
};
CUgraphNodeParams memset_node(const MemsetNode& node);

// A memcpy node: `bytes` from `src` to `dst`, addresses of any kind (read
// through unified addressing), in `context`.
struct MemcpyNode {
  CUdeviceptr dst = 0;
  CUdeviceptr src = 0;
  std::size_t bytes = 0;
  CUcontext context = nullptr;
};
CUgraphNodeParams memcpy_node(const MemcpyNode& node);

// An event record node or an event wait node.
CUgraphNodeParams event_record_node(CUevent event);
CUgraphNodeParams event_wait_node(CUevent event);

// A child graph node: the node runs a copy of `child`, taken at add_node.
CUgraphNodeParams child_graph_node(GraphRef child);

// A host node calling fn(data) at every launch; `data` stays the caller's
// (add_host_node makes the graph own it).
CUgraphNodeParams host_node(CUhostFn fn, void* data);

// An empty node: an ordering point with no work.
CUgraphNode add_empty_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies);

// Where a graph allocation lives.
enum class GraphMemoryType {
  device,   // on `device` (CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE)
  host,     // pinned host memory (CU_MEM_LOCATION_TYPE_HOST)
  managed,  // managed memory, preferring `device` (CU_MEM_ALLOCATION_TYPE_MANAGED)
};

struct AllocNode {
  std::size_t bytes = 0;
  int device = 0;  // the device's ordinal; unused for host memory
  GraphMemoryType memory_type = GraphMemoryType::device;
  // Devices that may read and write it besides its own (read-write access).
  std::vector<int> peers;
};

// A memory allocation node and the address its memory will have: fixed when
// the node is added, valid from the node's run until a free node (or
// cuMemFreeAsync) frees it.
struct AddedAllocNode {
  CUgraphNode node = nullptr;
  CUdeviceptr address = 0;
};
// @throws std::invalid_argument for a null graph, CudaError from cuGraphAddNode
AddedAllocNode add_alloc_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, const AllocNode& alloc);

// A node freeing `address`, allocated by an alloc node of this graph (or of
// an earlier launch of another).
CUgraphNode add_free_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, CUdeviceptr address);

// A conditional node and the body graphs the driver created for it (owned by
// the node; fill them with add_node and the others, or begin_capture_into).
struct AddedConditionalNode {
  CUgraphNode node = nullptr;
  std::vector<CUgraph> bodies;
};
// Adds a conditional node on `condition` (create_graph_condition) in
// `context`: CU_GRAPH_COND_TYPE_IF with 1 or 2 bodies, _WHILE with 1,
// _SWITCH with any number.
// @throws std::invalid_argument for a null graph or a count the type does
// not take (before any driver call), CudaError from cuGraphAddNode
AddedConditionalNode add_conditional_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies,
                                          CUgraphConditionalHandle condition, CUgraphConditionalNodeType type,
                                          unsigned int count, CUcontext context);

// A node's parameters as the driver reports them, in one struct whatever its
// type; the fields its type does not have keep their defaults.
struct NodeInfo {
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  // Kernel.
  CUkernel kernel = nullptr;
  Dim3 grid;
  Dim3 block;
  unsigned int shared_memory_bytes = 0;
  // Memset (dst, value, element_size, width, height, pitch), memcpy (dst, src,
  // bytes), alloc (dst: the address, bytes, device, memory_type, peers), free (dst).
  CUdeviceptr dst = 0;
  CUdeviceptr src = 0;
  std::size_t bytes = 0;
  unsigned int value = 0;
  unsigned int element_size = 0;
  std::size_t width = 0;
  std::size_t height = 0;
  std::size_t pitch = 0;
  int device = 0;
  GraphMemoryType memory_type = GraphMemoryType::device;
  std::vector<int> peers;
  // Event record and event wait.
  CUevent event = nullptr;
  // Child graph: the node's own copy, owned by the node.
  CUgraph child = nullptr;
  // Host.
  CUhostFn fn = nullptr;
  void* data = nullptr;
};
// cuGraphNodeGetType, then the type's cuGraph*NodeGetParams. A conditional
// node reports its type only.
// @throws std::invalid_argument for a null node, CudaError
NodeInfo node_info(CUgraphNode node);

// Whether the instance of `node` runs (cuGraphNodeGetEnabled, cuGraphNodeSetEnabled).
bool exec_node_enabled(CUgraphExec exec, CUgraphNode node);
void set_exec_node_enabled(CUgraphExec exec, CUgraphNode node, bool enabled);

}  // namespace cubind

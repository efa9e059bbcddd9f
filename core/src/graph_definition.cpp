#include "cubind/graph_definition.hpp"

#include <stdexcept>
#include <string>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "conditional_bodies.hpp"

namespace cubind {

namespace {

CUgraph checked(GraphRef graph, const char* where) {
  if (graph.handle() == nullptr) throw std::invalid_argument(std::string(where) + ": the graph is null");
  return graph.handle();
}

CUgraphNode checked(CUgraphNode node, const char* where) {
  if (node == nullptr) throw std::invalid_argument(std::string(where) + ": the node is null");
  return node;
}

}  // namespace

Graph create_graph() {
  CUgraph graph = nullptr;
  detail::check(raw::cuGraphCreate(&graph, 0), "cuGraphCreate");
  return Graph::from_native_handle(graph);
}

Graph clone_graph(GraphRef graph) {
  CUgraph copy = nullptr;
  detail::check(raw::cuGraphClone(&copy, checked(graph, "cubind::clone_graph")), "cuGraphClone");
  return Graph::from_native_handle(copy);
}

CUgraphNode add_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, CUgraphNodeParams& params) {
  const CUgraph g = checked(graph, "cubind::add_node");
  CUgraphNode node = nullptr;
  detail::check(raw::cuGraphAddNode(&node, g, dependencies.data(), nullptr, dependencies.size(), &params),
                "cuGraphAddNode");
  return node;
}

void graph_retain(GraphRef graph, void* data, CUhostFn release) {
  if (release == nullptr) throw std::invalid_argument("cubind::graph_retain: a null release function");
  CUuserObject object = nullptr;
  try {
    checked(graph, "cubind::graph_retain");
    detail::check(raw::cuUserObjectCreate(&object, data, release, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
                  "cuUserObjectCreate");
  } catch (...) {
    release(data);
    throw;
  }
  // The user object owns `data` now: releasing it (on failure) runs `release`.
  const CUresult retained = raw::cuGraphRetainUserObject(graph.handle(), object, 1, CU_GRAPH_USER_OBJECT_MOVE);
  if (retained != CUDA_SUCCESS) {
    raw::cuUserObjectRelease(object, 1);
    detail::check(retained, "cuGraphRetainUserObject");
  }
}

CUgraphNode add_host_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, CUhostFn fn, void* data,
                          CUhostFn release) {
  if (fn == nullptr) {
    if (release != nullptr) release(data);
    throw std::invalid_argument("cubind::add_host_node: a null function");
  }
  graph_retain(graph, data, release);
  CUgraphNodeParams params{};
  params.type = CU_GRAPH_NODE_TYPE_HOST;
  params.host.fn = fn;
  params.host.userData = data;
  return add_node(graph, dependencies, params);
}

CUgraphConditionalHandle create_graph_condition(GraphRef graph, CUcontext context, bool has_default,
                                                unsigned int default_value) {
  const CUgraph g = checked(graph, "cubind::create_graph_condition");
  CUgraphConditionalHandle handle = 0;
  detail::check(raw::cuGraphConditionalHandleCreate(&handle, g, context, has_default ? default_value : 0,
                                                    has_default ? CU_GRAPH_COND_ASSIGN_DEFAULT : 0),
                "cuGraphConditionalHandleCreate");
  return handle;
}

std::vector<CUgraphNode> graph_nodes(GraphRef graph) {
  const CUgraph g = checked(graph, "cubind::graph_nodes");
  std::size_t count = 0;
  detail::check(raw::cuGraphGetNodes(g, nullptr, &count), "cuGraphGetNodes");
  std::vector<CUgraphNode> nodes(count);
  if (count != 0) detail::check(raw::cuGraphGetNodes(g, nodes.data(), &count), "cuGraphGetNodes");
  nodes.resize(count);
  return nodes;
}

std::vector<std::pair<CUgraphNode, CUgraphNode>> graph_edges(GraphRef graph) {
  const CUgraph g = checked(graph, "cubind::graph_edges");
  std::size_t count = 0;
  detail::check(raw::cuGraphGetEdges(g, nullptr, nullptr, nullptr, &count), "cuGraphGetEdges");
  std::vector<CUgraphNode> from(count), to(count);
  if (count != 0) detail::check(raw::cuGraphGetEdges(g, from.data(), to.data(), nullptr, &count), "cuGraphGetEdges");
  std::vector<std::pair<CUgraphNode, CUgraphNode>> edges;
  edges.reserve(count);
  for (std::size_t i = 0; i < count; ++i) edges.emplace_back(from[i], to[i]);
  return edges;
}

std::vector<CUgraphNode> node_neighbours(CUgraphNode node, bool successors) {
  checked(node, "cubind::node_neighbours");
  auto query = [&](CUgraphNode* out, std::size_t* count) {
    return successors ? raw::cuGraphNodeGetDependentNodes(node, out, nullptr, count)
                      : raw::cuGraphNodeGetDependencies(node, out, nullptr, count);
  };
  const char* name = successors ? "cuGraphNodeGetDependentNodes" : "cuGraphNodeGetDependencies";
  std::size_t count = 0;
  detail::check(query(nullptr, &count), name);
  std::vector<CUgraphNode> nodes(count);
  if (count != 0) detail::check(query(nodes.data(), &count), name);
  nodes.resize(count);
  return nodes;
}

void change_edges(GraphRef graph, const std::vector<CUgraphNode>& from, const std::vector<CUgraphNode>& to, bool add) {
  const CUgraph g = checked(graph, "cubind::change_edges");
  if (from.size() != to.size()) throw std::invalid_argument("cubind::change_edges: from and to differ in length");
  if (from.empty()) return;
  if (add) {
    detail::check(raw::cuGraphAddDependencies(g, from.data(), to.data(), nullptr, from.size()),
                  "cuGraphAddDependencies");
  } else {
    detail::check(raw::cuGraphRemoveDependencies(g, from.data(), to.data(), nullptr, from.size()),
                  "cuGraphRemoveDependencies");
  }
}

CUgraphNodeType node_type(CUgraphNode node) {
  CUgraphNodeType type{};
  detail::check(raw::cuGraphNodeGetType(checked(node, "cubind::node_type"), &type), "cuGraphNodeGetType");
  return type;
}

void destroy_node(CUgraphNode node) {
  detail::check(raw::cuGraphDestroyNode(checked(node, "cubind::destroy_node")), "cuGraphDestroyNode");
}

CUDA_KERNEL_NODE_PARAMS kernel_node_params(CUgraphNode node) {
  CUDA_KERNEL_NODE_PARAMS params{};
  detail::check(raw::cuGraphKernelNodeGetParams(checked(node, "cubind::kernel_node_params"), &params),
                "cuGraphKernelNodeGetParams");
  return params;
}

CUDA_MEMSET_NODE_PARAMS memset_node_params(CUgraphNode node) {
  CUDA_MEMSET_NODE_PARAMS params{};
  detail::check(raw::cuGraphMemsetNodeGetParams(checked(node, "cubind::memset_node_params"), &params),
                "cuGraphMemsetNodeGetParams");
  return params;
}

CUDA_MEMCPY3D memcpy_node_params(CUgraphNode node) {
  CUDA_MEMCPY3D params{};
  detail::check(raw::cuGraphMemcpyNodeGetParams(checked(node, "cubind::memcpy_node_params"), &params),
                "cuGraphMemcpyNodeGetParams");
  return params;
}

CUDA_MEM_ALLOC_NODE_PARAMS alloc_node_params(CUgraphNode node) {
  CUDA_MEM_ALLOC_NODE_PARAMS params{};
  detail::check(raw::cuGraphMemAllocNodeGetParams(checked(node, "cubind::alloc_node_params"), &params),
                "cuGraphMemAllocNodeGetParams");
  return params;
}

CUdeviceptr free_node_address(CUgraphNode node) {
  CUdeviceptr address = 0;
  detail::check(raw::cuGraphMemFreeNodeGetParams(checked(node, "cubind::free_node_address"), &address),
                "cuGraphMemFreeNodeGetParams");
  return address;
}

CUevent event_node_event(CUgraphNode node, bool record) {
  CUevent event = nullptr;
  checked(node, "cubind::event_node_event");
  if (record) {
    detail::check(raw::cuGraphEventRecordNodeGetEvent(node, &event), "cuGraphEventRecordNodeGetEvent");
  } else {
    detail::check(raw::cuGraphEventWaitNodeGetEvent(node, &event), "cuGraphEventWaitNodeGetEvent");
  }
  return event;
}

CUgraph child_graph_of(CUgraphNode node) {
  CUgraph graph = nullptr;
  detail::check(raw::cuGraphChildGraphNodeGetGraph(checked(node, "cubind::child_graph_of"), &graph),
                "cuGraphChildGraphNodeGetGraph");
  return graph;
}

CUDA_HOST_NODE_PARAMS host_node_params(CUgraphNode node) {
  CUDA_HOST_NODE_PARAMS params{};
  detail::check(raw::cuGraphHostNodeGetParams(checked(node, "cubind::host_node_params"), &params),
                "cuGraphHostNodeGetParams");
  return params;
}

void set_node_params(CUgraphNode node, CUgraphNodeParams& params) {
  detail::check(raw::cuGraphNodeSetParams(checked(node, "cubind::set_node_params"), &params), "cuGraphNodeSetParams");
}

void set_exec_node_params(CUgraphExec exec, CUgraphNode node, CUgraphNodeParams& params) {
  if (exec == nullptr) throw std::invalid_argument("cubind::set_exec_node_params: the instantiation is null");
  detail::check(raw::cuGraphExecNodeSetParams(exec, checked(node, "cubind::set_exec_node_params"), &params),
                "cuGraphExecNodeSetParams");
}

CUgraphNodeParams kernel_node(const KernelNode& node) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_KERNEL;
  p.kernel.kern = node.kernel;
  p.kernel.ctx = node.context;
  p.kernel.gridDimX = node.grid.x;
  p.kernel.gridDimY = node.grid.y;
  p.kernel.gridDimZ = node.grid.z;
  p.kernel.blockDimX = node.block.x;
  p.kernel.blockDimY = node.block.y;
  p.kernel.blockDimZ = node.block.z;
  p.kernel.sharedMemBytes = node.shared_memory_bytes;
  p.kernel.kernelParams = node.arguments;
  return p;
}

CUgraphNodeParams memset_node(const MemsetNode& node) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMSET;
  p.memset.dst = node.dst;
  p.memset.value = node.value;
  p.memset.elementSize = node.element_size;
  p.memset.width = node.width;
  p.memset.height = node.height;
  p.memset.pitch = node.pitch;
  p.memset.ctx = node.context;
  return p;
}

CUgraphNodeParams memcpy_node(const MemcpyNode& node) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  p.memcpy.copyCtx = node.context;
  p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.memcpy.copyParams.srcDevice = node.src;
  p.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.memcpy.copyParams.dstDevice = node.dst;
  p.memcpy.copyParams.WidthInBytes = node.bytes;
  p.memcpy.copyParams.Height = 1;
  p.memcpy.copyParams.Depth = 1;
  return p;
}

CUgraphNodeParams event_record_node(CUevent event) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
  p.eventRecord.event = event;
  return p;
}

CUgraphNodeParams event_wait_node(CUevent event) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
  p.eventWait.event = event;
  return p;
}

CUgraphNodeParams child_graph_node(GraphRef child) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_GRAPH;
  p.graph.graph = child.handle();
  return p;
}

CUgraphNodeParams host_node(CUhostFn fn, void* data) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_HOST;
  p.host.fn = fn;
  p.host.userData = data;
  return p;
}

CUgraphNode add_empty_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies) {
  checked(graph, "cubind::add_empty_node");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EMPTY;
  return add_node(graph, dependencies, p);
}

AddedAllocNode add_alloc_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, const AllocNode& alloc) {
  checked(graph, "cubind::add_alloc_node");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  p.alloc.bytesize = alloc.bytes;
  const bool host = alloc.memory_type == GraphMemoryType::host;
  p.alloc.poolProps.allocType =
      alloc.memory_type == GraphMemoryType::managed ? CU_MEM_ALLOCATION_TYPE_MANAGED : CU_MEM_ALLOCATION_TYPE_PINNED;
  p.alloc.poolProps.location.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  p.alloc.poolProps.location.id = host ? 0 : alloc.device;
  std::vector<CUmemAccessDesc> access(alloc.peers.size());
  for (std::size_t i = 0; i < alloc.peers.size(); ++i) {
    access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[i].location.id = alloc.peers[i];
    access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  p.alloc.accessDescs = access.data();
  p.alloc.accessDescCount = access.size();
  AddedAllocNode added;
  added.node = add_node(graph, dependencies, p);
  added.address = p.alloc.dptr;
  return added;
}

CUgraphNode add_free_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies, CUdeviceptr address) {
  checked(graph, "cubind::add_free_node");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  p.free.dptr = address;
  return add_node(graph, dependencies, p);
}

AddedConditionalNode add_conditional_node(GraphRef graph, const std::vector<CUgraphNode>& dependencies,
                                          CUgraphConditionalHandle condition, CUgraphConditionalNodeType type,
                                          unsigned int count, CUcontext context) {
  checked(graph, "cubind::add_conditional_node");
  detail::require_conditional_body_count(type, count, "cubind::add_conditional_node");
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = condition;
  p.conditional.type = type;
  p.conditional.size = count;
  p.conditional.ctx = context;
  AddedConditionalNode added;
  added.node = add_node(graph, dependencies, p);
  added.bodies.assign(p.conditional.phGraph_out, p.conditional.phGraph_out + count);
  return added;
}

NodeInfo node_info(CUgraphNode node) {
  checked(node, "cubind::node_info");
  NodeInfo info;
  info.type = node_type(node);
  switch (info.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const CUDA_KERNEL_NODE_PARAMS p = kernel_node_params(node);
      info.kernel = p.kern;
      info.grid = Dim3(p.gridDimX, p.gridDimY, p.gridDimZ);
      info.block = Dim3(p.blockDimX, p.blockDimY, p.blockDimZ);
      info.shared_memory_bytes = p.sharedMemBytes;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS p = memset_node_params(node);
      info.dst = p.dst;
      info.value = p.value;
      info.element_size = p.elementSize;
      info.width = p.width;
      info.height = p.height;
      info.pitch = p.pitch;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      const CUDA_MEMCPY3D p = memcpy_node_params(node);
      info.dst = p.dstMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(p.dstHost) : p.dstDevice;
      info.src = p.srcMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(p.srcHost) : p.srcDevice;
      info.bytes = p.WidthInBytes;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      const CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_node_params(node);
      info.dst = p.dptr;
      info.bytes = p.bytesize;
      info.device = p.poolProps.location.id;
      info.memory_type = p.poolProps.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED ? GraphMemoryType::managed
                         : p.poolProps.location.type == CU_MEM_LOCATION_TYPE_HOST ? GraphMemoryType::host
                                                                                  : GraphMemoryType::device;
      for (std::size_t i = 0; i < p.accessDescCount; ++i) info.peers.push_back(p.accessDescs[i].location.id);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: info.dst = free_node_address(node); break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: info.event = event_node_event(node, true); break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: info.event = event_node_event(node, false); break;
    case CU_GRAPH_NODE_TYPE_GRAPH: info.child = child_graph_of(node); break;
    case CU_GRAPH_NODE_TYPE_HOST: {
      const CUDA_HOST_NODE_PARAMS p = host_node_params(node);
      info.fn = p.fn;
      info.data = p.userData;
      break;
    }
    default: break;
  }
  return info;
}

bool exec_node_enabled(CUgraphExec exec, CUgraphNode node) {
  if (exec == nullptr) throw std::invalid_argument("cubind::exec_node_enabled: the instantiation is null");
  unsigned int enabled = 0;
  detail::check(raw::cuGraphNodeGetEnabled(exec, checked(node, "cubind::exec_node_enabled"), &enabled),
                "cuGraphNodeGetEnabled");
  return enabled != 0;
}

void set_exec_node_enabled(CUgraphExec exec, CUgraphNode node, bool enabled) {
  if (exec == nullptr) throw std::invalid_argument("cubind::set_exec_node_enabled: the instantiation is null");
  detail::check(raw::cuGraphNodeSetEnabled(exec, checked(node, "cubind::set_exec_node_enabled"), enabled ? 1 : 0),
                "cuGraphNodeSetEnabled");
}

}  // namespace cubind

// What cubind.core's GraphDefinition needs beside the C++ core: each node
// type's CUgraphNodeParams built from plain values (one function per type,
// used to add a node, to change it in its graph, and to change it in an
// instantiation), and a node's parameters read back into one plain struct.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <vector>

#include "cubind/graph.hpp"
#include "cubind/graph_definition.hpp"

namespace cubind_core {

// Owners on the heap, for a Python object to hold.
inline cubind::Graph* graph_create_new() { return new cubind::Graph(cubind::create_graph()); }

inline CUgraphNodeParams kernel_node(CUkernel kernel, CUcontext context, const unsigned int* grid,
                                     const unsigned int* block, unsigned int shmem, void** arguments) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_KERNEL;
  p.kernel.kern = kernel;
  p.kernel.ctx = context;
  p.kernel.gridDimX = grid[0];
  p.kernel.gridDimY = grid[1];
  p.kernel.gridDimZ = grid[2];
  p.kernel.blockDimX = block[0];
  p.kernel.blockDimY = block[1];
  p.kernel.blockDimZ = block[2];
  p.kernel.sharedMemBytes = shmem;
  p.kernel.kernelParams = arguments;
  return p;
}

inline CUgraphNodeParams memset_node(CUdeviceptr dst, unsigned int value, unsigned int element_size, std::size_t width,
                                     std::size_t height, std::size_t pitch, CUcontext context) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMSET;
  p.memset.dst = dst;
  p.memset.value = value;
  p.memset.elementSize = element_size;
  p.memset.width = width;
  p.memset.height = height;
  p.memset.pitch = pitch;
  p.memset.ctx = context;
  return p;
}

// A one-dimensional copy between addresses of any kind (unified addressing).
inline CUgraphNodeParams memcpy_node(CUdeviceptr dst, CUdeviceptr src, std::size_t size, CUcontext context) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
  p.memcpy.copyCtx = context;
  p.memcpy.copyParams.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.memcpy.copyParams.srcDevice = src;
  p.memcpy.copyParams.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  p.memcpy.copyParams.dstDevice = dst;
  p.memcpy.copyParams.WidthInBytes = size;
  p.memcpy.copyParams.Height = 1;
  p.memcpy.copyParams.Depth = 1;
  return p;
}

inline CUgraphNodeParams event_node(CUevent event, bool record) {
  CUgraphNodeParams p{};
  p.type = record ? CU_GRAPH_NODE_TYPE_EVENT_RECORD : CU_GRAPH_NODE_TYPE_WAIT_EVENT;
  if (record) {
    p.eventRecord.event = event;
  } else {
    p.eventWait.event = event;
  }
  return p;
}

inline CUgraphNodeParams child_node(CUgraph child) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_GRAPH;
  p.graph.graph = child;
  return p;
}

inline CUgraphNodeParams host_node(CUhostFn fn, void* data) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_HOST;
  p.host.fn = fn;
  p.host.userData = data;
  return p;
}

inline CUgraphNode add_empty(CUgraph graph, const std::vector<CUgraphNode>& deps) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_EMPTY;
  return cubind::add_node(cubind::GraphRef(graph), deps, p);
}

inline CUgraphNode add_params(CUgraph graph, const std::vector<CUgraphNode>& deps, CUgraphNodeParams params) {
  return cubind::add_node(cubind::GraphRef(graph), deps, params);
}

// memory_type: 0 device, 1 host, 2 managed. Peers get read-write access.
inline CUgraphNode add_alloc(CUgraph graph, const std::vector<CUgraphNode>& deps, std::size_t size, int device,
                             int memory_type, const std::vector<int>& peers, CUdeviceptr* address) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  p.alloc.bytesize = size;
  p.alloc.poolProps.allocType = memory_type == 2 ? CU_MEM_ALLOCATION_TYPE_MANAGED : CU_MEM_ALLOCATION_TYPE_PINNED;
  p.alloc.poolProps.location.type = memory_type == 1 ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  p.alloc.poolProps.location.id = memory_type == 1 ? 0 : device;
  std::vector<CUmemAccessDesc> access(peers.size());
  for (std::size_t i = 0; i < peers.size(); ++i) {
    access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[i].location.id = peers[i];
    access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  p.alloc.accessDescs = access.data();
  p.alloc.accessDescCount = access.size();
  const CUgraphNode node = cubind::add_node(cubind::GraphRef(graph), deps, p);
  *address = p.alloc.dptr;
  return node;
}

inline CUgraphNode add_free(CUgraph graph, const std::vector<CUgraphNode>& deps, CUdeviceptr address) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  p.free.dptr = address;
  return cubind::add_node(cubind::GraphRef(graph), deps, p);
}

// Adds a conditional node; its bodies (owned by the node) go to `bodies`.
inline CUgraphNode add_conditional(CUgraph graph, const std::vector<CUgraphNode>& deps,
                                   CUgraphConditionalHandle condition, CUgraphConditionalNodeType type,
                                   unsigned int count, CUcontext context, std::vector<CUgraph>* bodies) {
  CUgraphNodeParams p{};
  p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  p.conditional.handle = condition;
  p.conditional.type = type;
  p.conditional.size = count;
  p.conditional.ctx = context;
  const CUgraphNode node = cubind::add_node(cubind::GraphRef(graph), deps, p);
  bodies->assign(p.conditional.phGraph_out, p.conditional.phGraph_out + count);
  return node;
}

// New parameters for a node of its graph (exec null) or of an instantiation.
inline void set_params(CUgraphExec exec, CUgraphNode node, CUgraphNodeParams params) {
  if (exec == nullptr) {
    cubind::set_node_params(node, params);
  } else {
    cubind::set_exec_node_params(exec, node, params);
  }
}

// A node's parameters, whichever fields its type has.
struct NodeInfo {
  unsigned int grid[3] = {0, 0, 0};
  unsigned int block[3] = {0, 0, 0};
  unsigned int shmem = 0;
  CUkernel kernel = nullptr;
  CUdeviceptr dst = 0;
  CUdeviceptr src = 0;
  std::size_t size = 0;
  std::size_t width = 0;
  std::size_t height = 0;
  std::size_t pitch = 0;
  unsigned int value = 0;
  unsigned int element_size = 0;
  int device = 0;
  int memory_type = 0;
  std::vector<int> peers;
  CUevent event = nullptr;
  CUgraph child = nullptr;
};

inline NodeInfo node_info(CUgraphNode node, CUgraphNodeType type) {
  NodeInfo info;
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const CUDA_KERNEL_NODE_PARAMS p = cubind::kernel_node_params(node);
      info.grid[0] = p.gridDimX, info.grid[1] = p.gridDimY, info.grid[2] = p.gridDimZ;
      info.block[0] = p.blockDimX, info.block[1] = p.blockDimY, info.block[2] = p.blockDimZ;
      info.shmem = p.sharedMemBytes;
      info.kernel = p.kern;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const CUDA_MEMSET_NODE_PARAMS p = cubind::memset_node_params(node);
      info.dst = p.dst, info.value = p.value, info.element_size = p.elementSize;
      info.width = p.width, info.height = p.height, info.pitch = p.pitch;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      const CUDA_MEMCPY3D p = cubind::memcpy_node_params(node);
      info.dst = p.dstMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(p.dstHost) : p.dstDevice;
      info.src = p.srcMemoryType == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(p.srcHost) : p.srcDevice;
      info.size = p.WidthInBytes;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      const CUDA_MEM_ALLOC_NODE_PARAMS p = cubind::alloc_node_params(node);
      info.dst = p.dptr, info.size = p.bytesize;
      info.device = p.poolProps.location.id;
      info.memory_type = p.poolProps.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED      ? 2
                         : p.poolProps.location.type == CU_MEM_LOCATION_TYPE_HOST ? 1
                                                                                  : 0;
      for (std::size_t i = 0; i < p.accessDescCount; ++i) info.peers.push_back(p.accessDescs[i].location.id);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: info.dst = cubind::free_node_address(node); break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: info.event = cubind::event_node_event(node, true); break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: info.event = cubind::event_node_event(node, false); break;
    case CU_GRAPH_NODE_TYPE_GRAPH: info.child = cubind::child_graph_of(node); break;
    default: break;
  }
  return info;
}

}  // namespace cubind_core

// Graphs built node by node on a real GPU: a memset node and a kernel node
// after it, read back as nodes and edges, instantiated and run; an
// instantiation's memset changed in place; a host node whose data the graph
// owns; every node type built from cubind's typed structs and read back by
// node_info with what was set; a conditional node's bodies. Every test skips
// with its reason where there is no GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/event.hpp"
#include "cubind/graph.hpp"
#include "cubind/graph_definition.hpp"
#include "cubind/kernel.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Buffer;
using cubind::Stream;
using cubind_test::count_host_call;
using cubind_test::host_calls;
using cubind_test::host_releases;
using cubind_test::release_host_data;

class GraphDefinitionGpu : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    stream.emplace(dev());
    pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
    pinned = std::make_shared<cubind::PinnedMemoryResource>(dev());
    context = dev().primary_context().handle();
  }

  int read_word(const Buffer& words) {
    Buffer host = Buffer::allocate(pinned, 4, *stream);
    words.copy_to(host.data(), 4, *stream);
    stream->sync();
    return *static_cast<int*>(host.data());
  }

  CUgraphNodeParams memset_params(const Buffer& words, unsigned int value) const {
    CUgraphNodeParams params{};
    params.type = CU_GRAPH_NODE_TYPE_MEMSET;
    params.memset.dst = reinterpret_cast<CUdeviceptr>(words.handle());
    params.memset.value = value;
    params.memset.elementSize = 4;
    params.memset.width = 1;
    params.memset.height = 1;
    params.memset.ctx = context;
    return params;
  }

  std::optional<Stream> stream;
  std::shared_ptr<cubind::DeviceMemoryResource> pool;
  std::shared_ptr<cubind::PinnedMemoryResource> pinned;
  CUcontext context = nullptr;
};

TEST_F(GraphDefinitionGpu, MemsetThenKernelRunsAndReadsBack) {
  const cubind::ComputeCapability cc = dev().compute_capability();
  cubind::Program program(R"(extern "C" __global__ void add_one(int* word) { *word += 1; })", "add_one.cu");
  cubind::ProgramOptions options;
  options.arch = "sm_" + std::to_string(cc.major * 10 + cc.minor);
  cubind::CompileResult compiled = program.compile(cubind::CodeKind::cubin, options, {});
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const cubind::Kernel add_one = compiled.code.get_kernel("add_one");

  Buffer words = Buffer::allocate(pool, 64, *stream);
  stream->sync();
  cubind::Graph graph = cubind::create_graph();
  CUgraphNodeParams fill = memset_params(words, 7);
  const CUgraphNode memset = cubind::add_node(graph, {}, fill);

  CUdeviceptr address = reinterpret_cast<CUdeviceptr>(words.handle());
  void* arguments[] = {&address};
  CUgraphNodeParams launch{};
  launch.type = CU_GRAPH_NODE_TYPE_KERNEL;
  launch.kernel.kern = add_one.handle();
  launch.kernel.ctx = context;
  launch.kernel.gridDimX = launch.kernel.gridDimY = launch.kernel.gridDimZ = 1;
  launch.kernel.blockDimX = launch.kernel.blockDimY = launch.kernel.blockDimZ = 1;
  launch.kernel.kernelParams = arguments;
  const CUgraphNode kernel = cubind::add_node(graph, {memset}, launch);

  EXPECT_EQ(cubind::graph_nodes(graph).size(), 2u);
  const auto edges = cubind::graph_edges(graph);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0], std::make_pair(memset, kernel));
  EXPECT_EQ(cubind::node_type(kernel), CU_GRAPH_NODE_TYPE_KERNEL);
  EXPECT_EQ(cubind::node_neighbours(kernel, false), std::vector<CUgraphNode>{memset});
  EXPECT_EQ(cubind::node_neighbours(memset, true), std::vector<CUgraphNode>{kernel});
  EXPECT_EQ(cubind::memset_node_params(memset).value, 7u);

  cubind::GraphExec exec = cubind::instantiate(graph, context, {});
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 8);

  CUgraphNodeParams twenty = memset_params(words, 20);
  cubind::set_exec_node_params(exec.handle(), memset, twenty);
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 21);

  cubind::set_exec_node_enabled(exec.handle(), kernel, false);
  EXPECT_FALSE(cubind::exec_node_enabled(exec.handle(), kernel));
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 20);

  cubind::change_edges(graph, {memset}, {kernel}, false);
  EXPECT_TRUE(cubind::graph_edges(graph).empty());
  cubind::destroy_node(kernel);
  EXPECT_EQ(cubind::graph_nodes(graph).size(), 1u);
}

TEST_F(GraphDefinitionGpu, HostNodeRunsAtEveryLaunchAndItsDataLivesAsLongAsTheGraph) {
  host_calls = 0;
  host_releases = 0;
  {
    cubind::Graph graph = cubind::create_graph();
    cubind::add_host_node(graph, {}, count_host_call, new int(3), release_host_data);
    cubind::Graph copy = cubind::clone_graph(graph);
    EXPECT_EQ(cubind::graph_nodes(copy).size(), 1u);
    cubind::GraphExec exec = cubind::instantiate(graph, context, {});
    exec.launch(*stream);
    exec.launch(*stream);
    stream->sync();
    EXPECT_EQ(host_calls.load(), 6);
    EXPECT_EQ(host_releases.load(), 0);
  }
  // User objects are released asynchronously, after the graph is gone.
  stream->sync();
  for (int i = 0; i < 1000 && host_releases.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(host_releases.load(), 1);
}

cubind::Kernel compile_add_one(const cubind::Device& device, std::optional<cubind::ObjectCode>& keep) {
  const cubind::ComputeCapability cc = device.compute_capability();
  cubind::Program program(R"(extern "C" __global__ void add_one(int* word) { *word += 1; })", "add_one.cu");
  cubind::ProgramOptions options;
  options.arch = "sm_" + std::to_string(cc.major * 10 + cc.minor);
  cubind::CompileResult compiled = program.compile(cubind::CodeKind::cubin, options, {});
  EXPECT_TRUE(compiled.ok) << compiled.log;
  keep.emplace(std::move(compiled.code));
  return keep->get_kernel("add_one");
}

TEST_F(GraphDefinitionGpu, EveryNodeTypeReadsBackWhatWasSet) {
  std::optional<cubind::ObjectCode> code;
  const cubind::Kernel add_one = compile_add_one(dev(), code);
  Buffer words = Buffer::allocate(pool, 64, *stream);
  Buffer host = Buffer::allocate(pinned, 64, *stream);
  stream->sync();
  const cubind::Event event(dev());
  cubind::Graph child = cubind::create_graph();
  cubind::add_empty_node(child, {});
  cubind::Graph graph = cubind::create_graph();

  const CUgraphNode empty = cubind::add_empty_node(graph, {});
  EXPECT_EQ(cubind::node_info(empty).type, CU_GRAPH_NODE_TYPE_EMPTY);

  cubind::AllocNode alloc;
  alloc.bytes = 4096;
  alloc.device = dev().ordinal();
  const cubind::AddedAllocNode allocated = cubind::add_alloc_node(graph, {empty}, alloc);
  EXPECT_NE(allocated.address, 0u);
  const cubind::NodeInfo alloc_info = cubind::node_info(allocated.node);
  EXPECT_EQ(alloc_info.type, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  EXPECT_EQ(alloc_info.dst, allocated.address);
  EXPECT_EQ(alloc_info.bytes, 4096u);
  EXPECT_EQ(alloc_info.device, dev().ordinal());
  EXPECT_EQ(alloc_info.memory_type, cubind::GraphMemoryType::device);
  EXPECT_TRUE(alloc_info.peers.empty());

  cubind::MemsetNode set;
  set.dst = allocated.address;
  set.value = 41;
  set.element_size = 4;
  set.width = 1;
  set.context = context;
  CUgraphNodeParams set_params = cubind::memset_node(set);
  const CUgraphNode memset = cubind::add_node(graph, {allocated.node}, set_params);
  const cubind::NodeInfo set_info = cubind::node_info(memset);
  EXPECT_EQ(set_info.type, CU_GRAPH_NODE_TYPE_MEMSET);
  EXPECT_EQ(set_info.dst, allocated.address);
  EXPECT_EQ(set_info.value, 41u);
  EXPECT_EQ(set_info.element_size, 4u);
  EXPECT_EQ(set_info.width, 1u);
  EXPECT_EQ(set_info.height, 1u);

  CUdeviceptr address = allocated.address;
  void* arguments[] = {&address};
  cubind::KernelNode launch;
  launch.kernel = add_one.handle();
  launch.context = context;
  launch.grid = cubind::Dim3(1, 1, 1);
  launch.block = cubind::Dim3(1, 1, 1);
  launch.shared_memory_bytes = 16;
  launch.arguments = arguments;
  CUgraphNodeParams launch_params = cubind::kernel_node(launch);
  const CUgraphNode kernel = cubind::add_node(graph, {memset}, launch_params);
  const cubind::NodeInfo kernel_info = cubind::node_info(kernel);
  EXPECT_EQ(kernel_info.type, CU_GRAPH_NODE_TYPE_KERNEL);
  EXPECT_EQ(kernel_info.kernel, add_one.handle());
  EXPECT_EQ(kernel_info.grid.x, 1u);
  EXPECT_EQ(kernel_info.block.x, 1u);
  EXPECT_EQ(kernel_info.shared_memory_bytes, 16u);

  CUgraphNodeParams record_params = cubind::event_record_node(event.handle());
  const CUgraphNode record = cubind::add_node(graph, {kernel}, record_params);
  EXPECT_EQ(cubind::node_info(record).type, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  EXPECT_EQ(cubind::node_info(record).event, event.handle());
  CUgraphNodeParams wait_params = cubind::event_wait_node(event.handle());
  const CUgraphNode wait = cubind::add_node(graph, {record}, wait_params);
  EXPECT_EQ(cubind::node_info(wait).type, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  EXPECT_EQ(cubind::node_info(wait).event, event.handle());

  cubind::MemcpyNode copy{host.handle(), allocated.address, 4, context};
  CUgraphNodeParams copy_params = cubind::memcpy_node(copy);
  const CUgraphNode memcpy = cubind::add_node(graph, {wait}, copy_params);
  const cubind::NodeInfo copy_info = cubind::node_info(memcpy);
  EXPECT_EQ(copy_info.type, CU_GRAPH_NODE_TYPE_MEMCPY);
  EXPECT_EQ(copy_info.dst, host.handle());
  EXPECT_EQ(copy_info.src, allocated.address);
  EXPECT_EQ(copy_info.bytes, 4u);

  const CUgraphNode freed = cubind::add_free_node(graph, {memcpy}, allocated.address);
  EXPECT_EQ(cubind::node_info(freed).type, CU_GRAPH_NODE_TYPE_MEM_FREE);
  EXPECT_EQ(cubind::node_info(freed).dst, allocated.address);

  CUgraphNodeParams child_params = cubind::child_graph_node(child);
  const CUgraphNode nested = cubind::add_node(graph, {freed}, child_params);
  const cubind::NodeInfo child_info = cubind::node_info(nested);
  EXPECT_EQ(child_info.type, CU_GRAPH_NODE_TYPE_GRAPH);
  ASSERT_NE(child_info.child, nullptr);
  EXPECT_EQ(cubind::graph_nodes(cubind::GraphRef(child_info.child)).size(), 1u);

  int seven = 7;
  CUgraphNodeParams host_params = cubind::host_node(count_host_call, &seven);
  const CUgraphNode callback = cubind::add_node(graph, {nested}, host_params);
  const cubind::NodeInfo host_info = cubind::node_info(callback);
  EXPECT_EQ(host_info.type, CU_GRAPH_NODE_TYPE_HOST);
  EXPECT_EQ(host_info.fn, &count_host_call);
  EXPECT_EQ(host_info.data, &seven);

  // The graph runs: allocate, set 41, add one, copy 42 out, free, call back.
  host_calls = 0;
  cubind::GraphExec exec = cubind::instantiate(graph, context, {});
  exec.launch(*stream);
  stream->sync();
  EXPECT_EQ(*static_cast<int*>(host.data()), 42);
  EXPECT_EQ(host_calls.load(), 7);

  // New parameters, in the graph and in the instantiation.
  set.value = 99;
  CUgraphNodeParams changed = cubind::memset_node(set);
  cubind::set_node_params(memset, changed);
  EXPECT_EQ(cubind::node_info(memset).value, 99u);
  set.value = 9;
  changed = cubind::memset_node(set);
  cubind::set_exec_node_params(exec.handle(), memset, changed);
  exec.launch(*stream);
  stream->sync();
  EXPECT_EQ(*static_cast<int*>(host.data()), 10);
}

TEST_F(GraphDefinitionGpu, HostAndManagedAllocNodesReadBackTheirMemoryType) {
  cubind::Graph graph = cubind::create_graph();
  cubind::AllocNode alloc;
  alloc.bytes = 1 << 16;
  alloc.device = dev().ordinal();
  alloc.memory_type = cubind::GraphMemoryType::managed;
  try {
    const cubind::AddedAllocNode managed = cubind::add_alloc_node(graph, {}, alloc);
    EXPECT_EQ(cubind::node_info(managed.node).memory_type, cubind::GraphMemoryType::managed);
  } catch (const cubind::CudaError& e) {
    // Graph allocations of managed memory need a recent driver.
    EXPECT_EQ(e.status(), CUDA_ERROR_NOT_SUPPORTED) << e.what();
  }
  alloc.memory_type = cubind::GraphMemoryType::host;
  try {
    const cubind::AddedAllocNode pinned_alloc = cubind::add_alloc_node(graph, {}, alloc);
    const cubind::NodeInfo info = cubind::node_info(pinned_alloc.node);
    EXPECT_EQ(info.memory_type, cubind::GraphMemoryType::host);
    EXPECT_EQ(info.bytes, static_cast<std::size_t>(1 << 16));
  } catch (const cubind::CudaError& e) {
    EXPECT_EQ(e.status(), CUDA_ERROR_NOT_SUPPORTED) << e.what();
  }
}

TEST_F(GraphDefinitionGpu, ConditionalNodeReturnsTheBodiesTheDriverMade) {
  cubind::Graph graph = cubind::create_graph();
  const CUgraphConditionalHandle condition = cubind::create_graph_condition(graph, context, true, 1);
  const cubind::AddedConditionalNode added =
      cubind::add_conditional_node(graph, {}, condition, CU_GRAPH_COND_TYPE_IF, 2, context);
  ASSERT_EQ(added.bodies.size(), 2u);
  EXPECT_NE(added.bodies[0], nullptr);
  EXPECT_NE(added.bodies[1], nullptr);
  EXPECT_NE(added.bodies[0], added.bodies[1]);
  EXPECT_EQ(cubind::node_info(added.node).type, CU_GRAPH_NODE_TYPE_CONDITIONAL);

  // The condition defaults to 1: the first body (the "then" branch) runs.
  Buffer words = Buffer::allocate(pool, 64, *stream);
  stream->sync();
  cubind::MemsetNode then_set;
  then_set.dst = words.handle();
  then_set.value = 1;
  then_set.element_size = 4;
  then_set.width = 1;
  then_set.context = context;
  cubind::MemsetNode else_set = then_set;
  else_set.value = 2;
  CUgraphNodeParams then_params = cubind::memset_node(then_set);
  CUgraphNodeParams else_params = cubind::memset_node(else_set);
  cubind::add_node(cubind::GraphRef(added.bodies[0]), {}, then_params);
  cubind::add_node(cubind::GraphRef(added.bodies[1]), {}, else_params);
  cubind::GraphExec exec = cubind::instantiate(graph, context, {});
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 1);

  // A handle belongs to one conditional node: the loop gets its own.
  const CUgraphConditionalHandle again = cubind::create_graph_condition(graph, context, false, 0);
  const cubind::AddedConditionalNode loop =
      cubind::add_conditional_node(graph, {added.node}, again, CU_GRAPH_COND_TYPE_WHILE, 1, context);
  EXPECT_EQ(loop.bodies.size(), 1u);
}

}  // namespace


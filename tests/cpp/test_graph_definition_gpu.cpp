// Graphs built node by node on a real GPU: a memset node and a kernel node
// after it, read back as nodes and edges, instantiated and run; an
// instantiation's memset changed in place; a host node whose data the graph
// owns. Every test skips with its reason where there is no GPU.
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
#include "cubind/graph.hpp"
#include "cubind/graph_definition.hpp"
#include "cubind/kernel.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/stream.hpp"
#include "runtime_test_support.hpp"

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

}  // namespace

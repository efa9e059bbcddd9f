// Graphs built by stream capture on a real GPU: instantiation options, update
// of an instantiation, conditional nodes driven by device code, child graphs
// and host callbacks whose data the graph owns. Every test skips with its
// reason where there is no GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/graph.hpp"
#include "cubind/graph_capture.hpp"
#include "cubind/graph_memory_resource.hpp"
#include "cubind/kernel.hpp"
#include "cubind/launch.hpp"
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
using cubind_test::message_of;
using cubind_test::release_host_data;
using namespace std::chrono_literals;

// cudaGraphSetConditional is a device-runtime builtin NVRTC lowers itself:
// declared, it needs no -rdc and no cudadevrt.
constexpr const char* kKernels = R"(
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                                 unsigned int value);
extern "C" __global__ void add_one(int* word) { *word += 1; }
extern "C" __global__ void count_to(int* word, int limit, cudaGraphConditionalHandle condition) {
  *word += 1;
  cudaGraphSetConditional(condition, *word < limit ? 1u : 0u);
}
extern "C" __global__ void set_condition(cudaGraphConditionalHandle condition, unsigned int value) {
  cudaGraphSetConditional(condition, value);
}
)";

class GraphCaptureGpu : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    stream.emplace(dev());
    pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
    pinned = std::make_shared<cubind::PinnedMemoryResource>(dev());
  }

  cubind::ObjectCode compile() const {
    const cubind::ComputeCapability cc = dev().compute_capability();
    cubind::Program program(kKernels, "graph_kernels.cu");
    cubind::ProgramOptions options;
    options.arch = "sm_" + std::to_string(cc.major * 10 + cc.minor);
    options.extra = {"-std=c++17"};
    cubind::CompileResult result = program.compile(cubind::CodeKind::cubin, options, {});
    EXPECT_TRUE(result.ok) << result.log;
    return std::move(result.code);
  }

  // The int at the start of a device buffer, read through pinned memory.
  int read_word(const Buffer& words) {
    Buffer host = Buffer::allocate(pinned, 4, *stream);
    words.copy_to(host.data(), 4, *stream);
    stream->sync();
    return *static_cast<int*>(host.data());
  }

  std::optional<Stream> stream;
  std::shared_ptr<cubind::DeviceMemoryResource> pool;
  std::shared_ptr<cubind::PinnedMemoryResource> pinned;
};

TEST_F(GraphCaptureGpu, CaptureStatusFollowsTheCapture) {
  EXPECT_EQ(cubind::capture_status(*stream), cubind::CaptureStatus::none);
  stream->begin_capture(CU_STREAM_CAPTURE_MODE_RELAXED);
  EXPECT_EQ(cubind::capture_status(*stream), cubind::CaptureStatus::active);
  EXPECT_NE(cubind::capturing_graph(*stream, "test"), nullptr);
  const cubind::Graph graph = stream->end_capture();
  EXPECT_EQ(cubind::capture_status(*stream), cubind::CaptureStatus::none);
  const std::string message = message_of<std::logic_error>([&] { cubind::capturing_graph(*stream, "here"); });
  EXPECT_NE(message.find("here: the stream is not capturing"), std::string::npos) << message;
}

TEST_F(GraphCaptureGpu, InstantiateWithUploadRunsAndUpdateTakesNewParameters) {
  Buffer words = Buffer::allocate(pool, 64, *stream);
  stream->begin_capture();
  words.fill(std::uint32_t{7}, *stream);
  cubind::Graph sevens = stream->end_capture();
  stream->begin_capture();
  words.fill(std::uint32_t{9}, *stream);
  cubind::Graph nines = stream->end_capture();

  cubind::GraphInstantiateOptions options;
  options.upload_stream = stream->handle();
  cubind::GraphExec exec = cubind::instantiate(sevens, dev().primary_context().handle(), options);
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 7);
  exec.update(nines);
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 9);

  stream->begin_capture();
  words.fill(std::uint32_t{1}, *stream);
  words.fill(std::uint32_t{2}, *stream);
  cubind::Graph two_nodes = stream->end_capture();
  const std::string message = message_of<cubind::CudaError>([&] { exec.update(two_nodes); });
  EXPECT_NE(message.find("cuGraphExecUpdate"), std::string::npos) << message;
  EXPECT_NE(message.find("CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED"), std::string::npos) << message;
  exec.launch(*stream);
  EXPECT_EQ(read_word(words), 9) << "a failed update leaves the instantiation as it was";
}

TEST_F(GraphCaptureGpu, InstantiateRefusesDeviceLaunchWithAutoFree) {
  stream->begin_capture();
  cubind::Graph graph = stream->end_capture();
  cubind::GraphInstantiateOptions options;
  options.device_launch = true;
  options.auto_free_on_launch = true;
  EXPECT_THROW(cubind::instantiate(graph, nullptr, options), std::invalid_argument);
}

TEST_F(GraphCaptureGpu, WhileNodeCountsToTheLimitSetByDeviceCode) {
  const cubind::ObjectCode code = compile();
  const cubind::Kernel count_to = code.get_kernel("count_to");
  Buffer word = Buffer::allocate(pool, 4, *stream);
  constexpr int kLimit = 37;

  stream->begin_capture();
  word.fill(std::uint32_t{0}, *stream);
  const CUgraphConditionalHandle condition = cubind::create_condition(*stream, 1u);
  const std::vector<CUgraph> bodies = cubind::capture_conditional(*stream, condition, CU_GRAPH_COND_TYPE_WHILE, 1);
  ASSERT_EQ(bodies.size(), 1u);
  Stream body_stream(dev());
  cubind::begin_capture_into(body_stream, cubind::GraphRef(bodies[0]), CU_STREAM_CAPTURE_MODE_RELAXED);
  void* address = word.data();
  cubind::launch(body_stream, cubind::LaunchConfig(1, 1), count_to, address, kLimit, condition);
  cubind::end_capture_into(body_stream);
  cubind::Graph graph = stream->end_capture();

  cubind::GraphExec exec = cubind::instantiate(graph, dev().primary_context().handle(), {});
  for (int run = 0; run < 3; ++run) {
    exec.launch(*stream);
    EXPECT_EQ(read_word(word), kLimit) << "run " << run;
  }
}

TEST_F(GraphCaptureGpu, IfElseAndSwitchRunTheBodyTheConditionNames) {
  const cubind::ObjectCode code = compile();
  const cubind::Kernel add_one = code.get_kernel("add_one");
  const cubind::Kernel set_condition = code.get_kernel("set_condition");
  Buffer words = Buffer::allocate(pool, 16, *stream);
  auto word = [&](int i) { return static_cast<void*>(static_cast<char*>(words.data()) + 4 * i); };

  for (unsigned int value : {0u, 1u, 2u, 5u}) {
    stream->begin_capture();
    words.fill(std::uint32_t{0}, *stream);
    const CUgraphConditionalHandle condition = cubind::create_condition(*stream, std::nullopt);
    cubind::launch(*stream, cubind::LaunchConfig(1, 1), set_condition, condition, value);
    const std::vector<CUgraph> cases = cubind::capture_conditional(*stream, condition, CU_GRAPH_COND_TYPE_SWITCH, 3);
    ASSERT_EQ(cases.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      Stream body(dev());
      cubind::begin_capture_into(body, cubind::GraphRef(cases[i]), CU_STREAM_CAPTURE_MODE_RELAXED);
      cubind::launch(body, cubind::LaunchConfig(1, 1), add_one, word(i));
      cubind::end_capture_into(body);
    }
    const cubind::GraphExec exec = stream->end_capture().instantiate();
    exec.launch(*stream);
    Buffer host = Buffer::allocate(pinned, 16, *stream);
    words.copy_to(host, *stream);
    stream->sync();
    const int* got = static_cast<const int*>(host.data());
    for (unsigned int i = 0; i < 3; ++i) EXPECT_EQ(got[i], i == value ? 1 : 0) << "switch " << value << ", case " << i;
  }

  EXPECT_THROW(cubind::capture_conditional(*stream, 0, CU_GRAPH_COND_TYPE_WHILE, 2), std::invalid_argument);
  EXPECT_THROW(cubind::capture_conditional(*stream, 0, CU_GRAPH_COND_TYPE_IF, 3), std::invalid_argument);
}

TEST_F(GraphCaptureGpu, ChildGraphIsCopiedIntoTheParent) {
  Buffer words = Buffer::allocate(pool, 64, *stream);
  stream->begin_capture();
  words.fill(std::uint32_t{5}, *stream);
  std::optional<cubind::Graph> child(stream->end_capture());

  stream->begin_capture();
  cubind::capture_child_graph(*stream, *child);
  cubind::Graph parent = stream->end_capture();
  child.reset();  // the child node holds a copy
  EXPECT_EQ(parent.node_count(), 1u);
  parent.instantiate().launch(*stream);
  EXPECT_EQ(read_word(words), 5);
}

TEST_F(GraphCaptureGpu, HostFuncRunsAtEveryLaunchAndItsDataLivesAsLongAsTheGraph) {
  host_calls = 0;
  host_releases = 0;
  {
    stream->begin_capture();
    cubind::capture_host_func(*stream, count_host_call, new int(3), release_host_data);
    const cubind::GraphExec exec = stream->end_capture().instantiate();
    exec.launch(*stream);
    exec.launch(*stream);
    stream->sync();
    EXPECT_EQ(host_calls, 6);
    EXPECT_EQ(host_releases, 0);
  }
  for (int i = 0; i < 500 && host_releases == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(host_releases, 1);

  // Outside a capture the call refuses, and still releases the data.
  EXPECT_THROW(cubind::capture_host_func(*stream, count_host_call, new int(1), release_host_data), std::logic_error);
  EXPECT_EQ(host_releases, 2);
}

TEST_F(GraphCaptureGpu, DebugDotPrintWritesTheGraph) {
  Buffer words = Buffer::allocate(pool, 64, *stream);
  stream->begin_capture();
  words.fill(std::uint32_t{5}, *stream);
  const cubind::Graph graph = stream->end_capture();
  const std::string path = ::testing::TempDir() + "cubind_graph.dot";
  cubind::debug_dot_print(graph, path, CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE);
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_NE(text.str().find("digraph"), std::string::npos);
  std::remove(path.c_str());
}

TEST_F(GraphCaptureGpu, GraphMemoryIsAllocatedAndFreedByTheGraph) {
  auto graph_memory = std::make_shared<cubind::GraphMemoryResource>(dev());
  EXPECT_TRUE(graph_memory->is_device_accessible());
  EXPECT_FALSE(graph_memory->is_host_accessible());
  EXPECT_EQ(graph_memory->device_id(), dev().ordinal());
  const std::string message = message_of<std::logic_error>([&] { graph_memory->allocate(64, *stream); });
  EXPECT_NE(message.find("non-capturing stream"), std::string::npos) << message;

  Buffer result = Buffer::allocate(pool, 4, *stream);
  stream->sync();
  stream->begin_capture();
  // A pool's allocation would be the graph's, not the pool's: refused before
  // the driver is asked, and the capture goes on.
  const std::string refused = message_of<std::logic_error>([&] { pool->allocate(64, *stream); });
  EXPECT_NE(refused.find("DeviceMemoryResource cannot perform memory operations on a capturing stream"),
            std::string::npos)
      << refused;
  {
    Buffer scratch = Buffer::allocate(graph_memory, 1 << 20, *stream);
    scratch.fill(std::uint32_t{11}, *stream);
    scratch.copy_to(result.data(), 4, *stream);
  }  // ~Buffer frees it on the capturing stream: a free node
  cubind::Graph graph = stream->end_capture();
  EXPECT_EQ(graph.node_count(), 4u);  // alloc, memset, memcpy, free
  const cubind::GraphExec exec = graph.instantiate();
  for (int run = 0; run < 2; ++run) {
    exec.launch(*stream);
    EXPECT_EQ(read_word(result), 11);
  }
  EXPECT_GT(graph_memory->attribute(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT), 0u);
  EXPECT_NO_THROW(graph_memory->reset_high_watermark(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH));
  EXPECT_THROW(graph_memory->reset_high_watermark(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), std::invalid_argument);
  EXPECT_NO_THROW(graph_memory->trim());
}

}  // namespace

// The calls a binding makes on what it does not own, without a GPU: StreamRef's
// methods, copies and fills by raw address, tensor map encoding and the
// node-by-node graph calls refuse what they can see is wrong (the StreamRef
// of a null Stream, a null function, a rank outside the driver's, a null
// graph or node, a body count the node type does not take) before any driver
// call, with a message naming the call and the value; the node parameter
// builders put each value where the driver reads it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cubind/event.hpp"
#include "cubind/graph_definition.hpp"
#include "cubind/memory.hpp"
#include "cubind/stream.hpp"
#include "cubind/tensor_map.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::StreamRef;
using cubind_test::message_of;

StreamRef null_stream() { return StreamRef(cubind::detail::invalid_stream()); }
StreamRef fake_stream() { return StreamRef(reinterpret_cast<CUstream>(std::uintptr_t{0x1234})); }
const cubind::GraphRef kNullGraph{static_cast<CUgraph>(nullptr)};
const cubind::GraphRef kFakeGraph{reinterpret_cast<CUgraph>(std::uintptr_t{0x5678})};

void expect_names(const std::string& message, const std::string& call) {
  EXPECT_EQ(message.rfind(call + ":", 0), 0u) << message;
}

TEST(StreamRefArguments, EveryCallRefusesTheStreamRefOfANullStreamNamingItself) {
  const StreamRef s = null_stream();
  const std::pair<const char*, std::function<void()>> calls[] = {
      {"cubind::StreamRef::sync", [&] { s.sync(); }},
      {"cubind::StreamRef::query", [&] { s.query(); }},
      {"cubind::StreamRef::priority", [&] { s.priority(); }},
      {"cubind::StreamRef::is_non_blocking", [&] { s.is_non_blocking(); }},
      {"cubind::StreamRef::context", [&] { s.context(); }},
      {"cubind::StreamRef::context_if_known", [&] { s.context_if_known(); }},
      {"cubind::StreamRef::wait", [&] { s.wait(cubind::EventRef(reinterpret_cast<CUevent>(std::uintptr_t{8}))); }},
      {"cubind::StreamRef::wait", [&] { s.wait(fake_stream()); }},
      {"cubind::StreamRef::wait", [&] { fake_stream().wait(s); }},
      {"cubind::StreamRef::launch_host_func", [&] { s.launch_host_func(cubind_test::count_host_call, nullptr); }},
      {"cubind::StreamRef::begin_capture", [&] { s.begin_capture(); }},
      {"cubind::StreamRef::end_capture", [&] { s.end_capture(); }},
      {"cubind::StreamRef::is_capturing", [&] { s.is_capturing(); }},
      {"cubind::StreamRef::context_if_known", [&] { cubind::StreamContextGuard guard(s); }},
      {"cubind::copy_memory", [&] { cubind::copy_memory(16, 32, 4, s); }},
      {"cubind::fill_memory", [&] { cubind::fill_memory(16, std::uint8_t{1}, 4, s); }},
      {"cubind::fill_memory", [&] { cubind::fill_memory(16, std::uint16_t{1}, 4, s); }},
      {"cubind::fill_memory", [&] { cubind::fill_memory(16, std::uint32_t{1}, 4, s); }},
  };
  for (const auto& [name, call] : calls) {
    const std::string message = message_of<std::logic_error>(call);
    expect_names(message, name);
    EXPECT_NE(message.find("null cubind::Stream"), std::string::npos) << message;
  }
}

TEST(StreamRefArguments, ANullEventOrHostFunctionIsRefusedBeforeTheDriver) {
  const std::string event = message_of<std::logic_error>([] { fake_stream().wait(cubind::EventRef(CUevent{})); });
  EXPECT_EQ(event, "cubind::StreamRef::wait: the event is a null cubind::Event (moved from or released)");
  const std::string fn = message_of<std::invalid_argument>([] { fake_stream().launch_host_func(nullptr, nullptr); });
  EXPECT_EQ(fn, "cubind::StreamRef::launch_host_func: the function is null");
}

// fill_memory takes the value's width from its type: a plain int says none.
template <typename T, typename = void>
struct can_fill : std::false_type {};
template <typename T>
struct can_fill<T, std::void_t<decltype(cubind::fill_memory(CUdeviceptr{}, std::declval<T>(), std::size_t{},
                                                            std::declval<StreamRef>()))>> : std::true_type {};
static_assert(can_fill<std::uint8_t>::value && can_fill<std::uint16_t>::value && can_fill<std::uint32_t>::value);
static_assert(!can_fill<int>::value && !can_fill<std::uint64_t>::value, "fill_memory must not guess a width");

TEST(TensorMapArguments, TiledRanksOutsideOneToFiveAreRefusedNamingTheRank) {
  for (unsigned int rank : {0u, 6u, 100u}) {
    cubind::TensorMapTiled tiled;
    tiled.rank = rank;
    const std::string message = message_of<std::invalid_argument>([&] { cubind::encode_tensor_map(tiled); });
    EXPECT_EQ(message, "cubind::encode_tensor_map (tiled): rank is " + std::to_string(rank) + "; it must be 1 to 5");
  }
}

TEST(TensorMapArguments, Im2colRankChannelsAndPixelsAreCheckedNamingTheValue) {
  cubind::TensorMapIm2col im2col;
  im2col.rank = 2;
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::encode_tensor_map(im2col); }),
            "cubind::encode_tensor_map (im2col): rank is 2; it must be 3 to 5");
  im2col.rank = 6;
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::encode_tensor_map(im2col); }),
            "cubind::encode_tensor_map (im2col): rank is 6; it must be 3 to 5");
  im2col.rank = 4;
  im2col.channels_per_pixel = 257;
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::encode_tensor_map(im2col); }),
            "cubind::encode_tensor_map (im2col): channels_per_pixel is 257; it must be 1 to 256");
  im2col.channels_per_pixel = 8;
  im2col.pixels_per_column = 0;
  EXPECT_EQ(message_of<std::invalid_argument>([&] { cubind::encode_tensor_map(im2col); }),
            "cubind::encode_tensor_map (im2col): pixels_per_column is 0; it must be 1 to 1024");
}

TEST(GraphNodeArguments, NewNodeCallsRefuseANullGraphOrNodeNamingThemselves) {
  EXPECT_EQ(message_of<std::invalid_argument>([] { cubind::add_empty_node(kNullGraph, {}); }),
            "cubind::add_empty_node: the graph is null");
  EXPECT_EQ(message_of<std::invalid_argument>([] { cubind::add_alloc_node(kNullGraph, {}, cubind::AllocNode{}); }),
            "cubind::add_alloc_node: the graph is null");
  EXPECT_EQ(message_of<std::invalid_argument>([] { cubind::add_free_node(kNullGraph, {}, 16); }),
            "cubind::add_free_node: the graph is null");
  EXPECT_EQ(message_of<std::invalid_argument>(
                [] { cubind::add_conditional_node(kNullGraph, {}, 0, CU_GRAPH_COND_TYPE_IF, 1, nullptr); }),
            "cubind::add_conditional_node: the graph is null");
  EXPECT_EQ(message_of<std::invalid_argument>([] { cubind::node_info(nullptr); }),
            "cubind::node_info: the node is null");
}

TEST(GraphNodeArguments, ConditionalBodyCountsTheTypeDoesNotTakeAreRefused) {
  const std::pair<CUgraphConditionalNodeType, unsigned int> wrong[] = {
      {CU_GRAPH_COND_TYPE_IF, 0}, {CU_GRAPH_COND_TYPE_IF, 3}, {CU_GRAPH_COND_TYPE_WHILE, 2},
      {CU_GRAPH_COND_TYPE_SWITCH, 0}};
  for (const auto& [type, count] : wrong) {
    const std::string message = message_of<std::invalid_argument>(
        [&] { cubind::add_conditional_node(kFakeGraph, {}, 0, type, count, nullptr); });
    EXPECT_EQ(message, "cubind::add_conditional_node: " + std::to_string(count) +
                           " bodies; an if node takes 1 or 2, a while node 1, a switch node 1 or more");
  }
}

TEST(GraphNodeParams, KernelNodeCarriesEveryValue) {
  void* arguments[1] = {nullptr};
  cubind::KernelNode node;
  node.kernel = reinterpret_cast<CUkernel>(std::uintptr_t{0x10});
  node.context = reinterpret_cast<CUcontext>(std::uintptr_t{0x20});
  node.grid = cubind::Dim3(2, 3, 4);
  node.block = cubind::Dim3(32, 2, 1);
  node.shared_memory_bytes = 1024;
  node.arguments = arguments;
  const CUgraphNodeParams p = cubind::kernel_node(node);
  EXPECT_EQ(p.type, CU_GRAPH_NODE_TYPE_KERNEL);
  EXPECT_EQ(p.kernel.kern, node.kernel);
  EXPECT_EQ(p.kernel.ctx, node.context);
  EXPECT_EQ(p.kernel.func, nullptr);
  EXPECT_EQ(p.kernel.gridDimX, 2u);
  EXPECT_EQ(p.kernel.gridDimY, 3u);
  EXPECT_EQ(p.kernel.gridDimZ, 4u);
  EXPECT_EQ(p.kernel.blockDimX, 32u);
  EXPECT_EQ(p.kernel.blockDimY, 2u);
  EXPECT_EQ(p.kernel.blockDimZ, 1u);
  EXPECT_EQ(p.kernel.sharedMemBytes, 1024u);
  EXPECT_EQ(p.kernel.kernelParams, arguments);
  EXPECT_EQ(p.kernel.extra, nullptr);
}

TEST(GraphNodeParams, MemsetAndMemcpyNodesCarryEveryValue) {
  const CUcontext context = reinterpret_cast<CUcontext>(std::uintptr_t{0x20});
  cubind::MemsetNode set;
  set.dst = 0x1000;
  set.value = 0xabcd;
  set.element_size = 2;
  set.width = 8;
  set.height = 3;
  set.pitch = 64;
  set.context = context;
  const CUgraphNodeParams m = cubind::memset_node(set);
  EXPECT_EQ(m.type, CU_GRAPH_NODE_TYPE_MEMSET);
  EXPECT_EQ(m.memset.dst, 0x1000u);
  EXPECT_EQ(m.memset.value, 0xabcdu);
  EXPECT_EQ(m.memset.elementSize, 2u);
  EXPECT_EQ(m.memset.width, 8u);
  EXPECT_EQ(m.memset.height, 3u);
  EXPECT_EQ(m.memset.pitch, 64u);
  EXPECT_EQ(m.memset.ctx, context);

  const CUgraphNodeParams c = cubind::memcpy_node(cubind::MemcpyNode{0x2000, 0x3000, 48, context});
  EXPECT_EQ(c.type, CU_GRAPH_NODE_TYPE_MEMCPY);
  EXPECT_EQ(c.memcpy.copyCtx, context);
  EXPECT_EQ(c.memcpy.copyParams.dstMemoryType, CU_MEMORYTYPE_UNIFIED);
  EXPECT_EQ(c.memcpy.copyParams.dstDevice, 0x2000u);
  EXPECT_EQ(c.memcpy.copyParams.srcMemoryType, CU_MEMORYTYPE_UNIFIED);
  EXPECT_EQ(c.memcpy.copyParams.srcDevice, 0x3000u);
  EXPECT_EQ(c.memcpy.copyParams.WidthInBytes, 48u);
  EXPECT_EQ(c.memcpy.copyParams.Height, 1u);
  EXPECT_EQ(c.memcpy.copyParams.Depth, 1u);
}

TEST(GraphNodeParams, EventChildAndHostNodesCarryTheirHandle) {
  const CUevent event = reinterpret_cast<CUevent>(std::uintptr_t{0x40});
  const CUgraphNodeParams record = cubind::event_record_node(event);
  EXPECT_EQ(record.type, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  EXPECT_EQ(record.eventRecord.event, event);
  const CUgraphNodeParams wait = cubind::event_wait_node(event);
  EXPECT_EQ(wait.type, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  EXPECT_EQ(wait.eventWait.event, event);
  const CUgraphNodeParams child = cubind::child_graph_node(kFakeGraph);
  EXPECT_EQ(child.type, CU_GRAPH_NODE_TYPE_GRAPH);
  EXPECT_EQ(child.graph.graph, kFakeGraph.handle());
  int data = 0;
  const CUgraphNodeParams host = cubind::host_node(cubind_test::count_host_call, &data);
  EXPECT_EQ(host.type, CU_GRAPH_NODE_TYPE_HOST);
  EXPECT_EQ(host.host.fn, &cubind_test::count_host_call);
  EXPECT_EQ(host.host.userData, &data);
}

}  // namespace

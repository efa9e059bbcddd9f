// What a binding does on streams it does not own, on a real GPU: StreamRef's
// calls on the legacy stream and on a foreign CUstream (query, priority,
// flags, context, waits, host functions, capture), copies and fills by raw
// address in the stream's context from a thread with none current, a
// pointer's device, setting and clearing the current context, and tensor
// maps encoded over device memory. Ordering is tested with a HostGate, as in
// test_stream_gpu.cpp. Every test skips with its reason without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cubind/buffer.hpp"
#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/event.hpp"
#include "cubind/graph.hpp"
#include "cubind/memory.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "cubind/tensor_map.hpp"
#include "test_helpers.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::Stream;
using cubind::StreamRef;
using cubind::detail::check;
using cubind_test::HostGate;
using cubind_test::message_of;
using cubind_test::on_fresh_thread;

using namespace std::chrono_literals;

// A stream created through the raw layer, as another library would hand one
// over: cubind never owns it.
class ForeignStream {
 public:
  explicit ForeignStream(const cubind::Device& device, unsigned int flags = CU_STREAM_NON_BLOCKING) {
    cubind::ContextGuard guard(device);
    check(raw::cuStreamCreate(&handle_, flags), "cuStreamCreate");
  }
  ~ForeignStream() { raw::cuStreamDestroy(handle_); }
  ForeignStream(const ForeignStream&) = delete;
  ForeignStream& operator=(const ForeignStream&) = delete;
  StreamRef ref() const { return StreamRef(handle_); }

 private:
  CUstream handle_ = nullptr;
};

class StreamRefGpu : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
    pinned = std::make_shared<cubind::PinnedMemoryResource>(dev());
  }

  std::shared_ptr<cubind::DeviceMemoryResource> pool;
  std::shared_ptr<cubind::PinnedMemoryResource> pinned;
};

TEST_F(StreamRefGpu, TheLegacyStreamAnswersQueryPriorityFlagsAndContext) {
  cubind::ContextGuard guard(dev());
  const StreamRef legacy = StreamRef::legacy_default();
  legacy.sync();
  EXPECT_TRUE(legacy.query());
  EXPECT_FALSE(legacy.is_non_blocking());
  int least = 0;
  int greatest = 0;
  check(raw::cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
  EXPECT_EQ(legacy.priority(), least);  // the default priority is the lowest
  EXPECT_EQ(legacy.context(), dev().primary_context());
  ASSERT_TRUE(legacy.context_if_known().has_value());
  EXPECT_EQ(*legacy.context_if_known(), dev().primary_context());
}

TEST_F(StreamRefGpu, ADefaultStreamHasNoContextWhereNoneIsCurrent) {
  on_fresh_thread([] {
    EXPECT_FALSE(StreamRef::legacy_default().context_if_known().has_value());
    const std::string error = message_of<cubind::CudaError>([] { StreamRef::legacy_default().context(); });
    EXPECT_NE(error.find("cuStreamGetCtx"), std::string::npos) << error;
    // And the guard changes nothing then.
    cubind::StreamContextGuard guard(StreamRef::legacy_default());
    EXPECT_FALSE(cubind::Context::current().has_value());
  });
}

TEST_F(StreamRefGpu, AForeignStreamAnswersOnAThreadWithNoContext) {
  ForeignStream blocking(dev(), CU_STREAM_DEFAULT);
  const StreamRef s = blocking.ref();
  on_fresh_thread([&] {
    EXPECT_FALSE(s.is_non_blocking());
    EXPECT_TRUE(s.query());
    EXPECT_EQ(s.context(), dev().primary_context());
    {
      cubind::StreamContextGuard guard(s);
      ASSERT_TRUE(cubind::Context::current().has_value());
      EXPECT_EQ(*cubind::Context::current(), dev().primary_context());
    }
    EXPECT_FALSE(cubind::Context::current().has_value());
  });
}

TEST_F(StreamRefGpu, QueryIsFalseWhileWorkIsPending) {
  ForeignStream foreign(dev());
  HostGate gate(dev());
  gate.block(foreign.ref());
  EXPECT_FALSE(foreign.ref().query());
  EXPECT_TRUE(foreign.ref().is_non_blocking());
  gate.open();
  foreign.ref().sync();
  EXPECT_TRUE(foreign.ref().query());
}

TEST_F(StreamRefGpu, WaitOnAnotherStreamOrdersTheWork) {
  ForeignStream first(dev());
  ForeignStream second(dev());
  HostGate gate(dev());
  gate.block(first.ref());
  on_fresh_thread([&] { second.ref().wait(first.ref()); });  // the event is made in first's context
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(second.ref().query());
  gate.open();
  second.ref().sync();
  EXPECT_TRUE(first.ref().query());
}

TEST_F(StreamRefGpu, WaitOnAnEventOrdersTheWork) {
  ForeignStream first(dev());
  ForeignStream second(dev());
  HostGate gate(dev());
  gate.block(first.ref());
  const cubind::Event event(dev());
  event.record(first.ref());
  second.ref().wait(event);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(second.ref().query());
  gate.open();
  second.ref().sync();
  EXPECT_TRUE(event.query());
}

TEST_F(StreamRefGpu, HostFunctionRunsAfterTheWorkBeforeIt) {
  ForeignStream foreign(dev());
  HostGate gate(dev());
  cubind_test::host_calls = 0;
  int five = 5;
  gate.block(foreign.ref());
  foreign.ref().launch_host_func(cubind_test::count_host_call, &five);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(cubind_test::host_calls.load(), 0);
  gate.open();
  foreign.ref().sync();
  EXPECT_EQ(cubind_test::host_calls.load(), 5);
}

TEST_F(StreamRefGpu, CaptureOnAForeignStreamGivesAGraphThatRuns) {
  ForeignStream foreign(dev());
  Buffer words = Buffer::allocate(pool, 16, foreign.ref());
  Buffer host = Buffer::allocate(pinned, 16, foreign.ref());
  EXPECT_FALSE(foreign.ref().is_capturing());
  foreign.ref().begin_capture();
  EXPECT_TRUE(foreign.ref().is_capturing());
  cubind::fill_memory(words.handle(), std::uint32_t{0x01020304}, 4, foreign.ref());
  cubind::Graph graph = foreign.ref().end_capture();
  EXPECT_FALSE(foreign.ref().is_capturing());
  EXPECT_EQ(graph.node_count(), 1u);
  // Instantiated in the stream's context, which end_capture remembered.
  std::optional<cubind::GraphExec> exec;
  on_fresh_thread([&] { exec.emplace(graph.instantiate()); });
  exec->launch(foreign.ref());
  words.copy_to(host.data(), 16, foreign.ref());
  foreign.ref().sync();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<std::uint32_t*>(host.data())[i], 0x01020304u);
}

TEST_F(StreamRefGpu, RawAddressFillsAndCopyReadBackOnAThreadWithNoContext) {
  Stream stream(dev());
  Buffer words = Buffer::allocate(pool, 64, stream);
  Buffer copy = Buffer::allocate(pool, 64, stream);
  Buffer host = Buffer::allocate(pinned, 64, stream);
  stream.sync();
  on_fresh_thread([&] {
    const CUdeviceptr base = words.handle();
    cubind::fill_memory(base, std::uint8_t{0xaa}, 16, stream);
    cubind::fill_memory(base + 16, std::uint16_t{0xbeef}, 8, stream);
    cubind::fill_memory(base + 32, std::uint32_t{0xdeadbeef}, 8, stream);
    cubind::copy_memory(copy.handle(), base, 64, stream);
    cubind::copy_memory(host.handle(), copy.handle(), 64, stream);
    stream.sync();
    EXPECT_FALSE(cubind::Context::current().has_value());  // the guards restored it
  });
  const auto* bytes = static_cast<const std::uint8_t*>(host.data());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(bytes[i], 0xaa) << i;
  std::uint16_t half = 0;
  std::uint32_t word = 0;
  for (int i = 0; i < 8; ++i) {
    std::memcpy(&half, bytes + 16 + 2 * i, 2);
    EXPECT_EQ(half, 0xbeef) << i;
    std::memcpy(&word, bytes + 32 + 4 * i, 4);
    EXPECT_EQ(word, 0xdeadbeefu) << i;
  }
}

TEST_F(StreamRefGpu, PointerDeviceOrdinalNamesTheDeviceOfTheMemory) {
  Stream stream(dev());
  Buffer words = Buffer::allocate(pool, 64, stream);
  stream.sync();
  EXPECT_EQ(cubind::pointer_device_ordinal(words.handle()), dev().ordinal());
  EXPECT_EQ(cubind::pointer_device_ordinal(words.handle() + 32), dev().ordinal());
  int on_stack = 0;
  const auto error = message_of<cubind::CudaError>(
      [&] { cubind::pointer_device_ordinal(reinterpret_cast<CUdeviceptr>(&on_stack)); });
  EXPECT_NE(error.find("cuPointerGetAttribute"), std::string::npos) << error;
}

TEST_F(StreamRefGpu, SetAndClearTheCurrentContext) {
  on_fresh_thread([&] {
    EXPECT_FALSE(cubind::Device::current_if_any().has_value());
    dev().primary_context().set_current();
    ASSERT_TRUE(cubind::Context::current().has_value());
    EXPECT_EQ(*cubind::Context::current(), dev().primary_context());
    ASSERT_TRUE(cubind::Device::current_if_any().has_value());
    EXPECT_EQ(*cubind::Device::current_if_any(), dev());
    cubind::Context::clear_current();
    EXPECT_FALSE(cubind::Context::current().has_value());
    EXPECT_FALSE(cubind::Device::current_if_any().has_value());
  });
}

class TensorMapGpu : public StreamRefGpu {
 protected:
  void SetUp() override {
    StreamRefGpu::SetUp();
    if (IsSkipped()) return;
    if (dev().compute_capability().major < 9) GTEST_SKIP() << "tensor maps need compute capability 9.0";
  }
};

bool same_bytes(const CUtensorMap& a, const CUtensorMap& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST_F(TensorMapGpu, TiledMapOverDeviceMemoryEncodesAndTakesANewAddress) {
  Stream stream(dev());
  Buffer first = Buffer::allocate(pool, 64 * 64 * 4, stream);
  Buffer second = Buffer::allocate(pool, 64 * 64 * 4, stream);
  stream.sync();
  cubind::TensorMapTiled tiled;
  tiled.data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  tiled.rank = 2;
  tiled.address = first.data();
  tiled.sizes[0] = 64;
  tiled.sizes[1] = 64;
  tiled.strides[0] = 64 * 4;
  tiled.box[0] = 16;
  tiled.box[1] = 16;
  cubind::ContextGuard guard(dev());  // the driver encodes in a current context
  const CUtensorMap map = cubind::encode_tensor_map(tiled);
  EXPECT_FALSE(same_bytes(map, CUtensorMap{}));
  EXPECT_TRUE(same_bytes(map, cubind::encode_tensor_map(tiled)));  // the same layout, the same map

  CUtensorMap moved = map;
  cubind::replace_tensor_map_address(moved, second.data());
  EXPECT_FALSE(same_bytes(moved, map));
  tiled.address = second.data();
  EXPECT_TRUE(same_bytes(moved, cubind::encode_tensor_map(tiled)));

  tiled.address = static_cast<char*>(first.data()) + 4;  // 16-byte alignment is required
  const std::string error = message_of<cubind::CudaError>([&] { cubind::encode_tensor_map(tiled); });
  EXPECT_NE(error.find("cuTensorMapEncodeTiled"), std::string::npos) << error;
}

TEST_F(TensorMapGpu, Im2colMapOverDeviceMemoryEncodes) {
  Stream stream(dev());
  // N=1, H=8, W=8, C=16 floats, channels innermost.
  Buffer image = Buffer::allocate(pool, 1 * 8 * 8 * 16 * 4, stream);
  stream.sync();
  cubind::TensorMapIm2col im2col;
  im2col.data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  im2col.rank = 4;
  im2col.address = image.data();
  const std::uint64_t sizes[4] = {16, 8, 8, 1};
  for (int i = 0; i < 4; ++i) im2col.sizes[i] = sizes[i];
  im2col.strides[0] = 16 * 4;
  im2col.strides[1] = 8 * 16 * 4;
  im2col.strides[2] = 8 * 8 * 16 * 4;
  im2col.lower_corner[0] = im2col.lower_corner[1] = -1;
  im2col.upper_corner[0] = im2col.upper_corner[1] = 1;
  im2col.channels_per_pixel = 16;
  im2col.pixels_per_column = 64;
  cubind::ContextGuard guard(dev());
  const CUtensorMap map = cubind::encode_tensor_map(im2col);
  EXPECT_FALSE(same_bytes(map, CUtensorMap{}));
  im2col.strides[0] = 15 * 4;  // not a multiple of 16 bytes
  const std::string error = message_of<cubind::CudaError>([&] { cubind::encode_tensor_map(im2col); });
  EXPECT_NE(error.find("cuTensorMapEncodeIm2col"), std::string::npos) << error;
}

}  // namespace

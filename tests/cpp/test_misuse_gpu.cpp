// Misuse of the core's owners with real handles on a GPU: released and
// moved-from streams, events, graphs, green contexts and buffers; launches
// with arguments of the wrong count or size; copies between buffers of
// different sizes; pool calls that cannot apply. Each throws a C++ exception
// naming the call, and a refused call leaves nothing queued and nothing
// allocated. The CPU-only half is test_misuse.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/device_resources.hpp"
#include "cubind/error.hpp"
#include "cubind/event.hpp"
#include "cubind/graph.hpp"
#include "cubind/green_context.hpp"
#include "cubind/launch.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::Buffer;
using cubind::DeviceMemoryResource;
using cubind::Event;
using cubind::Graph;
using cubind::GraphExec;
using cubind::GreenContext;
using cubind::Kernel;
using cubind::LaunchConfig;
using cubind::SmResource;
using cubind::Stream;
using cubind::StreamRef;
using cubind_test::message_of;

constexpr const char* kScale = R"(
extern "C" __global__ void scale(float* data, float factor, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
)";

class MisuseGpuTest : public cubind_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    stream.emplace(*device);
    pool = std::make_shared<DeviceMemoryResource>(*device);
  }

  Kernel scale_kernel() const {
    cubind::Program program(kScale, "scale.cu");
    cubind::ProgramOptions options;
    options.arch = dev().arch();
    cubind::CompileResult result = program.compile(cubind::CodeKind::cubin, options);
    EXPECT_TRUE(result.ok) << result.log;
    return result.code.get_kernel("scale");
  }

  std::optional<Stream> stream;
  std::shared_ptr<DeviceMemoryResource> pool;
};

TEST_F(MisuseGpuTest, AReleasedStreamIsRefusedEverywhereAndItsHandleStaysTheCallers) {
  Stream owned(dev());
  const CUstream handle = owned.release();
  ASSERT_NE(handle, nullptr);
  const Kernel kernel = scale_kernel();
  Event event(dev());
  Buffer buffer = Buffer::allocate(pool, 64, *stream);
  for (auto [name, call] : std::initializer_list<std::pair<const char*, std::function<void()>>>{
           {"cubind::Stream::sync", [&] { owned.sync(); }},
           {"cubind::Stream::release", [&] { owned.release(); }},
           {"cubind::Buffer::allocate", [&] { Buffer::allocate(pool, 64, owned); }},
           {"cubind::Buffer::fill", [&] { buffer.fill(std::uint8_t{0}, owned); }},
           {"cubind::EventRef::record", [&] { event.record(owned); }},
           {"cubind::Stream::wait", [&] { stream->wait(owned); }},
           {"cubind::launch", [&] { cubind::launch(owned, LaunchConfig{1, 32}, kernel, buffer.handle(), 2.0f, 16u); }},
       }) {
    const std::string message = message_of<std::logic_error>(call);
    EXPECT_NE(message.find(name), std::string::npos) << message;
  }
  // The handle was given up, not destroyed: it still works, and is the caller's to destroy.
  EXPECT_EQ(raw::cuStreamQuery(handle), CUDA_SUCCESS);
  EXPECT_EQ(raw::cuStreamDestroy(handle), CUDA_SUCCESS);
}

TEST_F(MisuseGpuTest, LaunchesWithTheWrongArgumentsAreRefusedAndQueueNothing) {
  const Kernel kernel = scale_kernel();
  Buffer data = Buffer::allocate(pool, 16 * sizeof(float), *stream);
  stream->sync();  // so that query() below sees only what the refused calls queued
  const LaunchConfig config{1, 32};
  std::string message =
      message_of<std::invalid_argument>([&] { cubind::launch(*stream, config, kernel, data.handle(), 2.0f); });
  EXPECT_EQ(message, "cubind::launch: kernel 'scale' takes 3 arguments, 2 given");
  message = message_of<std::invalid_argument>(
      [&] { cubind::launch(*stream, config, kernel, data.handle(), 2.0f, 16u, 1); });
  EXPECT_EQ(message, "cubind::launch: kernel 'scale' takes 3 arguments, 4 given");
  // A double where the kernel takes a float; an int where it takes a pointer.
  message = message_of<std::invalid_argument>([&] { cubind::launch(*stream, config, kernel, data.handle(), 2.0, 16u); });
  EXPECT_EQ(message, "cubind::launch: argument 1 of kernel 'scale' must be 4 bytes, 8 bytes given");
  message = message_of<std::invalid_argument>([&] { cubind::launch(*stream, config, kernel, 0, 2.0f, 16u); });
  EXPECT_EQ(message, "cubind::launch: argument 0 of kernel 'scale' must be 8 bytes, 4 bytes given");
  // Type-erased: a null pointer where an argument's bytes should be.
  CUdeviceptr pointer = data.handle();
  float factor = 2.0f;
  unsigned int n = 16;
  void* args[3] = {&pointer, &factor, nullptr};
  const std::size_t sizes[3] = {sizeof pointer, sizeof factor, sizeof n};
  message = message_of<std::invalid_argument>(
      [&] { cubind::launch_type_erased(*stream, config, kernel, args, sizes, 3); });
  EXPECT_NE(message.find("args[2] of kernel 'scale' is null"), std::string::npos) << message;
  EXPECT_TRUE(stream->query()) << "a refused launch queues nothing";
  // The right arguments still launch.
  args[2] = &n;
  data.fill(std::uint32_t{0}, *stream);
  EXPECT_NO_THROW(cubind::launch_type_erased(*stream, config, kernel, args, sizes, 3));
  stream->sync();
}

TEST_F(MisuseGpuTest, ANullKernelIsRefusedOnARealStream) {
  const Kernel kernel;
  EXPECT_THROW(cubind::launch(*stream, LaunchConfig{1, 1}, kernel), std::logic_error);
  EXPECT_TRUE(stream->query());
}

TEST_F(MisuseGpuTest, AKernelOutlivesItsObjectCodeAndProgram) {
  std::optional<Kernel> kernel;
  kernel.emplace(scale_kernel());  // the ObjectCode and Program are gone once this returns
  Buffer data = Buffer::allocate(pool, 16 * sizeof(float), *stream);
  data.fill(std::uint32_t{0x3f800000u}, *stream);  // 1.0f
  cubind::launch(*stream, LaunchConfig{1, 32}, *kernel, data.handle(), 3.0f, 16u);
  std::vector<float> host(16);
  data.copy_to(host.data(), host.size() * sizeof(float), *stream);
  stream->sync();
  for (float value : host) EXPECT_EQ(value, 3.0f);
}

TEST_F(MisuseGpuTest, CopiesBetweenBuffersOfDifferentSizesCheckTheLargerSide) {
  Buffer small = Buffer::allocate(pool, 64, *stream);
  Buffer large = Buffer::allocate(pool, 256, *stream);
  stream->sync();
  std::string message = message_of<std::out_of_range>([&] { small.copy_from(large, *stream); });
  EXPECT_EQ(message, "cubind::Buffer::copy_from: the source holds 256 bytes, more than this buffer's 64 bytes");
  message = message_of<std::out_of_range>([&] { large.copy_to(small, *stream); });
  EXPECT_EQ(message, "cubind::Buffer::copy_to: this buffer holds 256 bytes, more than the destination's 64 bytes");
  EXPECT_TRUE(stream->query()) << "a refused copy queues nothing";
  // The smaller into the larger is allowed: it fills the start.
  small.fill(std::uint8_t{7}, *stream);
  large.fill(std::uint8_t{0}, *stream);
  large.copy_from(small, *stream);
  std::vector<std::uint8_t> host(256);
  large.copy_to(host.data(), host.size(), *stream);
  stream->sync();
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[63], 7);
  EXPECT_EQ(host[64], 0);
}

TEST_F(MisuseGpuTest, ABufferClosesOnceAndARefusedCloseFreesNothing) {
  auto shared = std::make_shared<DeviceMemoryResource>(dev(), cubind::DeviceMemoryResourceOptions{});
  Buffer buffer = Buffer::allocate(shared, 1 << 20, *stream);
  stream->sync();
  const std::uint64_t used = shared->used_memory();
  EXPECT_GE(used, 1u << 20);
  Stream gone(dev());
  Stream taken = std::move(gone);
  EXPECT_THROW(buffer.close(gone), std::logic_error);
  stream->sync();
  EXPECT_EQ(shared->used_memory(), used);
  buffer.close();
  stream->sync();
  EXPECT_EQ(shared->used_memory(), 0u);
  const std::string message = message_of<std::logic_error>([&] { buffer.close(); });
  EXPECT_NE(message.find("cubind::Buffer::close: this Buffer is null"), std::string::npos) << message;
  EXPECT_THROW(buffer.release(), std::logic_error);
}

TEST_F(MisuseGpuTest, PoolCallsThatCannotApplyAreRefused) {
  EXPECT_THROW(pool->allocate(0, *stream), std::out_of_range);
  EXPECT_THROW(pool->grant_peer_access(dev()), std::invalid_argument);
  EXPECT_THROW(pool->export_ipc_handle(), std::logic_error);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ::close(fds[1]);
  cubind::IpcPoolHandle handle = cubind::IpcPoolHandle::from_native_handle(fds[0]);
  ::close(handle.release());
  const std::string message =
      message_of<std::logic_error>([&] { DeviceMemoryResource::from_ipc_handle(dev(), handle); });
  EXPECT_NE(message.find("cubind::DeviceMemoryResource::from_ipc_handle"), std::string::npos) << message;
}

TEST_F(MisuseGpuTest, AReleasedEventIsRefusedAndItsHandleStaysTheCallers) {
  Event event(dev());
  const CUevent handle = event.release();
  EXPECT_THROW(event.record(*stream), std::logic_error);
  EXPECT_THROW(event.sync(), std::logic_error);
  EXPECT_THROW(event.release(), std::logic_error);
  const std::string message = message_of<std::logic_error>([&] { stream->wait(event); });
  EXPECT_NE(message.find("cubind::Stream::wait: the event is a null cubind::Event"), std::string::npos) << message;
  EXPECT_EQ(raw::cuEventDestroy(handle), CUDA_SUCCESS);
}

TEST_F(MisuseGpuTest, GraphsReleaseOnceAndEndingACaptureNeverBegunIsACudaError) {
  EXPECT_THROW(stream->end_capture(), cubind::CudaError);
  Buffer data = Buffer::allocate(pool, 64, *stream);
  stream->sync();
  stream->begin_capture();
  data.fill(std::uint8_t{1}, *stream);
  Graph graph = stream->end_capture();
  GraphExec exec = graph.instantiate();
  const CUgraph graph_handle = graph.release();
  EXPECT_THROW(graph.release(), std::logic_error);
  EXPECT_THROW(graph.instantiate(), std::logic_error);
  exec.launch(*stream);
  stream->sync();
  const CUgraphExec exec_handle = exec.release();
  EXPECT_THROW(exec.release(), std::logic_error);
  EXPECT_THROW(exec.launch(*stream), std::logic_error);
  EXPECT_EQ(raw::cuGraphExecDestroy(exec_handle), CUDA_SUCCESS);
  EXPECT_EQ(raw::cuGraphDestroy(graph_handle), CUDA_SUCCESS);
}

TEST_F(MisuseGpuTest, EveryMethodOfAMovedFromGreenContextThrows) {
  const SmResource all = SmResource::of(dev());
  GreenContext green(dev(), all.split({}).groups);
  GreenContext taken = std::move(green);
  for (auto [name, call] : std::initializer_list<std::pair<const char*, std::function<void()>>>{
           {"cubind::GreenContext::context", [&] { green.context(); }},
           {"cubind::GreenContext::device", [&] { green.device(); }},
           {"cubind::GreenContext::sm_resource", [&] { green.sm_resource(); }},
           {"cubind::GreenContext::create_stream", [&] { green.create_stream(); }},
           {"cubind::GreenContext::context", [&] { green.sync(); }},
       }) {
    const std::string message = message_of<std::logic_error>(call);
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("this GreenContext is null"), std::string::npos) << message;
  }
  GreenContext& alias = taken;
  taken = std::move(alias);
  EXPECT_NE(taken.handle(), nullptr);
  Stream green_stream = taken.create_stream();
  green_stream.sync();
}

}  // namespace

// Misuse of every owner of the C++ core, without a GPU: use after a move,
// after release() or close(), a second release or close, a null StreamRef,
// a Linker used after it linked, kernel arguments that cannot be launched,
// copies between buffers of different sizes. Each must throw a C++ exception
// whose message names the call and what was wrong, before any driver call;
// none may reach undefined behaviour (the asan preset runs this file under
// AddressSanitizer and UndefinedBehaviorSanitizer). Adopted handles are fake
// and released before destruction, so no driver ever sees them; NVRTC and
// nvJitLink, which need no GPU, are real.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/event.hpp"
#include "cubind/graph.hpp"
#include "cubind/kernel.hpp"
#include "cubind/launch.hpp"
#include "cubind/linker.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Buffer;
using cubind::CodeKind;
using cubind::Event;
using cubind::EventRef;
using cubind::Graph;
using cubind::GraphExec;
using cubind::IpcPoolHandle;
using cubind::Kernel;
using cubind::LaunchConfig;
using cubind::Linker;
using cubind::LinkerOptions;
using cubind::MemoryResource;
using cubind::ObjectCode;
using cubind::Program;
using cubind::Stream;
using cubind::StreamRef;
using cubind::TimedEvent;
using cubind_test::message_of;

CUstream fake_stream(std::uintptr_t value) { return reinterpret_cast<CUstream>(value); }
CUevent fake_event(std::uintptr_t value) { return reinterpret_cast<CUevent>(value); }

// One misuse: a call and the words its message must hold.
struct Misuse {
  const char* where;  // the call named in the message
  std::function<void()> call;
};

// Every call throws E, and its message names the call and holds `words`.
template <typename E>
void expect_each_throws(const std::vector<Misuse>& misuses, const std::string& words) {
  for (const Misuse& misuse : misuses) {
    const std::string message = message_of<E>(misuse.call);
    EXPECT_NE(message.find(misuse.where), std::string::npos) << "expected '" << misuse.where << "' in: " << message;
    EXPECT_NE(message.find(words), std::string::npos) << "expected '" << words << "' in: " << message;
  }
}

// malloc and free behind the MemoryResource interface, so a Buffer needs no GPU.
class HostResource final : public MemoryResource {
 public:
  void* allocate(std::size_t bytes, StreamRef) override {
    ++live;
    return std::malloc(bytes);
  }
  void deallocate(void* ptr, std::size_t, StreamRef) override {
    --live;
    std::free(ptr);
  }
  bool is_device_accessible() const noexcept override { return false; }
  bool is_host_accessible() const noexcept override { return true; }
  int device_id() const noexcept override { return -1; }

  int live = 0;
};

// The StreamRef every stream-ordered call must refuse: that of a null Stream.
class NullStream {
 public:
  NullStream() : owner_(Stream::from_native_handle(fake_stream(0x7100))), taken_(std::move(owner_)) {}
  ~NullStream() { taken_.release(); }
  StreamRef ref() const { return owner_; }

 private:
  Stream owner_;
  Stream taken_;
};

// --- Stream ---------------------------------------------------------------

std::vector<Misuse> every_stream_method(Stream& s) {
  return {
      {"cubind::Stream::context", [&] { s.context(); }},
      {"cubind::Stream::device", [&] { s.device(); }},
      {"cubind::Stream::priority", [&] { s.priority(); }},
      {"cubind::Stream::is_non_blocking", [&] { s.is_non_blocking(); }},
      {"cubind::Stream::query", [&] { s.query(); }},
      {"cubind::Stream::sync", [&] { s.sync(); }},
      {"cubind::Stream::wait", [&] { s.wait(EventRef(fake_event(0x7200))); }},
      {"cubind::Stream::wait", [&] { s.wait(StreamRef::legacy_default()); }},
      {"cubind::Stream::record", [&] { s.record(); }},
      {"cubind::Stream::launch_host_func", [&] { s.launch_host_func([] {}); }},
      {"cubind::Stream::begin_capture", [&] { s.begin_capture(); }},
      {"cubind::Stream::end_capture", [&] { s.end_capture(); }},
      {"cubind::Stream::is_capturing", [&] { s.is_capturing(); }},
      {"cubind::Stream::release", [&] { s.release(); }},
  };
}

TEST(StreamMisuse, EveryMethodOfAMovedFromStreamThrows) {
  Stream stream = Stream::from_native_handle(fake_stream(0x7000));
  Stream taken = std::move(stream);
  expect_each_throws<std::logic_error>(every_stream_method(stream), "this Stream is null");
  taken.release();
}

TEST(StreamMisuse, EveryMethodOfAReleasedStreamThrowsAndReleaseIsOnce) {
  Stream stream = Stream::from_native_handle(fake_stream(0x7000));
  EXPECT_EQ(stream.release(), fake_stream(0x7000));
  expect_each_throws<std::logic_error>(every_stream_method(stream), "this Stream is null");
}

TEST(StreamMisuse, SelfMoveAssignmentKeepsTheStream) {
  Stream stream = Stream::from_native_handle(fake_stream(0x7000));
  Stream& alias = stream;
  stream = std::move(alias);
  EXPECT_EQ(stream.handle(), fake_stream(0x7000));
  stream.release();
}

TEST(StreamMisuse, WaitingOnANullEventOrStreamThrowsBeforeAnyDriverCall) {
  Stream stream = Stream::from_native_handle(fake_stream(0x7000));
  const NullStream null_stream;
  std::string message = message_of<std::logic_error>([&] { stream.wait(EventRef(CUevent{})); });
  EXPECT_NE(message.find("cubind::Stream::wait: the event is a null cubind::Event"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { stream.wait(null_stream.ref()); });
  EXPECT_NE(message.find("cubind::Stream::wait"), std::string::npos) << message;
  EXPECT_NE(message.find("null cubind::Stream"), std::string::npos) << message;
  stream.release();
}

TEST(StreamMisuse, TheDefaultStreamsAndTheNullStreamsValueCannotBeOwned) {
  for (CUstream handle :
       {CUstream{}, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, cubind::detail::invalid_stream()}) {
    const std::string message = message_of<std::invalid_argument>([&] { Stream::from_native_handle(handle); });
    EXPECT_NE(message.find("cubind::Stream::from_native_handle"), std::string::npos) << message;
  }
}

TEST(StreamMisuse, EveryStreamOrderedCallRefusesANullStreamRef) {
  const NullStream null;
  Event event = Event::from_native_handle(fake_event(0x7200));
  GraphExec exec = GraphExec::from_native_handle(reinterpret_cast<CUgraphExec>(std::uintptr_t{0x7300}));
  auto resource = std::make_shared<HostResource>();
  Buffer buffer = Buffer::allocate(resource, 16, StreamRef(fake_stream(0x7000)));
  Buffer other = Buffer::allocate(resource, 16, StreamRef(fake_stream(0x7000)));
  unsigned char host[16] = {};
  const Kernel kernel;
  const float value = 1.0f;
  expect_each_throws<std::logic_error>(
      {
          {"cubind::EventRef::record", [&] { event.record(null.ref()); }},
          {"cubind::GraphExec::launch", [&] { exec.launch(null.ref()); }},
          {"cubind::GraphExec::upload", [&] { exec.upload(null.ref()); }},
          {"cubind::Buffer::allocate", [&] { Buffer::allocate(resource, 16, null.ref()); }},
          {"cubind::Buffer::from_native_handle",
           [&] { Buffer::from_native_handle(host, 16, resource, null.ref()); }},
          {"cubind::Buffer::close", [&] { buffer.close(null.ref()); }},
          {"cubind::Buffer::copy_from", [&] { buffer.copy_from(other, null.ref()); }},
          {"cubind::Buffer::copy_to", [&] { buffer.copy_to(other, null.ref()); }},
          {"cubind::Buffer::copy_from", [&] { buffer.copy_from(host, 16, null.ref()); }},
          {"cubind::Buffer::copy_to", [&] { buffer.copy_to(host, 16, null.ref()); }},
          {"cubind::Buffer::fill", [&] { buffer.fill(std::uint8_t{1}, null.ref()); }},
          {"cubind::Buffer::fill", [&] { buffer.fill(std::uint16_t{1}, null.ref()); }},
          {"cubind::Buffer::fill", [&] { buffer.fill(std::uint32_t{1}, null.ref()); }},
          {"cubind::launch", [&] { cubind::launch(null.ref(), LaunchConfig{1, 1}, kernel, value); }},
      },
      "null cubind::Stream");
  EXPECT_EQ(resource->live, 2) << "a refused call allocates and frees nothing";
  event.release();
  exec.release();
}

// --- Event ----------------------------------------------------------------

std::vector<Misuse> every_event_method(Event& e) {
  return {
      {"cubind::EventRef::record", [&] { e.record(StreamRef::legacy_default()); }},
      {"cubind::EventRef::query", [&] { e.query(); }},
      {"cubind::EventRef::sync", [&] { e.sync(); }},
      {"cubind::Event::ipc_handle", [&] { e.ipc_handle(); }},
      {"cubind::Event::release", [&] { e.release(); }},
  };
}

TEST(EventMisuse, EveryMethodOfAMovedFromEventThrows) {
  Event event = Event::from_native_handle(fake_event(0x7200));
  Event taken = std::move(event);
  expect_each_throws<std::logic_error>(every_event_method(event), "null");
  taken.release();
}

TEST(EventMisuse, EveryMethodOfAReleasedEventThrowsAndReleaseIsOnce) {
  Event event = Event::from_native_handle(fake_event(0x7200));
  EXPECT_EQ(event.release(), fake_event(0x7200));
  expect_each_throws<std::logic_error>(every_event_method(event), "null");
}

TEST(EventMisuse, AViewOfANullEventThrows) {
  const EventRef ref(CUevent{});
  expect_each_throws<std::logic_error>(
      {
          {"cubind::EventRef::record", [&] { ref.record(StreamRef::legacy_default()); }},
          {"cubind::EventRef::query", [&] { ref.query(); }},
          {"cubind::EventRef::sync", [&] { ref.sync(); }},
      },
      "null");
}

TEST(EventMisuse, ReleasedTimedEventsDoNotSubtract) {
  TimedEvent start = TimedEvent::from_native_handle(fake_event(0x7200));
  TimedEvent end = TimedEvent::from_native_handle(fake_event(0x7300));
  end.release();
  const std::string message = message_of<std::logic_error>([&] { (void)(end - start); });
  EXPECT_NE(message.find("cubind::operator-(TimedEvent, TimedEvent)"), std::string::npos) << message;
  start.release();
}

TEST(EventMisuse, SelfMoveAssignmentKeepsTheEvent) {
  Event event = Event::from_native_handle(fake_event(0x7200));
  Event& alias = event;
  event = std::move(alias);
  EXPECT_EQ(event.handle(), fake_event(0x7200));
  event.release();
}

// --- Buffer ---------------------------------------------------------------

class BufferMisuse : public ::testing::Test {
 protected:
  std::vector<Misuse> every_method(Buffer& b) {
    return {
        {"cubind::Buffer::device_id", [&] { b.device_id(); }},
        {"cubind::Buffer::is_device_accessible", [&] { b.is_device_accessible(); }},
        {"cubind::Buffer::is_host_accessible", [&] { b.is_host_accessible(); }},
        {"cubind::Buffer::close", [&] { b.close(); }},
        {"cubind::Buffer::close", [&] { b.close(stream); }},
        {"cubind::Buffer::release", [&] { b.release(); }},
        {"cubind::Buffer::copy_from", [&] { b.copy_from(live, stream); }},
        {"cubind::Buffer::copy_to", [&] { b.copy_to(live, stream); }},
        {"cubind::Buffer::copy_from", [&] { b.copy_from(host, sizeof host, stream); }},
        {"cubind::Buffer::copy_to", [&] { b.copy_to(host, sizeof host, stream); }},
        {"cubind::Buffer::fill", [&] { b.fill(std::uint8_t{1}, stream); }},
        {"cubind::Buffer::fill", [&] { b.fill(std::uint16_t{1}, stream); }},
        {"cubind::Buffer::fill", [&] { b.fill(std::uint32_t{1}, stream); }},
        {"cubind::Buffer::export_ipc", [&] { b.export_ipc(); }},
        // As the other side of a copy, a null buffer is named as the source or destination.
        {"cubind::Buffer::copy_from (the source)", [&] { live.copy_from(b, stream); }},
        {"cubind::Buffer::copy_to (the destination)", [&] { live.copy_to(b, stream); }},
    };
  }

  std::shared_ptr<HostResource> resource = std::make_shared<HostResource>();
  StreamRef stream{fake_stream(0x7000)};
  Buffer live = Buffer::allocate(resource, 16, stream);
  unsigned char host[16] = {};
};

TEST_F(BufferMisuse, EveryMethodOfAMovedFromBufferThrows) {
  Buffer buffer = Buffer::allocate(resource, 16, stream);
  Buffer taken = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.resource(), nullptr);
  expect_each_throws<std::logic_error>(every_method(buffer), "this Buffer is null");
  EXPECT_EQ(resource->live, 2);
}

TEST_F(BufferMisuse, EveryMethodOfAClosedBufferThrowsAndCloseIsOnce) {
  Buffer buffer = Buffer::allocate(resource, 16, stream);
  buffer.close();
  EXPECT_EQ(resource->live, 1);
  expect_each_throws<std::logic_error>(every_method(buffer), "this Buffer is null");
  EXPECT_EQ(resource->live, 1) << "a second close frees nothing";
}

TEST_F(BufferMisuse, EveryMethodOfAReleasedBufferThrowsAndReleaseIsOnce) {
  Buffer buffer = Buffer::allocate(resource, 16, stream);
  void* memory = buffer.release();
  ASSERT_NE(memory, nullptr);
  expect_each_throws<std::logic_error>(every_method(buffer), "this Buffer is null");
  EXPECT_EQ(resource->live, 2) << "released memory is the caller's: nothing frees it";
  resource->deallocate(memory, 16, stream);
}

TEST_F(BufferMisuse, EveryMethodOfADefaultConstructedBufferThrowsAndItTakesABuffer) {
  Buffer buffer;
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.resource(), nullptr);
  expect_each_throws<std::logic_error>(every_method(buffer), "this Buffer is null");
  // Assigned a Buffer, it holds that memory; assigned another, it frees the first.
  buffer = Buffer::allocate(resource, 32, stream);
  EXPECT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 32u);
  EXPECT_EQ(resource->live, 2);
  buffer = Buffer::allocate(resource, 8, stream);
  EXPECT_EQ(buffer.size(), 8u);
  EXPECT_EQ(resource->live, 2) << "the buffer held before is freed";
  buffer = Buffer();
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(resource->live, 1);
  { Buffer unused; }  // a null Buffer's destructor frees nothing
  EXPECT_EQ(resource->live, 1);
}

TEST_F(BufferMisuse, SelfMoveAssignmentKeepsTheMemory) {
  Buffer buffer = Buffer::allocate(resource, 16, stream);
  void* const memory = buffer.data();
  Buffer& alias = buffer;
  buffer = std::move(alias);
  EXPECT_EQ(buffer.data(), memory);
  EXPECT_EQ(buffer.size(), 16u);
  EXPECT_EQ(resource->live, 2);
}

TEST_F(BufferMisuse, CopiesIntoASmallerBufferAreOutOfRangeNamingBothSizes) {
  Buffer small = Buffer::allocate(resource, 8, stream);
  std::string message = message_of<std::out_of_range>([&] { small.copy_from(live, stream); });
  EXPECT_EQ(message, "cubind::Buffer::copy_from: the source holds 16 bytes, more than this buffer's 8 bytes");
  message = message_of<std::out_of_range>([&] { live.copy_to(small, stream); });
  EXPECT_EQ(message, "cubind::Buffer::copy_to: this buffer holds 16 bytes, more than the destination's 8 bytes");
  message = message_of<std::out_of_range>([&] { small.copy_from(host, sizeof host, stream); });
  EXPECT_EQ(message, "cubind::Buffer::copy_from: 16 bytes do not fit in this buffer of 8 bytes");
  message = message_of<std::out_of_range>([&] { small.copy_to(host, sizeof host, stream); });
  EXPECT_EQ(message, "cubind::Buffer::copy_to: 16 bytes do not fit in this buffer of 8 bytes");
  EXPECT_THROW(small.copy_from(host, 0, stream), std::out_of_range);
  EXPECT_THROW(small.copy_from(nullptr, 8, stream), std::invalid_argument);
}

TEST_F(BufferMisuse, AFailedCloseKeepsTheBufferSoItCanBeClosedAgain) {
  const NullStream null;
  Buffer buffer = Buffer::allocate(resource, 16, stream);
  EXPECT_THROW(buffer.close(null.ref()), std::logic_error);
  EXPECT_NE(buffer.data(), nullptr);
  buffer.close();
  EXPECT_EQ(resource->live, 1);
}

TEST_F(BufferMisuse, AdoptingNothingIsRefused) {
  EXPECT_THROW(Buffer::from_native_handle(nullptr, 16, resource, stream), std::invalid_argument);
  EXPECT_THROW(Buffer::from_native_handle(host, 0, resource, stream), std::out_of_range);
  EXPECT_THROW(Buffer::from_native_handle(host, 16, nullptr, stream), std::invalid_argument);
  EXPECT_THROW(Buffer::allocate(resource, 0, stream), std::out_of_range);
  EXPECT_EQ(resource->live, 1);
}

// --- Graph and GraphExec ---------------------------------------------------

TEST(GraphMisuse, EveryMethodOfAReleasedGraphThrowsAndReleaseIsOnce) {
  Graph graph = Graph::from_native_handle(reinterpret_cast<CUgraph>(std::uintptr_t{0x7400}));
  graph.release();
  expect_each_throws<std::logic_error>(
      {
          {"cubind::Graph::node_count", [&] { graph.node_count(); }},
          {"cubind::Graph::instantiate", [&] { graph.instantiate(); }},
          {"cubind::Graph::release", [&] { graph.release(); }},
      },
      "this Graph is null");
  Graph& alias = graph;
  graph = std::move(alias);
  EXPECT_EQ(graph.handle(), nullptr);
}

TEST(GraphMisuse, EveryMethodOfAReleasedOrMovedFromGraphExecThrows) {
  GraphExec exec = GraphExec::from_native_handle(reinterpret_cast<CUgraphExec>(std::uintptr_t{0x7500}));
  GraphExec taken = std::move(exec);
  const std::vector<Misuse> misuses = {
      {"cubind::GraphExec::launch", [&] { exec.launch(StreamRef::legacy_default()); }},
      {"cubind::GraphExec::upload", [&] { exec.upload(StreamRef::legacy_default()); }},
      {"cubind::GraphExec::release", [&] { exec.release(); }},
  };
  expect_each_throws<std::logic_error>(misuses, "this GraphExec is null");
  exec = std::move(taken);
  exec.release();
  expect_each_throws<std::logic_error>(misuses, "this GraphExec is null");
}

// --- IpcPoolHandle and Context -------------------------------------------------

TEST(IpcPoolHandleMisuse, ReleaseIsOnceAndTheDescriptorIsClosedOnce) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ::close(fds[1]);
  IpcPoolHandle handle = IpcPoolHandle::from_native_handle(fds[0]);
  IpcPoolHandle& alias = handle;
  handle = std::move(alias);
  EXPECT_EQ(handle.fd(), fds[0]);
  EXPECT_EQ(handle.release(), fds[0]);
  const std::string message = message_of<std::logic_error>([&] { handle.release(); });
  EXPECT_NE(message.find("cubind::IpcPoolHandle::release: this IpcPoolHandle is null"), std::string::npos) << message;
  EXPECT_EQ(fcntl(fds[0], F_GETFD), 0) << "a released descriptor stays open";
  ::close(fds[0]);
  EXPECT_THROW(IpcPoolHandle::from_native_handle(-1), std::invalid_argument);
}

TEST(ContextMisuse, NullHandlesAreRefused) {
  EXPECT_THROW(cubind::Context::from_native_handle(nullptr), std::invalid_argument);
  EXPECT_THROW(Event::from_native_handle(nullptr), std::invalid_argument);
  EXPECT_THROW(TimedEvent::from_native_handle(nullptr), std::invalid_argument);
  EXPECT_THROW(Graph::from_native_handle(nullptr), std::invalid_argument);
  EXPECT_THROW(GraphExec::from_native_handle(nullptr), std::invalid_argument);
  const std::string message = message_of<std::invalid_argument>([] { Kernel::from_native_handle(nullptr); });
  EXPECT_EQ(message, "cubind::Kernel::from_native_handle: the handle is null");
}

// --- Program, Linker, ObjectCode, Kernel -------------------------------------

constexpr const char* kKernel = R"(extern "C" __global__ void scale(float* data, float factor) { data[0] *= factor; })";

TEST(ProgramMisuse, EveryMethodOfAMovedFromProgramThrows) {
  Program program(kKernel, "scale.cu");
  Program taken = std::move(program);
  expect_each_throws<std::logic_error>(
      {
          {"cubind::Program::compile", [&] { program.compile(CodeKind::ptx); }},
          {"cubind::Program::lowered_name", [&] { program.lowered_name("scale"); }},
          {"cubind::Program::name", [&] { program.name(); }},
          {"cubind::Program::handle", [&] { program.handle(); }},
      },
      "this Program is null (moved from)");
  Program& alias = taken;
  taken = std::move(alias);
  EXPECT_EQ(taken.name(), "scale.cu");
}

TEST(ProgramMisuse, LoweredNameBeforeAnyCompileIsAnNvrtcError) {
  Program program(kKernel, "scale.cu");
  EXPECT_THROW(program.lowered_name("scale"), cubind::NvrtcError);
}

LinkerOptions sm90() {
  LinkerOptions options;
  options.arch = "sm_90";
  return options;
}

ObjectCode scale_ptx() {
  Program program(kKernel, "scale.cu");
  cubind::ProgramOptions options;
  options.arch = "compute_90";
  cubind::CompileResult result = program.compile(CodeKind::ptx, options);
  EXPECT_TRUE(result.ok) << result.log;
  return std::move(result.code);
}

TEST(LinkerMisuse, EveryMethodOfAMovedFromLinkerThrows) {
  Linker linker(sm90());
  Linker taken = std::move(linker);
  const char bytes[] = "x";
  expect_each_throws<std::logic_error>(
      {
          {"cubind::Linker::add", [&] { linker.add(ObjectCode::from_bytes(CodeKind::ptx, {'x'})); }},
          {"cubind::Linker::add_bytes", [&] { linker.add_bytes(CodeKind::ptx, bytes, sizeof bytes, "x.ptx"); }},
          {"cubind::Linker::add_file", [&] { linker.add_file("x.ptx"); }},
          {"cubind::Linker::link", [&] { linker.link(); }},
          {"cubind::Linker::error_log", [&] { linker.error_log(); }},
          {"cubind::Linker::info_log", [&] { linker.info_log(); }},
          {"cubind::Linker::handle", [&] { linker.handle(); }},
      },
      "this Linker is null (moved from)");
  Linker& alias = taken;
  taken = std::move(alias);
  EXPECT_NE(taken.handle(), nullptr);
}

TEST(LinkerMisuse, ALinkerLinksOnceAndTakesNoInputAfterwards) {
  Linker linker(sm90());
  linker.add(scale_ptx());
  const cubind::LinkResult first = linker.link();
  ASSERT_TRUE(first.ok) << first.error_log;
  const ObjectCode more = scale_ptx();
  expect_each_throws<std::logic_error>(
      {
          {"cubind::Linker::link", [&] { linker.link(); }},
          {"cubind::Linker::add", [&] { linker.add(more); }},
          {"cubind::Linker::add_bytes",
           [&] { linker.add_bytes(CodeKind::ptx, more.bytes().data(), more.bytes().size(), "more.ptx"); }},
          {"cubind::Linker::add_file", [&] { linker.add_file("more.ptx"); }},
      },
      "has linked already");
  // The logs stay readable, and the result keeps its code.
  EXPECT_NO_THROW(linker.error_log());
  EXPECT_NO_THROW(linker.info_log());
  EXPECT_FALSE(first.code.bytes().empty());
}

TEST(LinkerMisuse, AFailedLinkAlsoEndsTheLinker) {
  // A kernel calling a device function no input defines: the link fails.
  Program program(R"(extern __device__ float twice(float x);
extern "C" __global__ void apply(float* data) { data[0] = twice(data[0]); })",
                  "caller.cu");
  cubind::ProgramOptions options;
  options.arch = "compute_90";
  options.relocatable_device_code = true;
  cubind::CompileResult compiled = program.compile(CodeKind::ltoir, options);
  ASSERT_TRUE(compiled.ok) << compiled.log;
  LinkerOptions lto = sm90();
  lto.lto = true;
  Linker linker(lto);
  linker.add(compiled.code);
  const cubind::LinkResult result = linker.link();
  ASSERT_FALSE(result.ok);
  const std::string message = message_of<std::logic_error>([&] { linker.link(); });
  EXPECT_EQ(message, "cubind::Linker::link: this Linker has linked already; a Linker links once, so make a new one");
  EXPECT_NE(linker.error_log().find("_Z5twicef"), std::string::npos) << linker.error_log();
}

TEST(LinkerMisuse, NullDataIsRefusedBeforeNvJitLinkReadsIt) {
  Linker linker(sm90());
  const std::string message = message_of<std::invalid_argument>([&] { linker.add_bytes(CodeKind::cubin, nullptr, 64, "x"); });
  EXPECT_EQ(message, "cubind::Linker::add_bytes: data is null, with size 64");
  const std::string kind = message_of<std::invalid_argument>(
      [&] { linker.add_bytes(static_cast<CodeKind>(99), "x", 1, "x"); });
  EXPECT_NE(kind.find("unknown CodeKind 99"), std::string::npos) << kind;
  // The Linker is still usable.
  linker.add(scale_ptx());
  EXPECT_TRUE(linker.link().ok);
}

TEST(ObjectCodeMisuse, EveryMethodOfANullObjectCodeThrows) {
  ObjectCode code = ObjectCode::from_bytes(CodeKind::ptx, {'x'}, "x.ptx");
  ObjectCode taken = std::move(code);
  const ObjectCode never;
  for (const ObjectCode* null : std::initializer_list<const ObjectCode*>{&code, &never}) {
    expect_each_throws<std::logic_error>(
        {
            {"cubind::ObjectCode::kind", [&] { null->kind(); }},
            {"cubind::ObjectCode::name", [&] { null->name(); }},
            {"cubind::ObjectCode::bytes", [&] { null->bytes(); }},
            {"cubind::ObjectCode::get_kernel", [&] { null->get_kernel("scale"); }},
            {"cubind::ObjectCode::kernel_names", [&] { null->kernel_names(); }},
            {"cubind::ObjectCode::handle", [&] { null->handle(); }},
        },
        "this ObjectCode is null");
  }
  Linker linker(sm90());
  EXPECT_THROW(linker.add(never), std::logic_error);
  ObjectCode& alias = taken;
  taken = std::move(alias);
  EXPECT_EQ(taken.name(), "x.ptx");
}

TEST(ObjectCodeMisuse, EmptyCodeIsRefusedBeforeTheDriverReadsIt) {
  // The driver takes an image without its size, so nothing may reach it that holds nothing.
  for (CodeKind kind : {CodeKind::cubin, CodeKind::ptx, CodeKind::fatbin}) {
    const ObjectCode empty = ObjectCode::from_bytes(kind, {}, "empty");
    const std::string message = message_of<std::invalid_argument>([&] { empty.get_kernel("scale"); });
    EXPECT_EQ(message, std::string("cubind::ObjectCode::get_kernel: empty is empty: it holds no ") +
                           cubind::code_kind_name(kind));
    EXPECT_THROW(empty.kernel_names(), std::invalid_argument);
    EXPECT_THROW(empty.handle(), std::invalid_argument);
  }
  const ObjectCode terminator_only = ObjectCode::from_bytes(CodeKind::ptx, {'\0'}, "nul.ptx");
  EXPECT_THROW(terminator_only.get_kernel("scale"), std::invalid_argument);
  // Code the driver cannot load at all is refused by kind, also before any driver call.
  const ObjectCode unknown = ObjectCode::from_bytes(static_cast<CodeKind>(99), {'x'}, "odd");
  EXPECT_THROW(unknown.get_kernel("scale"), std::logic_error);
}

TEST(KernelMisuse, EveryMethodOfANullKernelThrows) {
  Kernel kernel;
  const LaunchConfig config{1, 1};
  expect_each_throws<std::logic_error>(
      {
          {"cubind::Kernel::handle", [&] { kernel.handle(); }},
          {"cubind::Kernel::name", [&] { kernel.name(); }},
          {"cubind::Kernel::param_info", [&] { kernel.param_info(); }},
          {"cubind::Kernel::param_info", [&] { kernel.param_count(); }},
          {"cubind::Kernel::function", [&] { kernel.function(); }},
          {"cubind::Kernel::max_active_blocks_per_multiprocessor",
           [&] { kernel.max_active_blocks_per_multiprocessor(32); }},
          {"cubind::Kernel::max_potential_block_size", [&] { kernel.max_potential_block_size(); }},
          {"cubind::Kernel::available_dynamic_shared_memory_per_block",
           [&] { kernel.available_dynamic_shared_memory_per_block(1, 32); }},
          {"cubind::Kernel::max_potential_cluster_size", [&] { kernel.max_potential_cluster_size(config); }},
          {"cubind::Kernel::max_active_clusters", [&] { kernel.max_active_clusters(config); }},
      },
      "this Kernel is null");
  Kernel copy = kernel;
  Kernel moved = std::move(copy);
  EXPECT_THROW(moved.name(), std::logic_error);
}

TEST(LaunchMisuse, ArgumentsWithoutTheirBytesAreRefused) {
  const Kernel kernel;
  const std::size_t sizes[2] = {8, 4};
  float value = 1.0f;
  void* args[2] = {&value, &value};
  const StreamRef stream(fake_stream(0x7000));
  std::string message = message_of<std::invalid_argument>(
      [&] { cubind::launch_type_erased(stream, LaunchConfig{1, 1}, kernel, nullptr, sizes, 2); });
  EXPECT_EQ(message, "cubind::launch: 2 arguments given, but args is null");
  message = message_of<std::invalid_argument>(
      [&] { cubind::launch_type_erased(stream, LaunchConfig{1, 1}, kernel, args, nullptr, 2); });
  EXPECT_EQ(message, "cubind::launch: 2 arguments given, but sizes is null");
  // With no arguments, null arrays are fine: the null Kernel is what is refused.
  EXPECT_THROW(cubind::launch_type_erased(stream, LaunchConfig{1, 1}, kernel, nullptr, nullptr, 0), std::logic_error);
}

TEST(LaunchMisuse, WrongArgumentCountsAndSizesNameTheKernelAndTheNumbers) {
  const cubind::KernelParam params[2] = {{0, 8}, {8, 4}};
  const std::size_t too_few[1] = {8};
  const std::size_t too_many[3] = {8, 4, 4};
  const std::size_t wrong[2] = {8, 8};
  std::string message = message_of<std::invalid_argument>(
      [&] { cubind::check_kernel_arguments("scale", params, 2, too_few, 1); });
  EXPECT_EQ(message, "cubind::launch: kernel 'scale' takes 2 arguments, 1 given");
  message = message_of<std::invalid_argument>(
      [&] { cubind::check_kernel_arguments("scale", params, 2, too_many, 3); });
  EXPECT_EQ(message, "cubind::launch: kernel 'scale' takes 2 arguments, 3 given");
  message = message_of<std::invalid_argument>(
      [&] { cubind::check_kernel_arguments("scale", params, 2, wrong, 2); });
  EXPECT_EQ(message, "cubind::launch: argument 1 of kernel 'scale' must be 4 bytes, 8 bytes given");
}

}  // namespace

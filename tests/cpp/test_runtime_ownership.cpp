// What the runtime types promise without a GPU: who owns what (by type), the
// null state an owner is left in after a move or release and the
// std::logic_error using it raises, StreamRef's conversions, and rejected
// handles. Adopted handles here are fake and released before destruction, so
// no driver ever sees them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/event.hpp"
#include "cubind/graph.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Context;
using cubind::ContextGuard;
using cubind::Device;
using cubind::Event;
using cubind::EventRef;
using cubind::Graph;
using cubind::GraphExec;
using cubind::IpcPoolHandle;
using cubind::Stream;
using cubind::StreamRef;
using cubind::TimedEvent;
using cubind_test::message_of;

template <typename T>
CUstream fake_stream(T value) {
  return reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(value));
}

// Owners move but never copy; views copy freely.
static_assert(!std::is_copy_constructible_v<Stream> && std::is_nothrow_move_constructible_v<Stream> &&
              std::is_nothrow_move_assignable_v<Stream>);
static_assert(!std::is_copy_constructible_v<Event> && std::is_nothrow_move_constructible_v<Event>);
static_assert(!std::is_copy_constructible_v<TimedEvent> && std::is_nothrow_move_constructible_v<TimedEvent>);
static_assert(!std::is_copy_constructible_v<Graph> && std::is_nothrow_move_constructible_v<Graph>);
static_assert(!std::is_copy_constructible_v<GraphExec> && std::is_nothrow_move_constructible_v<GraphExec>);
static_assert(!std::is_copy_constructible_v<IpcPoolHandle> && std::is_nothrow_move_constructible_v<IpcPoolHandle>);
static_assert(std::is_trivially_copyable_v<StreamRef> && sizeof(StreamRef) == sizeof(CUstream));
static_assert(std::is_trivially_copyable_v<EventRef> && std::is_trivially_copyable_v<Context> &&
              std::is_trivially_copyable_v<Device>);
static_assert(!std::is_copy_constructible_v<ContextGuard> && !std::is_move_constructible_v<ContextGuard>);

// A StreamRef comes from a handle only when asked explicitly, from a Stream
// implicitly, and never from 0 or nullptr (which CUDA would read as the legacy stream).
static_assert(std::is_constructible_v<StreamRef, CUstream> && !std::is_convertible_v<CUstream, StreamRef>);
static_assert(std::is_convertible_v<const Stream&, StreamRef>);
static_assert(!std::is_constructible_v<StreamRef, int> && !std::is_constructible_v<StreamRef, std::nullptr_t>);
static_assert(!std::is_constructible_v<EventRef, int> && !std::is_constructible_v<EventRef, std::nullptr_t>);
static_assert(std::is_convertible_v<const Event&, EventRef> && std::is_convertible_v<const TimedEvent&, EventRef>);

// Only timed events subtract to a duration.
template <typename T, typename = void>
struct subtracts : std::false_type {};
template <typename T>
struct subtracts<T, std::void_t<decltype(std::declval<const T&>() - std::declval<const T&>())>> : std::true_type {};
static_assert(subtracts<TimedEvent>::value && !subtracts<Event>::value && !subtracts<EventRef>::value);
static_assert(std::is_same_v<decltype(std::declval<const TimedEvent&>() - std::declval<const TimedEvent&>()),
                             std::chrono::duration<float, std::milli>>);

TEST(StreamRefTest, KeepsTheHandleItWasGiven) {
  const CUstream handle = fake_stream(0x1000);
  EXPECT_EQ(StreamRef(handle).handle(), handle);
  EXPECT_EQ(StreamRef::legacy_default().handle(), CU_STREAM_LEGACY);
  EXPECT_EQ(StreamRef::per_thread_default().handle(), CU_STREAM_PER_THREAD);
}

TEST(StreamRefTest, OfAStreamViewsItsHandle) {
  Stream stream = Stream::from_native_handle(fake_stream(0x1000));
  const StreamRef ref = stream;
  EXPECT_EQ(ref.handle(), fake_stream(0x1000));
  stream.release();
}

TEST(StreamRefTest, OfANullStreamIsRejectedNotTheLegacyStream) {
  Stream stream = Stream::from_native_handle(fake_stream(0x1000));
  Stream taken = std::move(stream);
  const StreamRef ref = stream;
  EXPECT_NE(ref.handle(), nullptr);
  EXPECT_NE(ref.handle(), CU_STREAM_LEGACY);
  const std::string message =
      message_of<std::logic_error>([&] { cubind::detail::require_stream(ref, "cubind::Example::call"); });
  EXPECT_NE(message.find("cubind::Example::call"), std::string::npos) << message;
  EXPECT_NE(message.find("null cubind::Stream"), std::string::npos) << message;
  taken.release();
}

TEST(StreamTest, MovedFromIsNullAndNamesTheMethodWhenUsed) {
  Stream stream = Stream::from_native_handle(fake_stream(0x1000));
  Stream taken = std::move(stream);
  EXPECT_EQ(stream.handle(), nullptr);  // NOLINT(bugprone-use-after-move): the null state is the point
  EXPECT_EQ(taken.handle(), fake_stream(0x1000));
  for (auto [name, call] : std::initializer_list<std::pair<const char*, void (*)(Stream&)>>{
           {"cubind::Stream::sync", [](Stream& s) { s.sync(); }},
           {"cubind::Stream::query", [](Stream& s) { s.query(); }},
           {"cubind::Stream::record", [](Stream& s) { s.record(); }},
           {"cubind::Stream::wait", [](Stream& s) { s.wait(StreamRef::legacy_default()); }},
           {"cubind::Stream::launch_host_func", [](Stream& s) { s.launch_host_func([] {}); }},
           {"cubind::Stream::begin_capture", [](Stream& s) { s.begin_capture(); }},
           {"cubind::Stream::release", [](Stream& s) { s.release(); }},
       }) {
    const std::string message = message_of<std::logic_error>([&] { call(stream); });
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("this Stream is null"), std::string::npos) << message;
  }
  EXPECT_EQ(taken.release(), fake_stream(0x1000));
  EXPECT_EQ(taken.handle(), nullptr);
}

TEST(StreamTest, MoveAssignmentTakesTheOtherHandle) {
  Stream a = Stream::from_native_handle(fake_stream(0x1000));
  Stream b = Stream::from_native_handle(fake_stream(0x2000));
  b.release();  // so that the assignment below destroys nothing real
  b = std::move(a);
  EXPECT_EQ(b.handle(), fake_stream(0x1000));
  EXPECT_EQ(a.handle(), nullptr);  // NOLINT(bugprone-use-after-move)
  b.release();
}

TEST(StreamTest, CannotOwnADefaultStream) {
  for (CUstream handle : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    const std::string message = message_of<std::invalid_argument>([&] { Stream::from_native_handle(handle); });
    EXPECT_NE(message.find("default stream"), std::string::npos) << message;
  }
}

TEST(EventTest, MovedFromIsNullAndNamesTheMethodWhenUsed) {
  Event event = Event::from_native_handle(reinterpret_cast<CUevent>(std::uintptr_t{0x3000}));
  Event taken = std::move(event);
  EXPECT_EQ(event.handle(), nullptr);  // NOLINT(bugprone-use-after-move)
  std::string message = message_of<std::logic_error>([&] { event.sync(); });
  EXPECT_NE(message.find("cubind::EventRef::sync"), std::string::npos) << message;
  EXPECT_NE(message.find("null"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { event.query(); });
  EXPECT_NE(message.find("cubind::EventRef::query"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { event.ipc_handle(); });
  EXPECT_NE(message.find("cubind::Event::ipc_handle"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { event.release(); });
  EXPECT_NE(message.find("cubind::Event::release"), std::string::npos) << message;
  EXPECT_NE(taken.release(), nullptr);
}

TEST(EventTest, TimedEventsOfANullSideDoNotSubtract) {
  TimedEvent end = TimedEvent::from_native_handle(reinterpret_cast<CUevent>(std::uintptr_t{0x3000}));
  TimedEvent start = TimedEvent::from_native_handle(reinterpret_cast<CUevent>(std::uintptr_t{0x4000}));
  TimedEvent taken = std::move(start);
  const std::string message = message_of<std::logic_error>([&] { (void)(end - start); });
  EXPECT_NE(message.find("operator-"), std::string::npos) << message;
  end.release();
  taken.release();
}

TEST(EventTest, NullHandlesAreRejected) {
  EXPECT_THROW(Event::from_native_handle(nullptr), std::invalid_argument);
  EXPECT_THROW(TimedEvent::from_native_handle(nullptr), std::invalid_argument);
}

TEST(GraphTest, MovedFromIsNullAndNamesTheMethodWhenUsed) {
  Graph graph = Graph::from_native_handle(reinterpret_cast<CUgraph>(std::uintptr_t{0x5000}));
  Graph taken = std::move(graph);
  EXPECT_EQ(graph.handle(), nullptr);  // NOLINT(bugprone-use-after-move)
  std::string message = message_of<std::logic_error>([&] { graph.node_count(); });
  EXPECT_NE(message.find("cubind::Graph::node_count"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { graph.instantiate(); });
  EXPECT_NE(message.find("cubind::Graph::instantiate"), std::string::npos) << message;
  taken.release();

  GraphExec exec = GraphExec::from_native_handle(reinterpret_cast<CUgraphExec>(std::uintptr_t{0x6000}));
  GraphExec exec_taken = std::move(exec);
  message = message_of<std::logic_error>([&] { exec.launch(StreamRef::legacy_default()); });
  EXPECT_NE(message.find("cubind::GraphExec::launch"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { exec.upload(StreamRef::legacy_default()); });
  EXPECT_NE(message.find("cubind::GraphExec::upload"), std::string::npos) << message;
  exec_taken.release();

  EXPECT_THROW(Graph::from_native_handle(nullptr), std::invalid_argument);
  EXPECT_THROW(GraphExec::from_native_handle(nullptr), std::invalid_argument);
}

TEST(GraphTest, LaunchOnANullStreamIsRejected) {
  GraphExec exec = GraphExec::from_native_handle(reinterpret_cast<CUgraphExec>(std::uintptr_t{0x6000}));
  Stream stream = Stream::from_native_handle(fake_stream(0x1000));
  Stream taken = std::move(stream);
  const std::string message = message_of<std::logic_error>([&] { exec.launch(stream); });
  EXPECT_NE(message.find("cubind::GraphExec::launch"), std::string::npos) << message;
  EXPECT_NE(message.find("null cubind::Stream"), std::string::npos) << message;
  exec.release();
  taken.release();
}

TEST(ContextTest, NullHandleIsRejected) {
  EXPECT_THROW(Context::from_native_handle(nullptr), std::invalid_argument);
  const CUcontext fake = reinterpret_cast<CUcontext>(std::uintptr_t{0x7000});
  EXPECT_EQ(Context::from_native_handle(fake).handle(), fake);
  EXPECT_EQ(Context::from_native_handle(fake), Context::from_native_handle(fake));
}

TEST(DeviceTest, NegativeOrdinalIsOutOfRange) {
  const std::string message = message_of<std::out_of_range>([] { Device::get(-1); });
  EXPECT_NE(message.find("cubind::Device::get"), std::string::npos) << message;
  EXPECT_NE(message.find("-1"), std::string::npos) << message;
}

TEST(IpcPoolHandleTest, OwnsAndClosesItsDescriptor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ::close(fds[1]);
  {
    IpcPoolHandle handle = IpcPoolHandle::from_native_handle(fds[0]);
    IpcPoolHandle taken = std::move(handle);
    EXPECT_EQ(handle.fd(), -1);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(taken.fd(), fds[0]);
    const std::string message = message_of<std::logic_error>([&] { handle.release(); });
    EXPECT_NE(message.find("cubind::IpcPoolHandle::release"), std::string::npos) << message;
    EXPECT_EQ(fcntl(fds[0], F_GETFD), 0);
  }
  EXPECT_EQ(fcntl(fds[0], F_GETFD), -1);
  EXPECT_THROW(IpcPoolHandle::from_native_handle(-1), std::invalid_argument);
}

}  // namespace

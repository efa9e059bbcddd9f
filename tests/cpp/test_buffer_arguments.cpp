// Buffer's contract with its MemoryResource and its argument checks, over a
// resource of plain host memory, so no GPU is needed: every check here fires
// before any CUDA call.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cubind/buffer.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Buffer;
using cubind::MemoryResource;
using cubind::Stream;
using cubind::StreamRef;
using cubind_test::message_of;

CUstream fake_stream(std::uintptr_t value) { return reinterpret_cast<CUstream>(value); }

// malloc and free, recording what Buffer asked of it.
class HostResource final : public MemoryResource {
 public:
  struct Call {
    void* ptr;
    std::size_t bytes;
    CUstream stream;
  };

  void* allocate(std::size_t bytes, StreamRef stream) override {
    void* ptr = std::malloc(bytes);
    allocations.push_back({ptr, bytes, stream.handle()});
    return ptr;
  }
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override {
    deallocations.push_back({ptr, bytes, stream.handle()});
    std::free(ptr);
  }
  bool is_device_accessible() const noexcept override { return false; }
  bool is_host_accessible() const noexcept override { return true; }
  int device_id() const noexcept override { return -1; }

  std::vector<Call> allocations;
  std::vector<Call> deallocations;
};

template <typename T, typename = void>
struct fills_with : std::false_type {};
template <typename T>
struct fills_with<T, std::void_t<decltype(std::declval<Buffer&>().fill(std::declval<T>(), StreamRef::legacy_default()))>>
    : std::true_type {};
// A plain 0 does not say whether bytes or words are meant.
static_assert(fills_with<std::uint8_t>::value && fills_with<std::uint16_t>::value && fills_with<std::uint32_t>::value);
static_assert(!fills_with<int>::value && !fills_with<std::uint64_t>::value && !fills_with<char>::value);

class BufferArgumentsTest : public ::testing::Test {
 protected:
  std::shared_ptr<HostResource> resource = std::make_shared<HostResource>();
  StreamRef stream{fake_stream(0x1000)};
};

TEST_F(BufferArgumentsTest, FreesOnItsAllocationStreamWhenDestroyed) {
  void* ptr = nullptr;
  {
    Buffer buffer = Buffer::allocate(resource, 64, stream);
    ptr = buffer.data();
    EXPECT_EQ(buffer.size(), 64u);
    EXPECT_EQ(buffer.stream().handle(), stream.handle());
    EXPECT_EQ(buffer.resource(), resource);
    EXPECT_EQ(buffer.device_id(), -1);
    EXPECT_TRUE(buffer.is_host_accessible());
    EXPECT_TRUE(resource->deallocations.empty());
  }
  ASSERT_EQ(resource->deallocations.size(), 1u);
  EXPECT_EQ(resource->deallocations[0].ptr, ptr);
  EXPECT_EQ(resource->deallocations[0].bytes, 64u);
  EXPECT_EQ(resource->deallocations[0].stream, stream.handle());
}

TEST_F(BufferArgumentsTest, CloseOnAnotherStreamFreesThere) {
  Buffer buffer = Buffer::allocate(resource, 16, stream);
  buffer.close(StreamRef(fake_stream(0x2000)));
  ASSERT_EQ(resource->deallocations.size(), 1u);
  EXPECT_EQ(resource->deallocations[0].stream, fake_stream(0x2000));
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(buffer.resource(), nullptr);
  const std::string message = message_of<std::logic_error>([&] { buffer.close(); });
  EXPECT_NE(message.find("cubind::Buffer::close"), std::string::npos) << message;
}

TEST_F(BufferArgumentsTest, KeepsItsResourceAlive) {
  std::weak_ptr<HostResource> weak = resource;
  Buffer buffer = Buffer::allocate(std::move(resource), 8, stream);
  EXPECT_FALSE(weak.expired());
  buffer.close();
  EXPECT_TRUE(weak.expired());
}

TEST_F(BufferArgumentsTest, MovedFromIsNullAndNamesTheMethodWhenUsed) {
  Buffer buffer = Buffer::allocate(resource, 32, stream);
  Buffer taken = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(taken.size(), 32u);
  std::vector<unsigned char> host(32);
  for (auto [name, call] : std::initializer_list<std::pair<const char*, std::function<void()>>>{
           {"cubind::Buffer::copy_from", [&] { buffer.copy_from(host.data(), host.size(), stream); }},
           {"cubind::Buffer::copy_to", [&] { buffer.copy_to(host.data(), host.size(), stream); }},
           {"cubind::Buffer::fill", [&] { buffer.fill(std::uint8_t{1}, stream); }},
           {"cubind::Buffer::device_id", [&] { buffer.device_id(); }},
           {"cubind::Buffer::export_ipc", [&] { buffer.export_ipc(); }},
           {"cubind::Buffer::release", [&] { buffer.release(); }},
           {"cubind::Buffer::copy_from (the source)", [&] { taken.copy_from(buffer, stream); }},
       }) {
    const std::string message = message_of<std::logic_error>(call);
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("Buffer is null"), std::string::npos) << message;
  }
  EXPECT_TRUE(resource->deallocations.empty());
}

TEST_F(BufferArgumentsTest, MoveAssignmentFreesWhatItHeld) {
  Buffer a = Buffer::allocate(resource, 8, stream);
  Buffer b = Buffer::allocate(resource, 16, stream);
  void* old = b.data();
  b = std::move(a);
  ASSERT_EQ(resource->deallocations.size(), 1u);
  EXPECT_EQ(resource->deallocations[0].ptr, old);
  EXPECT_EQ(b.size(), 8u);
}

TEST_F(BufferArgumentsTest, ReleaseGivesUpOwnership) {
  void* ptr = nullptr;
  {
    Buffer buffer = Buffer::allocate(resource, 8, stream);
    ptr = buffer.release();
  }
  EXPECT_TRUE(resource->deallocations.empty());
  Buffer adopted = Buffer::from_native_handle(ptr, 8, resource, stream);
  EXPECT_EQ(adopted.data(), ptr);
}

TEST_F(BufferArgumentsTest, ZeroSizesAreOutOfRange) {
  std::string message = message_of<std::out_of_range>([&] { Buffer::allocate(resource, 0, stream); });
  EXPECT_NE(message.find("cubind::Buffer::allocate: size is 0 bytes"), std::string::npos) << message;
  Buffer buffer = Buffer::allocate(resource, 8, stream);
  unsigned char host[8] = {};
  message = message_of<std::out_of_range>([&] { buffer.copy_from(host, 0, stream); });
  EXPECT_NE(message.find("0 bytes to copy"), std::string::npos) << message;
  message = message_of<std::out_of_range>([&] { buffer.copy_to(host, 0, stream); });
  EXPECT_NE(message.find("0 bytes to copy"), std::string::npos) << message;
  EXPECT_TRUE(resource->allocations.size() == 1u);
}

TEST_F(BufferArgumentsTest, CopiesPastTheEndAreOutOfRangeNamingBothSizes) {
  Buffer small = Buffer::allocate(resource, 64, stream);
  Buffer large = Buffer::allocate(resource, 128, stream);
  std::vector<unsigned char> host(65);
  std::string message = message_of<std::out_of_range>([&] { small.copy_from(host.data(), 65, stream); });
  EXPECT_NE(message.find("65 bytes do not fit in this buffer of 64 bytes"), std::string::npos) << message;
  message = message_of<std::out_of_range>([&] { small.copy_to(host.data(), 65, stream); });
  EXPECT_NE(message.find("65 bytes do not fit in this buffer of 64 bytes"), std::string::npos) << message;
  message = message_of<std::out_of_range>([&] { small.copy_from(large, stream); });
  EXPECT_NE(message.find("the source holds 128 bytes, more than this buffer's 64 bytes"), std::string::npos)
      << message;
  message = message_of<std::out_of_range>([&] { large.copy_to(small, stream); });
  EXPECT_NE(message.find("this buffer holds 128 bytes, more than the destination's 64 bytes"), std::string::npos)
      << message;
}

TEST_F(BufferArgumentsTest, NullPointersAndResourcesAreInvalid) {
  Buffer buffer = Buffer::allocate(resource, 8, stream);
  EXPECT_THROW(buffer.copy_from(nullptr, 8, stream), std::invalid_argument);
  EXPECT_THROW(buffer.copy_to(nullptr, 8, stream), std::invalid_argument);
  EXPECT_THROW(Buffer::allocate(nullptr, 8, stream), std::invalid_argument);
  EXPECT_THROW(Buffer::from_native_handle(nullptr, 8, resource, stream), std::invalid_argument);
  EXPECT_THROW(Buffer::from_ipc(nullptr, cubind::IpcBufferDescriptor{}, stream), std::invalid_argument);
}

TEST_F(BufferArgumentsTest, FillNeedsAWholeNumberOfWords) {
  Buffer buffer = Buffer::allocate(resource, 6, stream);
  const std::string message = message_of<std::invalid_argument>([&] { buffer.fill(std::uint32_t{7}, stream); });
  EXPECT_NE(message.find("6 bytes are not a whole number of 4-byte words"), std::string::npos) << message;
}

TEST_F(BufferArgumentsTest, ANullStreamIsRejected) {
  Stream owner = Stream::from_native_handle(fake_stream(0x3000));
  Stream taken = std::move(owner);
  Buffer buffer = Buffer::allocate(resource, 8, stream);
  unsigned char host[8] = {};
  for (auto [name, call] : std::initializer_list<std::pair<const char*, std::function<void()>>>{
           {"cubind::Buffer::allocate", [&] { Buffer::allocate(resource, 8, owner); }},
           {"cubind::Buffer::fill", [&] { buffer.fill(std::uint8_t{1}, owner); }},
           {"cubind::Buffer::copy_from", [&] { buffer.copy_from(host, 8, owner); }},
           {"cubind::Buffer::close", [&] { buffer.close(owner); }},
       }) {
    const std::string message = message_of<std::logic_error>(call);
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("null cubind::Stream"), std::string::npos) << message;
  }
  EXPECT_NE(buffer.data(), nullptr) << "a rejected close keeps the buffer";
  taken.release();
}

TEST_F(BufferArgumentsTest, ExportNeedsAnIpcPool) {
  Buffer buffer = Buffer::allocate(resource, 8, stream);
  const std::string message = message_of<std::logic_error>([&] { buffer.export_ipc(); });
  EXPECT_NE(message.find("ipc_enabled"), std::string::npos) << message;
}

}  // namespace

// Memory and events shared between two processes on one GPU, from a device
// pool and from a pinned host pool. The parent exports an allocation of an
// IPC-enabled pool (its pool as a POSIX file
// descriptor, passed over a Unix socket with SCM_RIGHTS, plus the pointer's
// export data) and an interprocess event; the child, a fresh exec of this
// binary, imports them, waits on the event, checks and rewrites the memory.
// The parent holds its stream with a HostGate until the child has seen the
// event incomplete, so the ordering across processes is tested, not assumed.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/event.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/stream.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::Buffer;
using cubind::Device;
using cubind::DeviceMemoryResource;
using cubind::Event;
using cubind::IpcPoolHandle;
using cubind::MemoryPool;
using cubind::PinnedMemoryResource;
using cubind::Stream;

constexpr std::uint32_t kParentWord = 0xa5a5a5a5u;
constexpr std::uint32_t kChildWord = 0x5a5a5a5au;
constexpr std::size_t kWords = 1 << 16;
constexpr std::size_t kBytes = kWords * sizeof(std::uint32_t);

// Parent to child, with the pool's descriptor alongside.
struct Handoff {
  cubind::IpcBufferDescriptor buffer;
  CUipcEventHandle event;
  int device_ordinal;
  int pinned;  // 1: the pool is a PinnedMemoryResource's
};

// Child to parent: 'N' (event not ready yet) or 'R', then 'K' (done) or 'E' with a reason.
struct Reply {
  char tag;
  char text[255];
};

void send_with_fd(int socket, const void* data, std::size_t size, int fd) {
  iovec iov{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  if (sendmsg(socket, &message, 0) != static_cast<ssize_t>(size)) {
    throw std::runtime_error(std::string("sendmsg: ") + std::strerror(errno));
  }
}

int receive_with_fd(int socket, void* data, std::size_t size) {
  iovec iov{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  if (recvmsg(socket, &message, MSG_WAITALL) != static_cast<ssize_t>(size)) {
    throw std::runtime_error(std::string("recvmsg: ") + std::strerror(errno));
  }
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
      return fd;
    }
  }
  throw std::runtime_error("recvmsg: no file descriptor came with the message");
}

void send_reply(int socket, char tag, const std::string& text = {}) {
  Reply reply{};
  reply.tag = tag;
  std::strncpy(reply.text, text.c_str(), sizeof reply.text - 1);
  if (send(socket, &reply, sizeof reply, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof reply)) {
    throw std::runtime_error(std::string("send: ") + std::strerror(errno));
  }
}

Reply receive_reply(int socket) {
  Reply reply{};
  const ssize_t got = recv(socket, &reply, sizeof reply, MSG_WAITALL);
  if (got != static_cast<ssize_t>(sizeof reply)) {
    reply.tag = 'E';
    std::strncpy(reply.text, got == 0 ? "the child closed the socket" : "no reply from the child in time",
                 sizeof reply.text - 1);
  }
  return reply;
}

std::string ipc_unsupported_reason(const Device& device) {
  if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 0) return "the device has no memory pools";
  const int handle_types = device.attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
  if ((handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
    return "the device's pools cannot be exported as POSIX file descriptors";
  }
  return {};
}

std::string pinned_ipc_unsupported_reason(const Device& device) {
  if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) == 0) {
    return "the device does not support host pools on a NUMA node";
  }
  if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) < 0) return "the device reports no host NUMA node";
  return {};
}

void share_with_another_process(const Device& device, const std::shared_ptr<MemoryPool>& pool, bool pinned);

using IpcGpuTest = cubind_test::GpuTest;

TEST_F(IpcGpuTest, PoolAllocationAndEventAreSharedWithAnotherProcess) {
  const Device device = Device::get(0);
  const std::string unsupported = ipc_unsupported_reason(device);
  if (!unsupported.empty()) GTEST_SKIP() << unsupported;

  cubind::DeviceMemoryResourceOptions options;
  options.ipc_enabled = true;
  share_with_another_process(device, std::make_shared<DeviceMemoryResource>(device, options), false);
}

TEST_F(IpcGpuTest, PinnedPoolAllocationIsSharedWithAnotherProcess) {
  const Device device = Device::get(0);
  const std::string unsupported = pinned_ipc_unsupported_reason(device);
  if (!unsupported.empty()) GTEST_SKIP() << unsupported;

  cubind::PinnedMemoryResourceOptions options;
  options.ipc_enabled = true;
  share_with_another_process(device, std::make_shared<PinnedMemoryResource>(device, options), true);
}

void share_with_another_process(const Device& device, const std::shared_ptr<MemoryPool>& pool, bool pinned) {
  Stream stream(device);
  Buffer buffer = Buffer::allocate(pool, kBytes, stream);
  stream.sync();
  Event ready(device, cubind::EventOptions{false, true});
  cubind_test::HostGate gate(device);
  gate.block(stream);
  buffer.fill(kParentWord, stream);
  ready.record(stream);

  const IpcPoolHandle pool_handle = pool->export_ipc_handle();
  const Handoff handoff{buffer.export_ipc(), ready.ipc_handle(), device.ordinal(), pinned ? 1 : 0};

  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0) << std::strerror(errno);
  // Built before fork: between fork and exec only async-signal-safe calls.
  const std::string child_fd = std::to_string(sockets[1]);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    ::close(sockets[0]);
    execl("/proc/self/exe", "cubind_gpu_tests", "--cubind-ipc-child", child_fd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(sockets[1]);
  const timeval timeout{120, 0};
  setsockopt(sockets[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);

  send_with_fd(sockets[0], &handoff, sizeof handoff, pool_handle.fd());
  const Reply state = receive_reply(sockets[0]);
  EXPECT_EQ(state.tag, 'N') << (state.tag == 'R' ? "the child saw the event complete while the parent's stream was held"
                                                 : state.text);
  gate.open();
  const Reply done = state.tag == 'E' ? state : receive_reply(sockets[0]);
  EXPECT_EQ(done.tag, 'K') << done.text;
  ::close(sockets[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;

  std::vector<std::uint32_t> seen(kWords);
  buffer.copy_to(seen.data(), kBytes, stream);
  stream.sync();
  EXPECT_EQ(std::count(seen.begin(), seen.end(), kChildWord), static_cast<long>(kWords))
      << "the child's writes are visible to the parent";
}

}  // namespace

int cubind_test::ipc_child_main(int socket) {
  try {
    Handoff handoff{};
    const IpcPoolHandle pool_handle = IpcPoolHandle::from_native_handle(receive_with_fd(socket, &handoff, sizeof handoff));
    const Device device = Device::get(handoff.device_ordinal);
    Stream stream(device);
    std::shared_ptr<MemoryPool> pool;
    if (handoff.pinned) {
      pool = PinnedMemoryResource::from_ipc_handle(device, pool_handle);
    } else {
      pool = DeviceMemoryResource::from_ipc_handle(device, pool_handle);
    }
    Buffer buffer = Buffer::from_ipc(pool, handoff.buffer, stream);
    const Event ready = Event::from_ipc_handle(device, handoff.event);
    send_reply(socket, ready.query() ? 'R' : 'N');

    stream.wait(ready);
    std::vector<std::uint32_t> seen(handoff.buffer.size / sizeof(std::uint32_t));
    buffer.copy_to(seen.data(), handoff.buffer.size, stream);
    stream.sync();
    const auto matching = std::count(seen.begin(), seen.end(), kParentWord);
    if (matching != static_cast<long>(seen.size())) {
      send_reply(socket, 'E', "the child saw " + std::to_string(matching) + " of " + std::to_string(seen.size()) +
                                  " words written by the parent");
      return 1;
    }
    buffer.fill(kChildWord, stream);
    buffer.close();
    stream.sync();
    send_reply(socket, 'K');
    return 0;
  } catch (const std::exception& e) {
    try {
      send_reply(socket, 'E', std::string("child: ") + e.what());
    } catch (...) {
    }
    return 1;
  }
}

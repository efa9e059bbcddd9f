// Copies a buffer from GPU 0 to GPU 1 through cubind and prints the bandwidth.
// Memory comes from a stream-ordered pool on each device; peer access is
// opened both for the primary contexts and for the pools (pool allocations
// follow the pool's access list, not the context's). With fewer than two GPUs,
// or no driver, it says so and exits successfully.
//
//   peer_copy [MiB]      (default 256)

#include <cubind/buffer.hpp>
#include <cubind/device.hpp>
#include <cubind/event.hpp>
#include <cubind/memory_resource.hpp>
#include <cubind/stream.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  const std::size_t bytes = mib << 20;
  if (bytes == 0) {
    std::fprintf(stderr, "usage: peer_copy [MiB]\n");
    return 2;
  }
  int count = 0;
  try {
    count = cubind::Device::count();
  } catch (const std::exception& e) {
    std::printf("peer_copy: no CUDA driver, so nothing to copy: %s\n", e.what());
    return 0;
  }
  if (count < 2) {
    std::printf("peer_copy: needs two GPUs, this machine has %d; nothing to copy\n", count);
    return 0;
  }

  try {
    const cubind::Device src_device = cubind::Device::get(0);
    const cubind::Device dst_device = cubind::Device::get(1);
    std::printf("GPU 0: %s (%s)\nGPU 1: %s (%s)\n", src_device.name().c_str(), src_device.pci_bus_id().c_str(),
                dst_device.name().c_str(), dst_device.pci_bus_id().c_str());

    auto src_pool = std::make_shared<cubind::DeviceMemoryResource>(src_device, cubind::DeviceMemoryResourceOptions{});
    auto dst_pool = std::make_shared<cubind::DeviceMemoryResource>(dst_device, cubind::DeviceMemoryResourceOptions{});
    const bool direct = src_device.can_access_peer(dst_device) && dst_device.can_access_peer(src_device);
    if (direct) {
      src_device.enable_peer_access(dst_device);
      dst_device.enable_peer_access(src_device);
      src_pool->grant_peer_access(dst_device);
      dst_pool->grant_peer_access(src_device);
    }
    std::printf("peer access: %s\n", direct ? "direct (NVLink or PCIe peer-to-peer)" : "none, the driver stages copies through the host");

    // Memory is allocated, filled and read back on a stream of its own device;
    // the copies run on GPU 0's stream, which may serve both buffers.
    cubind::Stream stream(src_device);
    cubind::Stream dst_stream(dst_device);
    cubind::Buffer src = cubind::Buffer::allocate(src_pool, bytes, stream);
    cubind::Buffer dst = cubind::Buffer::allocate(dst_pool, bytes, dst_stream);
    src.fill(std::uint32_t{0xc0ffee00}, stream);
    dst.fill(std::uint32_t{0}, dst_stream);
    dst_stream.sync();
    dst.copy_from(src, stream);  // the first copy sets up the peer mappings
    stream.sync();

    constexpr int kCopies = 10;
    cubind::TimedEvent start(src_device);
    cubind::TimedEvent end(src_device);
    start.record(stream);
    for (int i = 0; i < kCopies; ++i) dst.copy_from(src, stream);
    end.record(stream);
    end.sync();
    const float milliseconds = (end - start).count();
    const double gbs = static_cast<double>(bytes) * kCopies / (milliseconds * 1e-3) / 1e9;
    std::printf("copied %zu MiB from GPU 0 to GPU 1 %d times in %.2f ms: %.1f GB/s\n", mib, kCopies, milliseconds, gbs);

    std::vector<std::uint32_t> check(1 << 16);
    dst.copy_to(check.data(), check.size() * sizeof(std::uint32_t), dst_stream);
    dst_stream.sync();
    for (std::uint32_t word : check) {
      if (word != 0xc0ffee00u) {
        std::fprintf(stderr, "peer_copy: GPU 1 holds 0x%08x where 0xc0ffee00 was copied\n", word);
        return 1;
      }
    }
    std::printf("verified: the first %zu words on GPU 1 match\n", check.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "peer_copy failed: %s\n", e.what());
    return 1;
  }
  return 0;
}

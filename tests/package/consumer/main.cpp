// Uses the core and the raw layer through the installed headers and library:
// it builds and runs with or without a GPU.
#include <cubind/buffer.hpp>
#include <cubind/device.hpp>
#include <cubind/raw/driver.hpp>
#include <cubind/stream.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>

int main() {
  try {
    const int count = cubind::Device::count();
    std::printf("cubind consumer: %d GPU(s)\n", count);
    if (count > 0) {
      const cubind::Device device = cubind::Device::get(0);
      cubind::Stream stream(device);
      auto pool = std::make_shared<cubind::DeviceMemoryResource>(device);
      cubind::Buffer buffer = cubind::Buffer::allocate(pool, 1024, stream);
      buffer.fill(std::uint8_t{1}, stream);
      stream.sync();
      std::printf("cubind consumer: %s, %s\n", device.name().c_str(), device.arch().c_str());
    }
  } catch (const cubind::LoaderError& e) {
    std::printf("cubind consumer: no CUDA driver (%s)\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cubind consumer failed: %s\n", e.what());
    return 1;
  }
  return 0;
}

// Loads a cubin built by nvcc (by default the scale.cubin this build makes
// from kernels/scale.cu with nvcc -cubin -arch=sm_90), lists its kernels,
// launches `scale` and checks every element. Without a GPU, or on a GPU the
// cubin was not built for, it says so after reading the file.
//
//   load_cubin [path/to/file.cubin]

#include <cstdio>
#include <cubind/device.hpp>
#include <cubind/error.hpp>
#include <cubind/launch.hpp>
#include <cubind/object_code.hpp>
#include <cubind/raw/driver.hpp>
#include <cubind/stream.hpp>
#include <string>
#include <vector>

namespace {

constexpr unsigned int kCount = 100000;
constexpr float kFactor = 0.5f;

std::string why_no_gpu() {
  try {
    if (cubind::Device::count() == 0) return "the driver reports no device";
    return {};
  } catch (const cubind::LoaderError& error) {
    const std::string message = error.what();
    return message.substr(0, message.find(". Tried:"));
  } catch (const cubind::CudaError& error) {
    return error.what();
  }
}

int run(const std::string& path) {
  const cubind::ObjectCode code = cubind::ObjectCode::from_file(path);
  std::printf("%s: %zu bytes of %s\n", path.c_str(), code.bytes().size(), cubind::code_kind_name(code.kind()));
  const std::string no_gpu = why_no_gpu();
  if (!no_gpu.empty()) {
    std::printf("no GPU: %s; file read only, load and launch skipped\n", no_gpu.c_str());
    return 0;
  }
  const cubind::Device device = cubind::Device::get(0);
  if (device.arch() != "sm_90") {
    std::printf("%s is %s; %s holds sm_90 code only, load and launch skipped\n", device.name().c_str(),
                device.arch().c_str(), path.c_str());
    return 0;
  }
  device.set_current();

  std::printf("kernels:");
  for (const std::string& name : code.kernel_names()) std::printf(" %s", name.c_str());
  std::printf("\n");
  const cubind::Kernel kernel = code.get_kernel("scale");
  for (std::size_t i = 0; i < kernel.param_count(); ++i) {
    std::printf("  parameter %zu: offset %zu, %zu bytes\n", i, kernel.param_info()[i].offset,
                kernel.param_info()[i].size);
  }

  std::vector<float> data(kCount);
  for (unsigned int i = 0; i < kCount; ++i) data[i] = static_cast<float>(i);
  const std::size_t bytes = kCount * sizeof(float);
  CUdeviceptr device_data = 0;
  cubind::detail::check(cubind::raw::cuMemAlloc(&device_data, bytes), "cuMemAlloc");
  // The copies go on the kernel's stream, which orders them with the launch.
  const cubind::Stream stream(device);
  cubind::detail::check(cubind::raw::cuMemcpyHtoDAsync(device_data, data.data(), bytes, stream.handle()),
                        "cuMemcpyHtoDAsync");
  cubind::launch(stream, cubind::LaunchConfig{(kCount + 255) / 256, 256}, kernel, device_data, kFactor, kCount);
  std::vector<float> result(kCount);
  cubind::detail::check(cubind::raw::cuMemcpyDtoHAsync(result.data(), device_data, bytes, stream.handle()),
                        "cuMemcpyDtoHAsync");
  stream.sync();
  cubind::raw::cuMemFree(device_data);

  for (unsigned int i = 0; i < kCount; ++i) {
    if (result[i] != kFactor * data[i]) {
      std::fprintf(stderr, "scale: element %u is %.9g, expected %.9g\n", i, result[i], kFactor * data[i]);
      return 1;
    }
  }
  std::printf("scale on %s: %u elements checked, OK\n", device.name().c_str(), kCount);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [path/to/file.cubin]\n", argv[0]);
    return 2;
  }
  try {
    return run(argc == 2 ? argv[1] : CUBIND_EXAMPLE_CUBIN);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}

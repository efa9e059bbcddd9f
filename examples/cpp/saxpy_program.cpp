// Compiles SAXPY from source with cubind::Program, loads it as an ObjectCode,
// launches it with cubind::launch and checks every element. Without a GPU it
// compiles for sm_90, says why there is no GPU, and stops before loading.
//
//   saxpy_program [--arch sm_XX]     (default: the GPU's own, else sm_90)

#include <cstdio>
#include <cubind/device.hpp>
#include <cubind/error.hpp>
#include <cubind/launch.hpp>
#include <cubind/program.hpp>
#include <cubind/raw/driver.hpp>
#include <cubind/stream.hpp>
#include <string>
#include <vector>

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

constexpr unsigned int kCount = 1u << 20;
constexpr float kA = 2.0f;

// Device memory for one vector, freed at the end of the scope. Copies are
// queued on the stream the kernel runs on, which orders them with the launch.
class DeviceVector {
 public:
  DeviceVector(const std::vector<float>& host, const cubind::Stream& stream) : bytes_(host.size() * sizeof(float)) {
    cubind::detail::check(cubind::raw::cuMemAlloc(&pointer_, bytes_), "cuMemAlloc");
    cubind::detail::check(cubind::raw::cuMemcpyHtoDAsync(pointer_, host.data(), bytes_, stream.handle()),
                          "cuMemcpyHtoDAsync");
  }
  ~DeviceVector() { cubind::raw::cuMemFree(pointer_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  CUdeviceptr pointer() const { return pointer_; }
  std::vector<float> read(const cubind::Stream& stream) const {
    std::vector<float> host(bytes_ / sizeof(float));
    cubind::detail::check(cubind::raw::cuMemcpyDtoHAsync(host.data(), pointer_, bytes_, stream.handle()),
                          "cuMemcpyDtoHAsync");
    stream.sync();
    return host;
  }

 private:
  std::size_t bytes_;
  CUdeviceptr pointer_ = 0;
};

// Why no GPU can be used, or an empty string.
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

int run(std::string arch) {
  const std::string no_gpu = why_no_gpu();
  if (arch.empty()) arch = no_gpu.empty() ? cubind::Device::get(0).arch() : "sm_90";

  cubind::Program program(kSource, "saxpy.cu");
  cubind::ProgramOptions options;
  options.arch = arch;
  options.cpp_standard = "c++17";
  const cubind::CompileResult compiled = program.compile(cubind::CodeKind::cubin, options);
  if (!compiled.log.empty()) std::printf("NVRTC log:\n%s\n", compiled.log.c_str());
  if (!compiled.ok) {
    std::fprintf(stderr, "compile failed\n");
    return 1;
  }
  std::printf("compiled saxpy.cu for %s: %zu-byte cubin\n", arch.c_str(), compiled.code.bytes().size());
  if (!no_gpu.empty()) {
    std::printf("no GPU: %s; compiled only, launch skipped\n", no_gpu.c_str());
    return 0;
  }

  const cubind::Device device = cubind::Device::get(0);
  device.set_current();
  const cubind::Kernel kernel = compiled.code.get_kernel("saxpy");
  const unsigned int block = static_cast<unsigned int>(kernel.max_potential_block_size().block_size);
  std::printf("saxpy: %zu parameters, %d registers, block size %u for full occupancy\n", kernel.param_count(),
              kernel.attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, device), block);

  // Integers below 2^24 keep a * x + y exact in float, so the results compare
  // with == whether or not the compiler fuses the multiply and the add.
  std::vector<float> x(kCount), y(kCount);
  for (unsigned int i = 0; i < kCount; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(kCount - i);
  }
  const cubind::Stream stream(device);
  const DeviceVector device_x(x, stream), device_y(y, stream);
  cubind::launch(stream, cubind::LaunchConfig{(kCount + block - 1) / block, block}, kernel, kA, device_x.pointer(),
                 device_y.pointer(), kCount);
  const std::vector<float> result = device_y.read(stream);
  for (unsigned int i = 0; i < kCount; ++i) {
    if (result[i] != kA * x[i] + y[i]) {
      std::fprintf(stderr, "saxpy on %s: element %u is %.9g, expected %.9g\n", device.name().c_str(), i, result[i],
                   kA * x[i] + y[i]);
      return 1;
    }
  }
  std::printf("saxpy on %s: %u elements checked, OK\n", device.name().c_str(), kCount);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--arch" && i + 1 < argc) {
      arch = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--arch sm_XX]\n", argv[0]);
      return 2;
    }
  }
  try {
    return run(arch);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}

// Compiles a SAXPY kernel to LTO-IR with NVRTC, links it to a cubin with nvJitLink and,
// where a GPU is present, runs it through the driver API and checks every element.
// All CUDA calls go through cubind::raw, so this program links libcubind only and
// starts even on a machine without the driver; there it stops after the link.
//
//   nvrtc_link_launch [--arch sm_XX]     (default: the GPU's own, else sm_90)

#include <cubind/detail/loader_support.hpp>
#include <cubind/raw/driver.hpp>
#include <cubind/raw/nvjitlink.hpp>
#include <cubind/raw/nvrtc.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace raw = cubind::raw;

namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

constexpr const char* kDefaultArch = "90";
constexpr unsigned int kCount = 1u << 20;
constexpr unsigned int kBlockSize = 256;
constexpr float kA = 2.0f;

[[noreturn]] void fail(const char* call, const std::string& reason) {
  std::fprintf(stderr, "%s failed: %s\n", call, reason.c_str());
  std::exit(1);
}

std::string driver_error(CUresult status) {
  // Both stay null for a code this driver does not know.
  const char* name = nullptr;
  const char* text = nullptr;
  raw::cuGetErrorName(status, &name);
  raw::cuGetErrorString(status, &text);
  return std::string(name != nullptr ? name : "unknown CUresult") + " (" +
         std::to_string(status) + "): " + (text != nullptr ? text : "no description");
}

void check(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS) fail(call, driver_error(status));
}

void check(nvrtcResult status, const char* call) {
  if (status != NVRTC_SUCCESS) fail(call, raw::nvrtcGetErrorString(status));
}

void check(nvJitLinkResult status, const char* call) {
  // nvJitLink has no function that names its result codes.
  if (status != NVJITLINK_SUCCESS) fail(call, "nvJitLink result " + std::to_string(status));
}

// Both libraries hand back logs with a terminating NUL and often a trailing newline.
void print_log(const char* title, std::string log) {
  while (!log.empty() && (log.back() == '\0' || std::isspace(static_cast<unsigned char>(log.back())))) {
    log.pop_back();
  }
  std::printf("%s: %s%s\n", title, log.empty() ? "empty" : "\n", log.c_str());
}

// Accepts sm_90, sm90 or 90, keeping any a/f suffix (sm_90a) for the tools to judge.
std::string parse_arch(const std::string& text) {
  std::string arch = text;
  for (const char* prefix : {"sm_", "sm"}) {
    if (arch.rfind(prefix, 0) == 0) {
      arch.erase(0, std::string(prefix).size());
      break;
    }
  }
  if (arch.empty() || !std::isdigit(static_cast<unsigned char>(arch[0]))) {
    std::fprintf(stderr, "--arch expects sm_XX (for example sm_90), not '%s'\n", text.c_str());
    std::exit(2);
  }
  return arch;
}

// Returns why no GPU can be used, or an empty string after setting `device`.
std::string probe_gpu(CUdevice& device) {
  try {
    CUresult status = raw::cuInit(0);
    if (status != CUDA_SUCCESS) return "cuInit returned " + driver_error(status);
    int count = 0;
    status = raw::cuDeviceGetCount(&count);
    if (status != CUDA_SUCCESS) return "cuDeviceGetCount returned " + driver_error(status);
    if (count == 0) return "cuDeviceGetCount found no device";
    check(raw::cuDeviceGet(&device, 0), "cuDeviceGet");
    return {};
  } catch (const cubind::LoaderError& error) {
    // The first sentence names the library; the list of places tried is not needed here.
    const std::string message = error.what();
    return message.substr(0, message.find(". Tried:"));
  }
}

std::string device_arch(CUdevice device) {
  int major = 0, minor = 0;
  check(raw::cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute");
  check(raw::cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute");
  return std::to_string(major * 10 + minor);
}

std::vector<char> compile_to_ltoir(const std::string& arch) {
  int major = 0, minor = 0;
  check(raw::nvrtcVersion(&major, &minor), "nvrtcVersion");
  std::printf("NVRTC %d.%d\n", major, minor);

  nvrtcProgram program = nullptr;
  check(raw::nvrtcCreateProgram(&program, kSource, "saxpy.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  const std::string arch_option = "-arch=compute_" + arch;
  const char* options[] = {"-dlto", "--relocatable-device-code=true", arch_option.c_str()};
  // The log explains a failed compile, so it is read before the status is checked.
  const nvrtcResult compiled = raw::nvrtcCompileProgram(program, 3, options);
  size_t log_size = 0;
  check(raw::nvrtcGetProgramLogSize(program, &log_size), "nvrtcGetProgramLogSize");
  std::string log(log_size, '\0');
  check(raw::nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
  print_log("NVRTC log", log);
  check(compiled, "nvrtcCompileProgram");

  size_t size = 0;
  check(raw::nvrtcGetLTOIRSize(program, &size), "nvrtcGetLTOIRSize");
  std::vector<char> ltoir(size);
  check(raw::nvrtcGetLTOIR(program, ltoir.data()), "nvrtcGetLTOIR");
  check(raw::nvrtcDestroyProgram(&program), "nvrtcDestroyProgram");
  std::printf("LTO-IR for compute_%s: %zu bytes\n", arch.c_str(), ltoir.size());
  return ltoir;
}

std::vector<char> link_to_cubin(const std::vector<char>& ltoir, const std::string& arch) {
  unsigned int major = 0, minor = 0;
  check(raw::nvJitLinkVersion(&major, &minor), "nvJitLinkVersion");
  std::printf("nvJitLink %u.%u\n", major, minor);

  nvJitLinkHandle linker = nullptr;
  const std::string arch_option = "-arch=sm_" + arch;
  const char* options[] = {"-lto", arch_option.c_str()};
  check(raw::nvJitLinkCreate(&linker, 2, options), "nvJitLinkCreate");
  check(raw::nvJitLinkAddData(linker, NVJITLINK_INPUT_LTOIR, ltoir.data(), ltoir.size(),
                              "saxpy.ltoir"),
        "nvJitLinkAddData");
  const nvJitLinkResult linked = raw::nvJitLinkComplete(linker);
  if (linked != NVJITLINK_SUCCESS) {
    size_t log_size = 0;
    check(raw::nvJitLinkGetErrorLogSize(linker, &log_size), "nvJitLinkGetErrorLogSize");
    std::string log(log_size, '\0');
    check(raw::nvJitLinkGetErrorLog(linker, log.data()), "nvJitLinkGetErrorLog");
    print_log("nvJitLink error log", log);
  }
  check(linked, "nvJitLinkComplete");

  size_t size = 0;
  check(raw::nvJitLinkGetLinkedCubinSize(linker, &size), "nvJitLinkGetLinkedCubinSize");
  std::vector<char> cubin(size);
  check(raw::nvJitLinkGetLinkedCubin(linker, cubin.data()), "nvJitLinkGetLinkedCubin");
  check(raw::nvJitLinkDestroy(&linker), "nvJitLinkDestroy");
  std::printf("cubin for sm_%s: %zu bytes\n", arch.c_str(), cubin.size());
  return cubin;
}

int launch_and_check(CUdevice device, const std::vector<char>& cubin) {
  char name[256] = {};
  check(raw::cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  CUcontext context = nullptr;
  check(raw::cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(raw::cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module = nullptr;
  check(raw::cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
  CUfunction saxpy = nullptr;
  check(raw::cuModuleGetFunction(&saxpy, module, "saxpy"), "cuModuleGetFunction");

  // Integers below 2^24 keep a * x + y exact in float, so the results compare with ==
  // whether or not either compiler fuses the multiply and the add.
  std::vector<float> x(kCount), y(kCount), result(kCount);
  for (unsigned int i = 0; i < kCount; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(kCount - i);
  }
  const size_t bytes = kCount * sizeof(float);
  CUdeviceptr device_x = 0, device_y = 0;
  check(raw::cuMemAlloc(&device_x, bytes), "cuMemAlloc");
  check(raw::cuMemAlloc(&device_y, bytes), "cuMemAlloc");
  check(raw::cuMemcpyHtoD(device_x, x.data(), bytes), "cuMemcpyHtoD");
  check(raw::cuMemcpyHtoD(device_y, y.data(), bytes), "cuMemcpyHtoD");

  float a = kA;
  unsigned int n = kCount;
  void* args[] = {&a, &device_x, &device_y, &n};
  check(raw::cuLaunchKernel(saxpy, (kCount + kBlockSize - 1) / kBlockSize, 1, 1, kBlockSize, 1, 1,
                            0, nullptr, args, nullptr),
        "cuLaunchKernel");
  // Reports a fault in the kernel here rather than from the copy below.
  check(raw::cuCtxSynchronize(), "cuCtxSynchronize");
  check(raw::cuMemcpyDtoH(result.data(), device_y, bytes), "cuMemcpyDtoH");

  check(raw::cuMemFree(device_x), "cuMemFree");
  check(raw::cuMemFree(device_y), "cuMemFree");
  check(raw::cuModuleUnload(module), "cuModuleUnload");
  check(raw::cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease");

  for (unsigned int i = 0; i < kCount; ++i) {
    const float expected = kA * x[i] + y[i];
    if (result[i] != expected) {
      std::fprintf(stderr, "saxpy on %s: element %u is %.9g, expected %.9g\n", name, i, result[i],
                   expected);
      return 1;
    }
  }
  std::printf("saxpy on %s: %u elements checked, OK\n", name, kCount);
  return 0;
}

int run(std::string arch) {
  CUdevice device = 0;
  const std::string no_gpu = probe_gpu(device);
  if (arch.empty()) arch = no_gpu.empty() ? device_arch(device) : kDefaultArch;

  const std::vector<char> ltoir = compile_to_ltoir(arch);
  const std::vector<char> cubin = link_to_cubin(ltoir, arch);
  if (!no_gpu.empty()) {
    std::printf("no GPU: %s; compiled and linked only, launch skipped\n", no_gpu.c_str());
    return 0;
  }
  return launch_and_check(device, cubin);
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--arch" && i + 1 < argc) {
      arch = parse_arch(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--arch sm_XX]\n", argv[0]);
      return 2;
    }
  }
  try {
    return run(arch);
  } catch (const cubind::LoaderError& error) {
    // NVRTC or nvJitLink is missing: without them there is nothing to show.
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}

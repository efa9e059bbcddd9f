// Compile, load and launch on a real GPU: Program -> ObjectCode -> Kernel ->
// launch, checked element by element, plus kernel attributes and occupancy
// against the raw driver calls. Every test skips, with the reason, where there
// is no driver or no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/kernel.hpp"
#include "cubind/launch.hpp"
#include "cubind/linker.hpp"
#include "cubind/object_code.hpp"
#include "cubind/program.hpp"
#include "cubind/raw/driver.hpp"

namespace {

namespace raw = cubind::raw;
using cubind::CodeKind;
using cubind::Dim3;
using cubind::Kernel;
using cubind::LaunchConfig;
using cubind::ObjectCode;

// The first GPU, with its primary context retained for the whole run, or why there is none.
struct Gpu {
  std::string skip_reason;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int arch = 0;  // 90 for compute capability 9.0
};

std::string driver_error(CUresult status) {
  const char* name = nullptr;
  raw::cuGetErrorName(status, &name);
  return name != nullptr ? name : "CUresult " + std::to_string(status);
}

Gpu probe_gpu() {
  Gpu gpu;
  try {
    CUresult status = raw::cuInit(0);
    if (status != CUDA_SUCCESS) {
      gpu.skip_reason = "no GPU: cuInit returned " + driver_error(status);
      return gpu;
    }
    int count = 0;
    status = raw::cuDeviceGetCount(&count);
    if (status != CUDA_SUCCESS || count == 0) {
      gpu.skip_reason = "no GPU: the driver reports no device";
      return gpu;
    }
    raw::cuDeviceGet(&gpu.device, 0);
    raw::cuDevicePrimaryCtxRetain(&gpu.context, gpu.device);
    int major = 0, minor = 0;
    raw::cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, gpu.device);
    raw::cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, gpu.device);
    gpu.arch = major * 10 + minor;
  } catch (const cubind::LoaderError& error) {
    const std::string message = error.what();
    gpu.skip_reason = "no GPU: " + message.substr(0, message.find(". Tried:"));
  }
  return gpu;
}

const Gpu& gpu() {
  static const Gpu instance = probe_gpu();
  return instance;
}

// Device memory holding a copy of a host vector, freed at the end of the scope.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host) : count_(host.size()) {
    EXPECT_EQ(raw::cuMemAlloc(&pointer_, bytes()), CUDA_SUCCESS);
    EXPECT_EQ(raw::cuMemcpyHtoD(pointer_, host.data(), bytes()), CUDA_SUCCESS);
    // From pageable memory, cuMemcpyHtoD returns once the data is staged, and the
    // tests launch on a non-blocking stream, which does not wait for that copy.
    EXPECT_EQ(raw::cuCtxSynchronize(), CUDA_SUCCESS);
  }
  ~DeviceArray() { raw::cuMemFree(pointer_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  CUdeviceptr pointer() const { return pointer_; }
  std::vector<T> read() const {
    std::vector<T> host(count_);
    EXPECT_EQ(raw::cuMemcpyDtoH(host.data(), pointer_, bytes()), CUDA_SUCCESS);
    return host;
  }

 private:
  std::size_t bytes() const { return count_ * sizeof(T); }
  std::size_t count_;
  CUdeviceptr pointer_ = 0;
};

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void empty() {}
)";

class LaunchGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().skip_reason.empty()) GTEST_SKIP() << gpu().skip_reason;
    ASSERT_EQ(raw::cuCtxSetCurrent(gpu().context), CUDA_SUCCESS);
    ASSERT_EQ(raw::cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (stream_ != nullptr) raw::cuStreamDestroy(stream_);
  }

  cubind::StreamRef stream() const { return cubind::StreamRef(stream_); }
  void sync() const { ASSERT_EQ(raw::cuStreamSynchronize(stream_), CUDA_SUCCESS); }
  static std::string real_arch() { return "sm_" + std::to_string(gpu().arch); }

  static ObjectCode compile(const char* source, const char* name, CodeKind target = CodeKind::cubin,
                            const std::vector<std::string>& name_expressions = {},
                            std::map<std::string, std::string>* lowered_names = nullptr) {
    cubind::Program program(source, name);
    cubind::ProgramOptions options;
    options.arch = target == CodeKind::cubin ? real_arch() : "compute_" + std::to_string(gpu().arch);
    cubind::CompileResult result = program.compile(target, options, name_expressions);
    EXPECT_TRUE(result.ok) << result.log;
    if (lowered_names != nullptr) *lowered_names = result.lowered_names;
    return std::move(result.code);
  }

  // Runs saxpy (a = 2) over 10,000 elements and checks every one; the values
  // are integers below 2^24, so a * x + y is exact with or without fused multiply-add.
  void run_saxpy(const Kernel& kernel, LaunchConfig config = {}, bool type_erased = false, bool rendered = false,
                 bool driver_entry = false) {
    constexpr unsigned int n = 10000;
    std::vector<float> x(n), y(n);
    for (unsigned int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = static_cast<float>(3 * i + 1);
    }
    DeviceArray<float> device_x(x), device_y(y);
    if (config.block.x == 1) config.block = 256;
    if (config.grid.x == 1) config.grid = (n + config.block.x - 1) / config.block.x;
    const float a = 2.0f;
    const CUdeviceptr px = device_x.pointer(), py = device_y.pointer();
    if (type_erased) {
      void* args[] = {const_cast<float*>(&a), const_cast<CUdeviceptr*>(&px), const_cast<CUdeviceptr*>(&py),
                      const_cast<unsigned int*>(&n)};
      const std::size_t sizes[] = {sizeof a, sizeof px, sizeof py, sizeof n};
      cubind::launch_type_erased(stream(), config, kernel, args, sizes, 4);
    } else if (rendered) {
      void* args[] = {const_cast<float*>(&a), const_cast<CUdeviceptr*>(&px), const_cast<CUdeviceptr*>(&py),
                      const_cast<unsigned int*>(&n)};
      // Rendered for no stream: launch_rendered puts the stream in.
      cubind::NativeLaunchConfig native;
      cubind::render_launch_config(config, nullptr, native);
      if (driver_entry) {
        // launch_rendered's call made by the caller, as cubind.core's launch makes it.
        CUlaunchConfig copy = native.config;
        copy.hStream = stream().handle();
        copy.attrs = native.attributes;
        cubind::detail::check(cubind::launch_kernel_ex_entry()(&copy, reinterpret_cast<CUfunction>(kernel.handle()),
                                                              args, nullptr),
                              "cuLaunchKernelEx");
      } else {
        cubind::launch_rendered(stream(), native, kernel, args);
      }
    } else {
      cubind::launch(stream(), config, kernel, a, px, py, n);
    }
    sync();
    const std::vector<float> result = device_y.read();
    for (unsigned int i = 0; i < n; ++i) {
      ASSERT_EQ(result[i], a * x[i] + y[i]) << "element " << i;
    }
  }

  CUstream stream_ = nullptr;
};

TEST_F(LaunchGpu, SaxpyThroughProgramObjectCodeKernelLaunch) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  const Kernel kernel = code.get_kernel("saxpy");
  EXPECT_EQ(kernel.name(), "saxpy");
  run_saxpy(kernel);
}

TEST_F(LaunchGpu, TypeErasedLaunchRunsTheSameKernel) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  run_saxpy(code.get_kernel("saxpy"), {}, true);
}

TEST_F(LaunchGpu, RenderedLaunchRunsTheSameKernelOnTheStreamGiven) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  run_saxpy(code.get_kernel("saxpy"), {}, false, true);
}

TEST_F(LaunchGpu, TheDriversOwnLaunchEntryRunsTheSameKernel) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  run_saxpy(code.get_kernel("saxpy"), {}, false, true, true);
}

TEST_F(LaunchGpu, KernelWithoutParametersLaunches) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  const Kernel kernel = code.get_kernel("empty");
  EXPECT_EQ(kernel.param_count(), 0u);
  cubind::launch(stream(), LaunchConfig{{4}, {32}}, kernel);
  sync();
}

TEST_F(LaunchGpu, ParamInfoGivesEachParametersOffsetAndSize) {
  const Kernel kernel = compile(kSaxpy, "saxpy.cu").get_kernel("saxpy");
  const std::vector<cubind::KernelParam>& params = kernel.param_info();
  ASSERT_EQ(params.size(), 4u);
  const std::size_t offsets[] = {0, 8, 16, 24};
  const std::size_t sizes[] = {4, 8, 8, 4};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(params[i].offset, offsets[i]) << "parameter " << i;
    EXPECT_EQ(params[i].size, sizes[i]) << "parameter " << i;
  }
  // Cached: the same vector on every call.
  EXPECT_EQ(&kernel.param_info(), &params);
}

// Host twins of the kernel's parameter types; launch() checks their sizes.
struct Vec3 {
  float x, y, z;
};
struct alignas(16) Quad {
  float v[4];
};
struct Mixed {
  int i;
  double d;
};
// The parameters laid out as the kernel sees them, for the expected offsets.
struct SixteenParams {
  char a0;
  short a1;
  int a2;
  long long a3;
  float a4;
  double a5;
  unsigned char a6;
  Vec3 a7;
  Quad a8;
  unsigned short a9;
  unsigned int a10;
  unsigned long long a11;
  bool a12;
  signed char a13;
  Mixed a14;
  double* out;
};

constexpr const char* kSixteen = R"(
struct Vec3 { float x, y, z; };
struct __align__(16) Quad { float v[4]; };
struct Mixed { int i; double d; };
extern "C" __global__ void sixteen(char a0, short a1, int a2, long long a3, float a4, double a5,
                                   unsigned char a6, Vec3 a7, Quad a8, unsigned short a9,
                                   unsigned int a10, unsigned long long a11, bool a12,
                                   signed char a13, Mixed a14, double* out) {
  out[0] = a0; out[1] = a1; out[2] = a2; out[3] = (double)a3; out[4] = a4; out[5] = a5;
  out[6] = a6; out[7] = a7.x + 10 * a7.y + 100 * a7.z;
  out[8] = a8.v[0] + 10 * a8.v[1] + 100 * a8.v[2] + 1000 * a8.v[3];
  out[9] = a9; out[10] = a10; out[11] = (double)a11; out[12] = a12 ? 1 : 0; out[13] = a13;
  out[14] = a14.i + a14.d;
}
)";

TEST_F(LaunchGpu, SixteenArgumentsOfMixedSizesArriveIntact) {
  const Kernel kernel = compile(kSixteen, "sixteen.cu").get_kernel("sixteen");
  const std::size_t expected_offsets[] = {
      offsetof(SixteenParams, a0),  offsetof(SixteenParams, a1),  offsetof(SixteenParams, a2),
      offsetof(SixteenParams, a3),  offsetof(SixteenParams, a4),  offsetof(SixteenParams, a5),
      offsetof(SixteenParams, a6),  offsetof(SixteenParams, a7),  offsetof(SixteenParams, a8),
      offsetof(SixteenParams, a9),  offsetof(SixteenParams, a10), offsetof(SixteenParams, a11),
      offsetof(SixteenParams, a12), offsetof(SixteenParams, a13), offsetof(SixteenParams, a14),
      offsetof(SixteenParams, out)};
  const std::size_t expected_sizes[] = {1, 2, 4, 8, 4, 8, 1, 12, 16, 2, 4, 8, 1, 1, 16, 8};
  ASSERT_EQ(kernel.param_count(), 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(kernel.param_info()[i].offset, expected_offsets[i]) << "parameter " << i;
    EXPECT_EQ(kernel.param_info()[i].size, expected_sizes[i]) << "parameter " << i;
  }

  DeviceArray<double> out(std::vector<double>(15, -1.0));
  const char a0 = -5;
  const short a1 = -300;
  const int a2 = 70000;
  const long long a3 = 1LL << 40;
  const float a4 = 1.5f;
  const double a5 = 0.25;
  const unsigned char a6 = 200;
  const Vec3 a7{1, 2, 3};
  const Quad a8{{4, 3, 2, 1}};
  const unsigned short a9 = 60000;
  const unsigned int a10 = 4000000000u;
  const unsigned long long a11 = 1ULL << 50;
  const bool a12 = true;
  const signed char a13 = -100;
  const Mixed a14{7, 0.5};
  double* const out_pointer = reinterpret_cast<double*>(out.pointer());
  cubind::launch(stream(), LaunchConfig{}, kernel, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14,
                 out_pointer);
  sync();
  const std::vector<double> expected = {-5,   -300,  70000,        static_cast<double>(1LL << 40),  1.5, 0.25, 200, 321,
                                        1234, 60000, 4000000000.0, static_cast<double>(1ULL << 50), 1,   -100, 7.5};
  const std::vector<double> result = out.read();
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(result[i], expected[i]) << "argument " << i;
}

TEST_F(LaunchGpu, WrongArgumentCountOrSizeThrowsAndLaunchesNothing) {
  const Kernel kernel = compile(kSaxpy, "saxpy.cu").get_kernel("saxpy");
  const std::vector<float> y(256, 1.0f);
  DeviceArray<float> device_x(std::vector<float>(256, 1.0f)), device_y(y);
  const CUdeviceptr px = device_x.pointer(), py = device_y.pointer();
  const LaunchConfig config{{1}, {256}};
  try {
    cubind::launch(stream(), config, kernel, 2.0, px, py, 256u);  // a double for a float
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "cubind::launch: argument 0 of kernel 'saxpy' must be 4 bytes, 8 bytes given");
  }
  try {
    cubind::launch(stream(), config, kernel, 2.0f, px, py);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "cubind::launch: kernel 'saxpy' takes 4 arguments, 3 given");
  }
  try {
    cubind::launch(stream(), config, kernel, 2.0f, px, py, std::size_t{256});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "cubind::launch: argument 3 of kernel 'saxpy' must be 4 bytes, 8 bytes given");
  }
  sync();
  EXPECT_EQ(device_y.read(), y);
}

TEST_F(LaunchGpu, UnknownKernelNameListsTheKernelsPresent) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  try {
    code.get_kernel("saxpi");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("no kernel named 'saxpi' in saxpy.cu; it has 2 kernels: "), std::string::npos) << what;
    EXPECT_NE(what.find("saxpy"), std::string::npos) << what;
    EXPECT_NE(what.find("empty"), std::string::npos) << what;
  }
  std::vector<std::string> names = code.kernel_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"empty", "saxpy"}));
}

TEST_F(LaunchGpu, AttributesMatchTheRawCalls) {
  const cubind::Device device = cubind::Device::get(0);
  const Kernel kernel = compile(kSaxpy, "saxpy.cu").get_kernel("saxpy");
  for (CUfunction_attribute attribute :
       {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_PTX_VERSION, CU_FUNC_ATTRIBUTE_BINARY_VERSION}) {
    int expected = -1;
    ASSERT_EQ(raw::cuKernelGetAttribute(&expected, attribute, kernel.handle(), gpu().device), CUDA_SUCCESS);
    EXPECT_EQ(kernel.attribute(attribute, device), expected) << "attribute " << attribute;
  }
  EXPECT_EQ(kernel.attribute(CU_FUNC_ATTRIBUTE_BINARY_VERSION, device), gpu().arch);

  kernel.set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024, device);
  int raw_value = 0;
  ASSERT_EQ(raw::cuKernelGetAttribute(&raw_value, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kernel.handle(),
                                      gpu().device),
            CUDA_SUCCESS);
  EXPECT_EQ(raw_value, 64 * 1024);
  EXPECT_EQ(kernel.attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, device), 64 * 1024);
  // The larger limit is usable at launch.
  LaunchConfig config;
  config.shared_memory_bytes = 64 * 1024;
  run_saxpy(kernel, config);
}

TEST_F(LaunchGpu, OccupancyMatchesTheRawCalls) {
  const Kernel kernel = compile(kSaxpy, "saxpy.cu").get_kernel("saxpy");
  CUfunction function = nullptr;
  ASSERT_EQ(raw::cuKernelGetFunction(&function, kernel.handle()), CUDA_SUCCESS);
  EXPECT_EQ(kernel.function(), function);

  for (int block_size : {32, 256, 1024}) {
    int blocks = -1;
    ASSERT_EQ(raw::cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, block_size, 0), CUDA_SUCCESS);
    EXPECT_EQ(kernel.max_active_blocks_per_multiprocessor(block_size), blocks) << "block size " << block_size;
    EXPECT_GT(blocks, 0);
  }
  int blocks_with_shared = -1;
  ASSERT_EQ(raw::cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_with_shared, function, 128, 16 * 1024),
            CUDA_SUCCESS);
  EXPECT_EQ(kernel.max_active_blocks_per_multiprocessor(128, 16 * 1024), blocks_with_shared);

  int min_grid = -1, block_size = -1;
  ASSERT_EQ(raw::cuOccupancyMaxPotentialBlockSize(&min_grid, &block_size, function, nullptr, 0, 0), CUDA_SUCCESS);
  const cubind::BlockSizeSuggestion suggestion = kernel.max_potential_block_size();
  EXPECT_EQ(suggestion.min_grid_size, min_grid);
  EXPECT_EQ(suggestion.block_size, block_size);
  ASSERT_EQ(raw::cuOccupancyMaxPotentialBlockSize(&min_grid, &block_size, function, nullptr, 0, 128), CUDA_SUCCESS);
  EXPECT_EQ(kernel.max_potential_block_size(0, 128).block_size, block_size);

  std::size_t shared = 0;
  ASSERT_EQ(raw::cuOccupancyAvailableDynamicSMemPerBlock(&shared, function, 2, 256), CUDA_SUCCESS);
  EXPECT_EQ(kernel.available_dynamic_shared_memory_per_block(2, 256), shared);
}

TEST_F(LaunchGpu, ClusterOccupancyMatchesTheRawCalls) {
  if (gpu().arch < 90) GTEST_SKIP() << "thread block clusters need sm_90 or later; this GPU is sm_" << gpu().arch;
  const Kernel kernel = compile(kSaxpy, "saxpy.cu").get_kernel("saxpy");
  LaunchConfig config;
  config.grid = 64;
  config.block = 128;
  config.cluster = Dim3(2);
  cubind::NativeLaunchConfig native;
  cubind::render_launch_config(config, nullptr, native);
  int size = -1, clusters = -1;
  ASSERT_EQ(raw::cuOccupancyMaxPotentialClusterSize(&size, kernel.function(), &native.config), CUDA_SUCCESS);
  ASSERT_EQ(raw::cuOccupancyMaxActiveClusters(&clusters, kernel.function(), &native.config), CUDA_SUCCESS);
  EXPECT_EQ(kernel.max_potential_cluster_size(config), size);
  EXPECT_EQ(kernel.max_active_clusters(config), clusters);
  EXPECT_GE(size, 2);
}

TEST_F(LaunchGpu, ClusterAndCooperativeLaunchesRun) {
  const Kernel kernel = compile(kSaxpy, "saxpy.cu").get_kernel("saxpy");
  if (gpu().arch >= 90) {
    LaunchConfig clustered;
    clustered.grid = 40;  // 10,000 elements in blocks of 256, rounded up to a multiple of the cluster
    clustered.block = 256;
    clustered.cluster = Dim3(2);
    run_saxpy(kernel, clustered);
    // The attributes of a rendered config are copied for each launch.
    run_saxpy(kernel, clustered, false, true);
  }
  LaunchConfig cooperative;
  cooperative.grid = 40;  // well within what one GPU keeps resident at once
  cooperative.block = 256;
  cooperative.cooperative = true;
  run_saxpy(kernel, cooperative);
  run_saxpy(kernel, cooperative, false, true);
}

TEST_F(LaunchGpu, PtxIsCompiledByTheDriverAtLoad) {
  const ObjectCode ptx = compile(kSaxpy, "saxpy.cu", CodeKind::ptx);
  ASSERT_EQ(ptx.kind(), CodeKind::ptx);
  // Without the terminating NUL NVRTC writes, as PTX read from a file would be.
  std::vector<char> bytes = ptx.bytes();
  while (!bytes.empty() && bytes.back() == '\0') bytes.pop_back();
  const ObjectCode unterminated = ObjectCode::from_bytes(CodeKind::ptx, bytes, "saxpy.ptx");
  run_saxpy(unterminated.get_kernel("saxpy"));
}

TEST_F(LaunchGpu, LtoLinkedCubinLaunches) {
  const ObjectCode caller = compile(R"(
extern __device__ float twice(float x);
extern "C" __global__ void apply(float* data, unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = twice(data[i]) + 1.0f;
}
)",
                                    "caller.cu", CodeKind::ltoir);
  const ObjectCode callee =
      compile("__device__ float twice(float x) { return 2.0f * x; }", "callee.cu", CodeKind::ltoir);
  cubind::LinkerOptions options;
  options.arch = real_arch();
  options.lto = true;
  cubind::Linker linker(options);
  linker.add(caller);
  linker.add(callee);
  const cubind::LinkResult linked = linker.link();
  ASSERT_TRUE(linked.ok) << linked.error_log;

  constexpr unsigned int n = 1000;
  std::vector<float> data(n);
  for (unsigned int i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  DeviceArray<float> device_data(data);
  const Kernel kernel = linked.code.get_kernel("apply");
  cubind::launch(stream(), LaunchConfig{{(n + 127) / 128}, {128}}, kernel, device_data.pointer(), n);
  sync();
  const std::vector<float> result = device_data.read();
  for (unsigned int i = 0; i < n; ++i) ASSERT_EQ(result[i], 2.0f * data[i] + 1.0f) << "element " << i;
}

TEST_F(LaunchGpu, TemplateKernelLaunchesByItsLoweredName) {
  std::map<std::string, std::string> lowered;
  const ObjectCode code =
      compile("template <typename T, int N> __global__ void fill(T* out) { out[threadIdx.x] = T(N); }", "fill.cu",
              CodeKind::cubin, {"fill<int, 7>"}, &lowered);
  const Kernel kernel = code.get_kernel(lowered.at("fill<int, 7>"));
  DeviceArray<int> out(std::vector<int>(64, 0));
  cubind::launch(stream(), LaunchConfig{{1}, {64}}, kernel, out.pointer());
  sync();
  EXPECT_EQ(out.read(), std::vector<int>(64, 7));
}

TEST_F(LaunchGpu, KernelKeepsItsLibraryLoadedAfterTheObjectCodeIsGone) {
  Kernel kernel;
  {
    const ObjectCode code = compile(kSaxpy, "saxpy.cu");
    kernel = code.get_kernel("saxpy");
  }
  run_saxpy(kernel);
  Kernel copy = kernel;
  Kernel moved = std::move(kernel);
  EXPECT_EQ(copy.handle(), moved.handle());
  EXPECT_THROW(kernel.handle(), std::logic_error);  // NOLINT(bugprone-use-after-move): the point of the test
}

TEST_F(LaunchGpu, ForeignKernelHandleIsNamedByTheDriver) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  const Kernel kernel = Kernel::from_native_handle(code.get_kernel("saxpy").handle());
  EXPECT_EQ(kernel.name(), "saxpy");
  EXPECT_EQ(kernel.param_count(), 4u);
  run_saxpy(kernel);
}

// Runs the nvcc-built `scale` kernel of `code` over 3,000 elements and checks each.
void run_scale(const ObjectCode& code, cubind::StreamRef stream) {
  const Kernel kernel = code.get_kernel("scale");
  ASSERT_EQ(kernel.param_count(), 3u);
  constexpr unsigned int n = 3000;
  std::vector<float> data(n);
  for (unsigned int i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  DeviceArray<float> device_data(data);
  cubind::launch(stream, LaunchConfig{{(n + 255) / 256}, {256}}, kernel, device_data.pointer(), 0.5f, n);
  ASSERT_EQ(raw::cuStreamSynchronize(stream.handle()), CUDA_SUCCESS);
  const std::vector<float> result = device_data.read();
  for (unsigned int i = 0; i < n; ++i) ASSERT_EQ(result[i], 0.5f * data[i]) << "element " << i;
}

TEST_F(LaunchGpu, NvccBuiltCubinLoadsFromFileAndLaunches) {
  if (std::string(CUBIND_TEST_NVCC_CUBIN).empty()) GTEST_SKIP() << "nvcc was not found at build time";
  if (gpu().arch != 90) GTEST_SKIP() << "the nvcc-built cubin is for sm_90; this GPU is sm_" << gpu().arch;
  const ObjectCode code = ObjectCode::from_file(CUBIND_TEST_NVCC_CUBIN);
  ASSERT_EQ(code.kind(), CodeKind::cubin);
  run_scale(code, stream());
}

TEST_F(LaunchGpu, NvccBuiltFatbinLoadsFromFileAndLaunches) {
  if (std::string(CUBIND_TEST_NVCC_FATBIN).empty()) GTEST_SKIP() << "nvcc was not found at build time";
  if (gpu().arch < 90) GTEST_SKIP() << "the nvcc-built fatbin is for sm_90 and later; this GPU is sm_" << gpu().arch;
  const ObjectCode code = ObjectCode::from_file(CUBIND_TEST_NVCC_FATBIN);
  ASSERT_EQ(code.kind(), CodeKind::fatbin);
  run_scale(code, stream());
}

// The parameter layout is read at the first launch; threads racing to it must
// all see it whole.
TEST_F(LaunchGpu, FirstLaunchesFromManyThreadsAtOnceAllSucceed) {
  const ObjectCode code = compile(kSaxpy, "saxpy.cu");
  const Kernel kernel = code.get_kernel("saxpy");
  constexpr int kThreads = 8;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        raw::cuCtxSetCurrent(gpu().context);
        const float a = 1.0f;
        const CUdeviceptr null_pointer = 0;
        const unsigned int n = 0;  // no element is touched
        for (int i = 0; i < 100; ++i)
          cubind::launch(stream(), LaunchConfig{}, kernel, a, null_pointer, null_pointer, n);
      } catch (const std::exception& error) {
        errors[t] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  sync();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

TEST_F(LaunchGpu, CubinForAnotherArchitectureIsACudaErrorAtLoadOrLaunch) {
  const char* other = gpu().arch / 10 == 8 ? "sm_90" : "sm_80";
  cubind::Program program(kSaxpy, "saxpy.cu");
  cubind::ProgramOptions options;
  options.arch = other;
  const cubind::CompileResult result = program.compile(CodeKind::cubin, options);
  ASSERT_TRUE(result.ok) << result.log;
  // With lazy loading the driver may defer reading the image to the first launch.
  try {
    const Kernel kernel = result.code.get_kernel("empty");
    cubind::launch(stream(), LaunchConfig{}, kernel);
    FAIL() << "no exception";
  } catch (const cubind::CudaError& error) {
    EXPECT_EQ(error.status(), CUDA_ERROR_NO_BINARY_FOR_GPU) << error.what();
  }
}

}  // namespace

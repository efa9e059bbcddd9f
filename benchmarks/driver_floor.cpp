// The C floor for benchmarks/gpu_bench_bindings.py: the same driver calls,
// made directly through entry points taken from libcuda.so.1 with dlsym.
// Built as a shared library and loaded into the benchmark's own process, so
// that C and Python time the same context, stream, event and kernels in the
// same rounds.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace {

struct Driver {
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuPointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuStreamQuery)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**);
};

Driver driver;
bool opened = false;

template <typename F>
bool sym(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}

template <typename Body>
double best_ns(long iterations, int repeats, Body body) {
  double best = 1e30;
  for (int rep = 0; rep < repeats; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) body();
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() / iterations);
  }
  return best;
}

volatile CUresult sink = CUDA_SUCCESS;

}  // namespace

extern "C" {

// Takes the entry points from libcuda.so.1. Returns nullptr, or the name of
// what is missing.
const char* floor_open() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return "libcuda.so.1";
  Driver d{};
  if (!sym(lib, "cuCtxGetCurrent", d.cuCtxGetCurrent)) return "cuCtxGetCurrent";
  if (!sym(lib, "cuDeviceGet", d.cuDeviceGet)) return "cuDeviceGet";
  if (!sym(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute)) return "cuDeviceGetAttribute";
  if (!sym(lib, "cuPointerGetAttribute", d.cuPointerGetAttribute)) return "cuPointerGetAttribute";
  if (!sym(lib, "cuEventRecord", d.cuEventRecord)) return "cuEventRecord";
  if (!sym(lib, "cuStreamQuery", d.cuStreamQuery)) return "cuStreamQuery";
  if (!sym(lib, "cuStreamSynchronize", d.cuStreamSynchronize)) return "cuStreamSynchronize";
  if (!sym(lib, "cuLaunchKernel", d.cuLaunchKernel)) return "cuLaunchKernel";
  if (!sym(lib, "cuLaunchKernelEx", d.cuLaunchKernelEx)) return "cuLaunchKernelEx";
  driver = d;
  opened = true;
  return nullptr;
}

// The address of a driver entry point (for the Python floors of
// benchmarks/call_floor.pyx), or nullptr.
void* floor_symbol(const char* name) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return lib != nullptr ? dlsym(lib, name) : nullptr;
}

// ns per call of the named simple call, the best of `repeats` runs of
// `iterations` calls, on the calling thread's current context; -1 for an
// unknown name, -2 when a call fails or floor_open() has not succeeded.
double floor_call_ns(const char* name, long iterations, int repeats, int device, std::uint64_t dptr,
                     std::uint64_t stream, std::uint64_t event) {
  if (!opened) return -2;
  const auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream));
  const auto e = reinterpret_cast<CUevent>(static_cast<std::uintptr_t>(event));
  double ns = -1;
  if (std::strcmp(name, "cuCtxGetCurrent") == 0) {
    ns = best_ns(iterations, repeats, [&] {
      CUcontext c;
      sink = driver.cuCtxGetCurrent(&c);
    });
  } else if (std::strcmp(name, "cuDeviceGet") == 0) {
    ns = best_ns(iterations, repeats, [&] {
      CUdevice d;
      sink = driver.cuDeviceGet(&d, 0);
    });
  } else if (std::strcmp(name, "cuDeviceGetAttribute") == 0) {
    ns = best_ns(iterations, repeats, [&] {
      int v;
      sink = driver.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    });
  } else if (std::strcmp(name, "cuPointerGetAttribute") == 0) {
    ns = best_ns(iterations, repeats, [&] {
      unsigned v;
      sink = driver.cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr);
    });
  } else if (std::strcmp(name, "cuEventRecord") == 0) {
    ns = best_ns(iterations, repeats, [&] { sink = driver.cuEventRecord(e, s); });
  } else if (std::strcmp(name, "cuStreamQuery") == 0) {
    if (driver.cuStreamSynchronize(s) != CUDA_SUCCESS) return -2;
    ns = best_ns(iterations, repeats, [&] { sink = driver.cuStreamQuery(s); });
  }
  if (sink != CUDA_SUCCESS || driver.cuStreamSynchronize(s) != CUDA_SUCCESS) return -2;
  return ns;
}

// ns per launch of `count` launches of a kernel of `nargs` int parameters
// (0 to 16) with one thread, the stream synchronized before and after, outside
// the timing; through cuLaunchKernel, or with `ex` through cuLaunchKernelEx
// (the call cubind.core and cuda.core make) with a config of no attributes.
// -2 when a call fails or floor_open() has not succeeded.
double floor_launch_ns(std::uint64_t function, std::uint64_t stream, int nargs, int count, int ex) {
  if (!opened || nargs < 0 || nargs > 16 || count <= 0) return -2;
  const auto f = reinterpret_cast<CUfunction>(static_cast<std::uintptr_t>(function));
  const auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream));
  int values[16];
  void* params[16];
  for (int i = 0; i < 16; ++i) {
    values[i] = i;
    params[i] = &values[i];
  }
  void** kernel_params = nargs == 0 ? nullptr : params;
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = config.blockDimY = config.blockDimZ = 1;
  config.hStream = s;
  if (driver.cuStreamSynchronize(s) != CUDA_SUCCESS) return -2;
  CUresult failed = CUDA_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    const CUresult r = ex ? driver.cuLaunchKernelEx(&config, f, kernel_params, nullptr)
                          : driver.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, kernel_params, nullptr);
    if (r != CUDA_SUCCESS) failed = r;
  }
  const auto stop = std::chrono::steady_clock::now();
  if (failed != CUDA_SUCCESS || driver.cuStreamSynchronize(s) != CUDA_SUCCESS) return -2;
  return std::chrono::duration<double, std::nano>(stop - start).count() / count;
}

}  // extern "C"

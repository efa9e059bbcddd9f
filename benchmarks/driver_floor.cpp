// The C floor for benchmarks/side_by_side.py: the same driver calls,
// made directly through entry points taken from libcuda.so.1 with dlsym.
// Built as a shared library and loaded into the benchmark's own process, so
// that C and Python time the same context, stream, event and kernels in the
// same rounds.
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
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
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreateWithPriority)(CUstream*, unsigned, int);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr*, std::size_t, CUmemoryPool, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus*);
  CUresult (*cuMemAllocHost)(void**, std::size_t);
  CUresult (*cuMemFreeHost)(void*);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuKernelGetAttribute)(int*, CUfunction_attribute, CUkernel, CUdevice);
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
  if (!sym(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent)) return "cuCtxSetCurrent";
  if (!sym(lib, "cuStreamCreateWithPriority", d.cuStreamCreateWithPriority)) return "cuStreamCreateWithPriority";
  if (!sym(lib, "cuStreamDestroy_v2", d.cuStreamDestroy) && !sym(lib, "cuStreamDestroy", d.cuStreamDestroy)) {
    return "cuStreamDestroy_v2";
  }
  if (!sym(lib, "cuEventCreate", d.cuEventCreate)) return "cuEventCreate";
  if (!sym(lib, "cuEventDestroy_v2", d.cuEventDestroy) && !sym(lib, "cuEventDestroy", d.cuEventDestroy)) {
    return "cuEventDestroy_v2";
  }
  if (!sym(lib, "cuMemAllocFromPoolAsync", d.cuMemAllocFromPoolAsync)) return "cuMemAllocFromPoolAsync";
  if (!sym(lib, "cuMemFreeAsync", d.cuMemFreeAsync)) return "cuMemFreeAsync";
  if (!sym(lib, "cuStreamIsCapturing", d.cuStreamIsCapturing)) return "cuStreamIsCapturing";
  if (!sym(lib, "cuMemAllocHost_v2", d.cuMemAllocHost)) return "cuMemAllocHost_v2";
  if (!sym(lib, "cuMemFreeHost", d.cuMemFreeHost)) return "cuMemFreeHost";
  if (!sym(lib, "cuEventSynchronize", d.cuEventSynchronize)) return "cuEventSynchronize";
  if (!sym(lib, "cuEventElapsedTime_v2", d.cuEventElapsedTime) &&
      !sym(lib, "cuEventElapsedTime", d.cuEventElapsedTime)) {
    return "cuEventElapsedTime_v2";
  }
  if (!sym(lib, "cuKernelGetAttribute", d.cuKernelGetAttribute)) return "cuKernelGetAttribute";
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

// ns per launch of `count` launches of a kernel of `nargs` parameters (0 to
// 64, each read from its own 16 bytes) with one thread, the stream
// synchronized before and after, outside the timing; through cuLaunchKernel,
// or with `ex` through cuLaunchKernelEx (the call cubind.core and cuda.core
// make) with a config of no attributes. -2 when a call fails or floor_open()
// has not succeeded.
double floor_launch_ns(std::uint64_t function, std::uint64_t stream, int nargs, int count, int ex) {
  if (!opened || nargs < 0 || nargs > 64 || count <= 0) return -2;
  const auto f = reinterpret_cast<CUfunction>(static_cast<std::uintptr_t>(function));
  const auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream));
  static std::uint64_t values[128];
  void* params[64];
  for (int i = 0; i < 64; ++i) {
    values[2 * i] = static_cast<std::uint64_t>(i);
    params[i] = &values[2 * i];
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

// ns per operation of `count` operations, once: "set_current"
// (cuCtxSetCurrent(context)), "stream" (cuStreamCreateWithPriority of a
// non-blocking stream of priority 0, cuStreamDestroy), "event" (cuEventCreate
// without timing, cuEventDestroy), "record" (cuEventCreate without timing,
// cuEventRecord on stream, cuEventDestroy), "allocate" (cuStreamIsCapturing of
// stream, cuMemAllocFromPoolAsync of `bytes` from pool on stream,
// cuMemFreeAsync: a pool allocation asks whether its stream is capturing, as
// cuda.core's and cubind's do, before it allocates). The stream is
// synchronized after, outside the timing. -1 for an unknown name, -2 when a
// call fails or floor_open() has not succeeded.
double floor_op_ns(const char* name, long count, std::uint64_t context, std::uint64_t stream, std::uint64_t pool,
                   std::size_t bytes) {
  if (!opened || count <= 0) return -2;
  const auto ctx = reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(context));
  const auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream));
  const auto p = reinterpret_cast<CUmemoryPool>(static_cast<std::uintptr_t>(pool));
  CUresult failed = CUDA_SUCCESS;
  auto keep = [&](CUresult r) {
    if (r != CUDA_SUCCESS) failed = r;
  };
  const auto start = std::chrono::steady_clock::now();
  if (std::strcmp(name, "set_current") == 0) {
    for (long i = 0; i < count; ++i) keep(driver.cuCtxSetCurrent(ctx));
  } else if (std::strcmp(name, "stream") == 0) {
    for (long i = 0; i < count; ++i) {
      CUstream created = nullptr;
      keep(driver.cuStreamCreateWithPriority(&created, CU_STREAM_NON_BLOCKING, 0));
      keep(driver.cuStreamDestroy(created));
    }
  } else if (std::strcmp(name, "event") == 0) {
    for (long i = 0; i < count; ++i) {
      CUevent created = nullptr;
      keep(driver.cuEventCreate(&created, CU_EVENT_DISABLE_TIMING));
      keep(driver.cuEventDestroy(created));
    }
  } else if (std::strcmp(name, "record") == 0) {
    for (long i = 0; i < count; ++i) {
      CUevent created = nullptr;
      keep(driver.cuEventCreate(&created, CU_EVENT_DISABLE_TIMING));
      keep(driver.cuEventRecord(created, s));
      keep(driver.cuEventDestroy(created));
    }
  } else if (std::strcmp(name, "allocate") == 0) {
    for (long i = 0; i < count; ++i) {
      CUdeviceptr ptr = 0;
      CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
      keep(driver.cuStreamIsCapturing(s, &capturing));
      if (capturing != CU_STREAM_CAPTURE_STATUS_NONE) keep(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
      keep(driver.cuMemAllocFromPoolAsync(&ptr, bytes, p, s));
      keep(driver.cuMemFreeAsync(ptr, s));
    }
  } else if (std::strcmp(name, "host_alloc") == 0) {
    for (long i = 0; i < count; ++i) {
      void* ptr = nullptr;
      keep(driver.cuMemAllocHost(&ptr, bytes));
      keep(driver.cuMemFreeHost(ptr));
    }
  } else if (std::strcmp(name, "timing") == 0) {
    // Two timed records, a wait for the second and the time between them;
    // the two events are made once, before the clock starts, for all.
    CUevent a = nullptr;
    CUevent b = nullptr;
    if (driver.cuEventCreate(&a, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        driver.cuEventCreate(&b, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
      return -2;
    }
    const auto begin = std::chrono::steady_clock::now();
    float ms = 0;
    for (long i = 0; i < count; ++i) {
      keep(driver.cuEventRecord(a, s));
      keep(driver.cuEventRecord(b, s));
      keep(driver.cuEventSynchronize(b));
      keep(driver.cuEventElapsedTime(&ms, a, b));
    }
    const auto end = std::chrono::steady_clock::now();
    driver.cuEventDestroy(a);
    driver.cuEventDestroy(b);
    if (failed != CUDA_SUCCESS) return -2;
    return std::chrono::duration<double, std::nano>(end - begin).count() / count;
  } else if (std::strcmp(name, "kernel_attribute") == 0) {
    // `pool` is the CUkernel here.
    const auto kernel = reinterpret_cast<CUkernel>(static_cast<std::uintptr_t>(pool));
    CUdevice device = 0;
    keep(driver.cuDeviceGet(&device, 0));
    int value = 0;
    for (long i = 0; i < count; ++i) {
      keep(driver.cuKernelGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel, device));
    }
  } else {
    return -1;
  }
  const auto stop = std::chrono::steady_clock::now();
  if (failed != CUDA_SUCCESS || driver.cuStreamSynchronize(s) != CUDA_SUCCESS) return -2;
  return std::chrono::duration<double, std::nano>(stop - start).count() / count;
}

// ns per compile of `source` to a cubin by NVRTC from C, the least
// Program.compile('cubin') can cost: nvrtcCreateProgram, nvrtcCompileProgram
// with the `option_count` options (what the Python side passes), the cubin's
// size and bytes, nvrtcDestroyProgram. `nvrtc_path`: the library the
// bindings loaded. -2 when it cannot be opened or a call fails.
double floor_compile_ns(const char* nvrtc_path, const char* source, const char* const* options, int option_count,
                        long count) {
  using Program = struct _nvrtcProgram*;
  void* lib = dlopen(nvrtc_path, RTLD_NOW);
  if (lib == nullptr || count <= 0) return -2;
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*cubin_size)(Program, std::size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  if (!sym(lib, "nvrtcCreateProgram", create) || !sym(lib, "nvrtcCompileProgram", compile) ||
      !sym(lib, "nvrtcGetCUBINSize", cubin_size) || !sym(lib, "nvrtcGetCUBIN", cubin) ||
      !sym(lib, "nvrtcDestroyProgram", destroy)) {
    return -2;
  }
  int failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) {
    Program program = nullptr;
    failed |= create(&program, source, "floor.cu", 0, nullptr, nullptr);
    failed |= compile(program, option_count, options);
    std::size_t size = 0;
    failed |= cubin_size(program, &size);
    char* out = new char[size > 0 ? size : 1];
    failed |= cubin(program, out);
    sink = static_cast<CUresult>(out[0]);
    delete[] out;
    failed |= destroy(&program);
  }
  const auto stop = std::chrono::steady_clock::now();
  if (failed != 0) return -2;
  return std::chrono::duration<double, std::nano>(stop - start).count() / count;
}

}  // extern "C"

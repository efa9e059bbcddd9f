// The C floor for benchmarks/bench_bindings.py: the same driver calls, made
// directly through entry points taken from libcuda.so.1 with dlsym, timed in
// the same way. Prints "name ns_per_call" lines.
//   driver_floor <cubin-with-kernels-k0-k4-k16>
#include <cuda.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

template <typename F>
F sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "libcuda.so.1 has no %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(p);
}

template <typename Body>
double time_ns(long iterations, Body body) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) body(i);
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() / iterations);
  }
  return best;
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: driver_floor kernels.cubin\n");
    return 2;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::fprintf(stderr, "no libcuda.so.1\n");
    return 1;
  }
  auto cuInit = sym<CUresult (*)(unsigned)>(lib, "cuInit");
  auto cuDeviceGet = sym<CUresult (*)(CUdevice*, int)>(lib, "cuDeviceGet");
  auto cuDevicePrimaryCtxRetain = sym<CUresult (*)(CUcontext*, CUdevice)>(lib, "cuDevicePrimaryCtxRetain");
  auto cuCtxSetCurrent = sym<CUresult (*)(CUcontext)>(lib, "cuCtxSetCurrent");
  auto cuCtxGetCurrent = sym<CUresult (*)(CUcontext*)>(lib, "cuCtxGetCurrent");
  auto cuDeviceGetAttribute = sym<CUresult (*)(int*, CUdevice_attribute, CUdevice)>(lib, "cuDeviceGetAttribute");
  auto cuMemAlloc = sym<CUresult (*)(CUdeviceptr*, size_t)>(lib, "cuMemAlloc_v2");
  auto cuPointerGetAttribute = sym<CUresult (*)(void*, CUpointer_attribute, CUdeviceptr)>(lib, "cuPointerGetAttribute");
  auto cuStreamCreate = sym<CUresult (*)(CUstream*, unsigned)>(lib, "cuStreamCreate");
  auto cuEventCreate = sym<CUresult (*)(CUevent*, unsigned)>(lib, "cuEventCreate");
  auto cuEventRecord = sym<CUresult (*)(CUevent, CUstream)>(lib, "cuEventRecord");
  auto cuStreamQuery = sym<CUresult (*)(CUstream)>(lib, "cuStreamQuery");
  auto cuStreamSynchronize = sym<CUresult (*)(CUstream)>(lib, "cuStreamSynchronize");
  auto cuModuleLoadData = sym<CUresult (*)(CUmodule*, const void*)>(lib, "cuModuleLoadData");
  auto cuModuleGetFunction = sym<CUresult (*)(CUfunction*, CUmodule, const char*)>(lib, "cuModuleGetFunction");
  auto cuLaunchKernel = sym<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                         unsigned, CUstream, void**, void**)>(lib, "cuLaunchKernel");

  check(cuInit(0), "cuInit");
  CUdevice dev;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx;
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUdeviceptr dptr;
  check(cuMemAlloc(&dptr, 1 << 20), "cuMemAlloc");
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent event;
  check(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");

  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CUmodule module;
  check(cuModuleLoadData(&module, image.data()), "cuModuleLoadData");
  CUfunction k0, k4, k16;
  check(cuModuleGetFunction(&k0, module, "k0"), "k0");
  check(cuModuleGetFunction(&k4, module, "k4"), "k4");
  check(cuModuleGetFunction(&k16, module, "k16"), "k16");

  const long n = 200000;
  volatile CUresult sink = CUDA_SUCCESS;
  std::printf("cuCtxGetCurrent %.1f\n", time_ns(n, [&](long) { CUcontext c; sink = cuCtxGetCurrent(&c); }));
  std::printf("cuDeviceGet %.1f\n", time_ns(n, [&](long) { CUdevice d; sink = cuDeviceGet(&d, 0); }));
  std::printf("cuDeviceGetAttribute %.1f\n", time_ns(n, [&](long) {
                int v;
                sink = cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
              }));
  std::printf("cuPointerGetAttribute %.1f\n", time_ns(n, [&](long) {
                unsigned v;
                sink = cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr);
              }));
  std::printf("cuEventRecord %.1f\n", time_ns(n, [&](long) { sink = cuEventRecord(event, stream); }));
  check(cuStreamSynchronize(stream), "sync");
  std::printf("cuStreamQuery %.1f\n", time_ns(n, [&](long) { sink = cuStreamQuery(stream); }));

  // Launches: synchronise every 256 so the queue never fills.
  int ints[16];
  void* args[16];
  for (int i = 0; i < 16; ++i) {
    ints[i] = i;
    args[i] = &ints[i];
  }
  const long launches = 20000;
  auto launch = [&](CUfunction f, void** params) {
    return time_ns(launches, [&](long i) {
      sink = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
      if ((i & 255) == 255) cuStreamSynchronize(stream);
    });
  };
  std::printf("cuLaunchKernel_0 %.1f\n", launch(k0, nullptr));
  std::printf("cuLaunchKernel_4 %.1f\n", launch(k4, args));
  std::printf("cuLaunchKernel_16 %.1f\n", launch(k16, args));
  check(cuStreamSynchronize(stream), "sync");
  (void)sink;
  return 0;
}

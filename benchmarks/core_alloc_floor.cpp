// The C floor of allocation for benchmarks/gpu_bench_core.py: stream-ordered
// allocate and free of one block from a memory pool, through entry points
// taken from libcuda.so.1 with dlsym, in the benchmark's own process (same
// context, pool and stream as the Python side).
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace {

CUresult (*alloc_from_pool)(CUdeviceptr*, std::size_t, CUmemoryPool, CUstream) = nullptr;
CUresult (*free_async)(CUdeviceptr, CUstream) = nullptr;

}  // namespace

extern "C" {

// 0 once the entry points are found, -1 otherwise.
int alloc_floor_open() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return -1;
  alloc_from_pool = reinterpret_cast<decltype(alloc_from_pool)>(dlsym(lib, "cuMemAllocFromPoolAsync"));
  free_async = reinterpret_cast<decltype(free_async)>(dlsym(lib, "cuMemFreeAsync"));
  return alloc_from_pool != nullptr && free_async != nullptr ? 0 : -1;
}

// Best of `repeats` runs of `iterations` allocate + free pairs, in ns per pair;
// negative when a call fails.
double alloc_free_ns(std::uint64_t pool, std::uint64_t stream, std::size_t bytes, long iterations, int repeats) {
  const auto p = reinterpret_cast<CUmemoryPool>(static_cast<std::uintptr_t>(pool));
  const auto s = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream));
  double best = 1e30;
  for (int rep = 0; rep < repeats; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) {
      CUdeviceptr ptr = 0;
      if (alloc_from_pool(&ptr, bytes, p, s) != CUDA_SUCCESS) return -1;
      if (free_async(ptr, s) != CUDA_SUCCESS) return -1;
    }
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(stop - start).count() / iterations);
  }
  return best;
}

}  // extern "C"

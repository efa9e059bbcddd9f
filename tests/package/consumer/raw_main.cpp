// Uses the raw layer alone, through cubind::raw: the CUDA functions with their
// C names, loaded at run time, and nothing of the core. It builds and runs
// with or without a GPU; NVRTC comes from the CUDA toolkit.
#include <cubind/raw/driver.hpp>
#include <cubind/raw/nvrtc.hpp>

#include <cstdio>
#include <exception>

int main() {
  try {
    int major = 0, minor = 0;
    if (cubind::raw::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
      std::fprintf(stderr, "cubind raw consumer: nvrtcVersion failed\n");
      return 1;
    }
    std::printf("cubind raw consumer: NVRTC %d.%d from %s\n", major, minor,
                cubind::raw::nvrtc_status().path.c_str());
  } catch (const cubind::LoaderError& e) {
    std::printf("cubind raw consumer: no NVRTC (%s)\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cubind raw consumer failed: %s\n", e.what());
    return 1;
  }
  try {
    int version = 0;
    const CUresult status = cubind::raw::cuDriverGetVersion(&version);
    std::printf("cubind raw consumer: cuDriverGetVersion -> %s, %d\n", cubind::raw::driver_status_name(status), version);
  } catch (const cubind::LoaderError& e) {
    std::printf("cubind raw consumer: no CUDA driver (%s)\n", e.what());
  }
  return 0;
}

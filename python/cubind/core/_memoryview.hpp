// What StridedMemoryView and TensorMapDescriptor ask the driver, through the
// raw layer: a pointer's device, the current context's device, and the
// encoding of a tiled or im2col tensor map.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind_core {

// The ordinal of the device whose memory ptr points into
// (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL).
inline int pointer_device_ordinal(CUdeviceptr ptr) {
  int ordinal = -1;
  cubind::detail::check(cubind::raw::cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr),
                        "cuPointerGetAttribute");
  return ordinal;
}

// The device of the current context (cuCtxGetDevice); -1 when none is current.
inline int current_device_or_none() {
  CUcontext context = nullptr;
  if (cubind::raw::cuCtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) return -1;
  CUdevice device = -1;
  cubind::detail::check(cubind::raw::cuCtxGetDevice(&device), "cuCtxGetDevice");
  return static_cast<int>(device);
}

inline void tensor_map_encode_tiled(CUtensorMap* map, int data_type, unsigned rank, void* address,
                                    const std::uint64_t* dims, const std::uint64_t* strides, const std::uint32_t* box,
                                    const std::uint32_t* element_strides, int interleave, int swizzle,
                                    int l2_promotion, int oob_fill) {
  cubind::detail::check(
      cubind::raw::cuTensorMapEncodeTiled(
          map, static_cast<CUtensorMapDataType>(data_type), rank, address, reinterpret_cast<const cuuint64_t*>(dims),
          reinterpret_cast<const cuuint64_t*>(strides), reinterpret_cast<const cuuint32_t*>(box),
          reinterpret_cast<const cuuint32_t*>(element_strides), static_cast<CUtensorMapInterleave>(interleave),
          static_cast<CUtensorMapSwizzle>(swizzle), static_cast<CUtensorMapL2promotion>(l2_promotion),
          static_cast<CUtensorMapFloatOOBfill>(oob_fill)),
      "cuTensorMapEncodeTiled");
}

inline void tensor_map_encode_im2col(CUtensorMap* map, int data_type, unsigned rank, void* address,
                                     const std::uint64_t* dims, const std::uint64_t* strides, const int* lower,
                                     const int* upper, unsigned channels, unsigned pixels,
                                     const std::uint32_t* element_strides, int interleave, int swizzle,
                                     int l2_promotion, int oob_fill) {
  cubind::detail::check(
      cubind::raw::cuTensorMapEncodeIm2col(
          map, static_cast<CUtensorMapDataType>(data_type), rank, address, reinterpret_cast<const cuuint64_t*>(dims),
          reinterpret_cast<const cuuint64_t*>(strides), lower, upper, channels, pixels,
          reinterpret_cast<const cuuint32_t*>(element_strides), static_cast<CUtensorMapInterleave>(interleave),
          static_cast<CUtensorMapSwizzle>(swizzle), static_cast<CUtensorMapL2promotion>(l2_promotion),
          static_cast<CUtensorMapFloatOOBfill>(oob_fill)),
      "cuTensorMapEncodeIm2col");
}

// Points a map at another address (cuTensorMapReplaceAddress).
inline void tensor_map_replace_address(CUtensorMap* map, void* address) {
  cubind::detail::check(cubind::raw::cuTensorMapReplaceAddress(map, address), "cuTensorMapReplaceAddress");
}

}  // namespace cubind_core

// TMA tensor maps (CUtensorMap): the descriptor a kernel on sm_90 or later
// receives as a `const __grid_constant__ CUtensorMap` argument to copy tiles
// between global and shared memory. Encoding is a host-side call that checks
// the layout and allocates nothing; the driver wants a context current (any:
// CUDA_ERROR_INVALID_CONTEXT without one), as a ContextGuard makes it.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace cubind {

// The most dimensions a tensor map describes.
inline constexpr unsigned int kTensorMapMaxRank = 5;

// A tiled tensor map (cuTensorMapEncodeTiled). Arrays are indexed innermost
// dimension first, and only their first `rank` elements (rank - 1 for
// strides) are read.
struct TensorMapTiled {
  CUtensorMapDataType data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  unsigned int rank = 1;  // 1 to 5
  // The tensor in global memory: 16-byte aligned, 32 with interleave.
  void* address = nullptr;
  // Elements per dimension (globalDim), each 1 to 2**32.
  std::uint64_t sizes[kTensorMapMaxRank] = {};
  // Bytes between consecutive elements of dimensions 1 to rank - 1
  // (globalStrides; dimension 0 is contiguous): multiples of 16.
  std::uint64_t strides[kTensorMapMaxRank - 1] = {};
  // Elements per dimension of the tile copied at once (boxDim), 1 to 256.
  std::uint32_t box[kTensorMapMaxRank] = {};
  // The step, in elements, between elements read along each dimension, 1 to 8.
  std::uint32_t element_strides[kTensorMapMaxRank] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

// An im2col tensor map (cuTensorMapEncodeIm2col), for convolutions: the
// dimensions are channels (innermost), then 1 to 3 spatial ones, then the
// batch. Arrays as in TensorMapTiled.
struct TensorMapIm2col {
  CUtensorMapDataType data_type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  unsigned int rank = 3;  // 3 to 5
  void* address = nullptr;
  std::uint64_t sizes[kTensorMapMaxRank] = {};
  std::uint64_t strides[kTensorMapMaxRank - 1] = {};
  // The corners of the bounding box of the pixels read around each output
  // pixel, per spatial dimension (rank - 2 of them, innermost first).
  int lower_corner[kTensorMapMaxRank - 2] = {};
  int upper_corner[kTensorMapMaxRank - 2] = {};
  unsigned int channels_per_pixel = 1;  // 1 to 256
  unsigned int pixels_per_column = 1;   // 1 to 1024
  std::uint32_t element_strides[kTensorMapMaxRank] = {1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

// cuTensorMapEncodeTiled.
// @throws std::invalid_argument for a rank outside 1 to 5 (before any driver
// call), CudaError (CUDA_ERROR_INVALID_VALUE) for a layout the driver refuses
CUtensorMap encode_tensor_map(const TensorMapTiled& tiled);

// cuTensorMapEncodeIm2col.
// @throws std::invalid_argument for a rank outside 3 to 5, channels_per_pixel
// outside 1 to 256 or pixels_per_column outside 1 to 1024 (before any driver
// call), CudaError for a layout the driver refuses
CUtensorMap encode_tensor_map(const TensorMapIm2col& im2col);

// Points `map` at another tensor of the same layout (cuTensorMapReplaceAddress).
// @throws CudaError for an address the map's alignment refuses
void replace_tensor_map_address(CUtensorMap& map, void* address);

}  // namespace cubind

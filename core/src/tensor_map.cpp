#include "cubind/tensor_map.hpp"

#include <stdexcept>
#include <string>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind {

namespace {

void require_range(const char* where, const char* what, unsigned long long value, unsigned long long low,
                   unsigned long long high) {
  if (value < low || value > high) {
    throw std::invalid_argument(std::string(where) + ": " + what + " is " + std::to_string(value) + "; it must be " +
                                std::to_string(low) + " to " + std::to_string(high));
  }
}

}  // namespace

CUtensorMap encode_tensor_map(const TensorMapTiled& t) {
  require_range("cubind::encode_tensor_map (tiled)", "rank", t.rank, 1, kTensorMapMaxRank);
  CUtensorMap map{};
  detail::check(raw::cuTensorMapEncodeTiled(&map, t.data_type, t.rank, t.address, t.sizes, t.strides, t.box,
                                            t.element_strides, t.interleave, t.swizzle, t.l2_promotion, t.oob_fill),
                "cuTensorMapEncodeTiled");
  return map;
}

CUtensorMap encode_tensor_map(const TensorMapIm2col& t) {
  constexpr const char* where = "cubind::encode_tensor_map (im2col)";
  require_range(where, "rank", t.rank, 3, kTensorMapMaxRank);
  require_range(where, "channels_per_pixel", t.channels_per_pixel, 1, 256);
  require_range(where, "pixels_per_column", t.pixels_per_column, 1, 1024);
  CUtensorMap map{};
  detail::check(raw::cuTensorMapEncodeIm2col(&map, t.data_type, t.rank, t.address, t.sizes, t.strides,
                                             t.lower_corner, t.upper_corner, t.channels_per_pixel,
                                             t.pixels_per_column, t.element_strides, t.interleave, t.swizzle,
                                             t.l2_promotion, t.oob_fill),
                "cuTensorMapEncodeIm2col");
  return map;
}

void replace_tensor_map_address(CUtensorMap& map, void* address) {
  detail::check(raw::cuTensorMapReplaceAddress(&map, address), "cuTensorMapReplaceAddress");
}

}  // namespace cubind

#include "cubind/copy_batch.hpp"

#include <stdexcept>
#include <string>

#include "cubind/error.hpp"
#include "cubind/managed_memory.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind {

CUmemcpyAttributes default_copy_attributes() noexcept {
  CUmemcpyAttributes attributes{};
  attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attributes.srcLocHint.type = CU_MEM_LOCATION_TYPE_INVALID;
  attributes.dstLocHint.type = CU_MEM_LOCATION_TYPE_INVALID;
  attributes.flags = CU_MEMCPY_FLAG_DEFAULT;
  return attributes;
}

void copy_batch(const std::vector<BatchCopy>& copies, const std::vector<CUmemcpyAttributes>& attributes,
                StreamRef stream) {
  const char* where = "cubind::copy_batch";
  if (copies.empty()) throw std::invalid_argument(std::string(where) + ": no copies");
  if (stream.handle() == nullptr || stream.handle() == CU_STREAM_LEGACY) {
    throw std::invalid_argument(std::string(where) +
                                ": the legacy default stream cannot take a batched copy; use another stream");
  }
  if (attributes.size() != 1 && attributes.size() != copies.size()) {
    throw std::invalid_argument(std::string(where) + ": " + std::to_string(attributes.size()) + " attributes for " +
                                std::to_string(copies.size()) + " copies; give one for all or one per copy");
  }
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (copies[i].size == 0) throw std::invalid_argument(std::string(where) + ": copy " + std::to_string(i) + " is 0 bytes");
    dsts.push_back(copies[i].dst);
    srcs.push_back(copies[i].src);
    sizes.push_back(copies[i].size);
  }
  std::vector<std::size_t> starts = attributes.size() == 1 ? std::vector<std::size_t>{0} : detail::run_starts(attributes);
  std::vector<CUmemcpyAttributes> runs;
  for (std::size_t start : starts) runs.push_back(attributes[start]);
  detail::check(raw::cuMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), copies.size(), runs.data(),
                                        starts.data(), runs.size(), stream.handle()),
                "cuMemcpyBatchAsync");
}

}  // namespace cubind

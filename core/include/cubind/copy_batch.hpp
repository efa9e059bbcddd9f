// Several copies in one driver call (cuMemcpyBatchAsync), each with its
// attributes (CUmemcpyAttributes: source access order, location hints,
// flags). The driver may run the copies in any order and at once.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <vector>

#include "cubind/stream.hpp"

namespace cubind {

struct BatchCopy {
  CUdeviceptr dst = 0;
  CUdeviceptr src = 0;
  std::size_t size = 0;
};

// Stream-ordered source access, no location hints, no flags.
CUmemcpyAttributes default_copy_attributes() noexcept;

// `attributes` holds one entry per copy, or a single entry for all; equal
// neighbours reach the driver once. `stream` must not be the legacy default
// stream, which the driver refuses.
// @throws std::invalid_argument for no copies, a copy of 0 bytes, a count of
// attributes that is neither 1 nor the count of copies, or the legacy stream.
void copy_batch(const std::vector<BatchCopy>& copies, const std::vector<CUmemcpyAttributes>& attributes,
                StreamRef stream);

}  // namespace cubind

// Memory by raw address, for memory cubind does not own (another library's
// arrays, a DLPack tensor) or owns elsewhere: stream-ordered copies and
// fills, and which device a pointer's memory is on. Buffer (buffer.hpp) does
// the same for the memory it owns, with its size and its resource's device
// checked.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "cubind/stream.hpp"

namespace cubind {

// Copies `bytes` from `src` to `dst` on `stream` (cuMemcpyAsync): addresses of
// any memory CUDA can reach (device, pinned or managed; pageable host memory
// makes the copy synchronous), read through unified addressing. The copy is
// made in the stream's context when the driver can say which
// (StreamContextGuard), so it works on a thread with no context current.
// @throws std::logic_error for the StreamRef of a null Stream, CudaError
void copy_memory(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, StreamRef stream);

// Sets `count` bytes, 16-bit or 32-bit words from `dst` on to `value`, on
// `stream` (cuMemsetD8Async, cuMemsetD16Async, cuMemsetD32Async), in the
// stream's context as copy_memory. Write the value's type
// (std::uint16_t{0}): a plain 0 does not say which width. `dst` must be
// aligned to the width.
// @throws std::logic_error for the StreamRef of a null Stream, CudaError
void fill_memory(CUdeviceptr dst, std::uint8_t value, std::size_t count, StreamRef stream);
void fill_memory(CUdeviceptr dst, std::uint16_t value, std::size_t count, StreamRef stream);
void fill_memory(CUdeviceptr dst, std::uint32_t value, std::size_t count, StreamRef stream);
template <typename T>
void fill_memory(CUdeviceptr dst, T value, std::size_t count, StreamRef stream) = delete;

// The ordinal of the device whose memory `ptr` points into
// (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL of cuPointerGetAttribute).
// @throws CudaError (CUDA_ERROR_INVALID_VALUE) for an address CUDA does not know
int pointer_device_ordinal(CUdeviceptr ptr);

}  // namespace cubind

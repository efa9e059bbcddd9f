#include "cubind/memory.hpp"

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"

namespace cubind {

namespace {

template <typename Word, typename Set>
void fill_words(CUdeviceptr dst, Word value, std::size_t count, StreamRef stream, Set set, const char* api) {
  detail::require_stream(stream, "cubind::fill_memory");
  StreamContextGuard guard(stream);
  detail::check(set(dst, value, count, stream.handle()), api);
}

}  // namespace

void copy_memory(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, StreamRef stream) {
  detail::require_stream(stream, "cubind::copy_memory");
  StreamContextGuard guard(stream);
  detail::check(raw::cuMemcpyAsync(dst, src, bytes, stream.handle()), "cuMemcpyAsync");
}

void fill_memory(CUdeviceptr dst, std::uint8_t value, std::size_t count, StreamRef stream) {
  fill_words(dst, value, count, stream, raw::cuMemsetD8Async, "cuMemsetD8Async");
}

void fill_memory(CUdeviceptr dst, std::uint16_t value, std::size_t count, StreamRef stream) {
  fill_words(dst, value, count, stream, raw::cuMemsetD16Async, "cuMemsetD16Async");
}

void fill_memory(CUdeviceptr dst, std::uint32_t value, std::size_t count, StreamRef stream) {
  fill_words(dst, value, count, stream, raw::cuMemsetD32Async, "cuMemsetD32Async");
}

int pointer_device_ordinal(CUdeviceptr ptr) {
  int ordinal = -1;
  detail::check(raw::cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr),
                "cuPointerGetAttribute");
  return ordinal;
}

}  // namespace cubind

// Streams: Stream owns a CUstream; StreamRef is a cheap non-owning view that
// every stream-ordered call takes, so a Stream, a foreign CUstream and the
// legacy or per-thread default stream can all be passed.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace cubind {

class Stream;

class StreamRef {
 public:
  // A view of a stream owned elsewhere (0 is the legacy default stream).
  constexpr explicit StreamRef(CUstream handle) noexcept : handle_(handle) {}
  StreamRef(const Stream& stream) noexcept;  // NOLINT: implicit, as views are
  StreamRef(int) = delete;
  StreamRef(std::nullptr_t) = delete;

  constexpr CUstream handle() const noexcept { return handle_; }

  static StreamRef legacy_default() noexcept { return StreamRef(CU_STREAM_LEGACY); }
  static StreamRef per_thread_default() noexcept { return StreamRef(CU_STREAM_PER_THREAD); }

 private:
  CUstream handle_;
};

}  // namespace cubind

// Private helpers shared by the runtime owners (Device, Context, Stream, Event,
// Graph, the memory resources and Buffer). Not installed.
#pragma once

#include <cuda.h>

#include <string>

#include "cubind/stream.hpp"
#include "owner_support.hpp"

namespace cubind::detail {

// cuInit(0), once per process; a failure is rethrown by every later call.
void init_driver();

// The primary context of the device with this ordinal: retained on first use,
// released at exit while the driver is alive.
CUcontext primary_context(int ordinal);

// The ordinal of the device a context runs on.
int context_device(CUcontext context);

// "the primary context of device 1 (0x5581...)" or "context 0x5581...".
std::string describe_context(CUcontext context);

// The null, legacy and per-thread streams: which stream they mean depends on
// the context current when they are used.
inline bool is_default_stream(CUstream handle) noexcept {
  return handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD;
}

// The context a stream belongs to; for the default streams, the current one.
// Streams cubind owns are remembered per thread, so asking again about the
// same one costs no driver call; foreign streams are always asked about.
CUcontext stream_context(StreamRef stream, const char* where);

// Kept by Stream: which handles cubind owns, so that the memo above is dropped
// when one is destroyed or released (its handle may then name a new stream).
void stream_owned(CUstream handle);
void stream_disowned(CUstream handle) noexcept;

// Throws std::invalid_argument naming both contexts unless `stream` belongs
// to `expected`.
void require_stream_context(StreamRef stream, CUcontext expected, const char* where);

// Destructors release through this: nothing may escape, and a driver that is
// shutting down (CUDA_ERROR_DEINITIALIZED) or gone is not an error there.
template <typename Release>
void release_quietly(Release&& release) noexcept {
  try {
    (void)release();
  } catch (...) {
  }
}

// A runtime owner used while null: "<where>: this <class_name> is null (moved from, released or closed)".
[[noreturn]] inline void throw_null(const char* where, const char* class_name) {
  throw_null(where, (std::string("this ") + class_name).c_str(), "moved from, released or closed");
}

}  // namespace cubind::detail

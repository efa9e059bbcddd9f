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

// The green contexts cubind made, by the CUcontext each converts to: kept by
// GreenContext, so that resource queries reach the green context and checks
// that a stream belongs to a device's primary context accept its green ones.
void green_context_made(CUcontext context, CUgreenCtx green, int ordinal);
void green_context_destroyed(CUcontext context) noexcept;
// The green context `context` was converted from, or null for any other context.
CUgreenCtx green_context_of(CUcontext context) noexcept;
// The ordinal of a green context's device, or -1 for any other context.
int green_context_device(CUcontext context) noexcept;
// True when `context` is `primary`, or a green context of primary's device:
// they share the device's memory, so a stream of either may use it.
bool shares_device_memory(CUcontext context, CUcontext primary) noexcept;

// True in the child of a fork made after init_driver (cubind::in_forked_child).
bool forked_child() noexcept;

// Destructors release through this: nothing may escape, and a driver that is
// shutting down (CUDA_ERROR_DEINITIALIZED) or gone is not an error there. In
// a forked child the driver is not called at all: the handles are the
// parent's, and the driver cannot be used there.
template <typename Release>
void release_quietly(Release&& release) noexcept {
  if (forked_child()) return;
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

// Private: which context is which. The primary contexts cubind retains, the
// green contexts it made, the context a stream belongs to (remembered for the
// streams cubind owns), and the descriptions of contexts that error messages
// use. Shared by the runtime owners (Device, Context, Stream, Event, Graph,
// the memory resources and Buffer). Not installed.
#pragma once

#include <cuda.h>

#include <string>

#include "cubind/stream.hpp"

namespace cubind::detail {

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

}  // namespace cubind::detail

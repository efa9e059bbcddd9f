// Green contexts: a context that runs on a partition of a device's SMs.
// GreenContext owns a CUgreenCtx; its context() is the CUcontext the driver
// converts it to (cuCtxFromGreenCtx), usable wherever a Context is, and its
// streams are ordinary cubind::Stream objects. Memory of the device (its
// pools, buffers) is shared with the primary context, so a stream of a green
// context is accepted wherever a stream of the device's primary context is.
#pragma once

#include <cuda.h>

#include <vector>

#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/device_resources.hpp"
#include "cubind/stream.hpp"

namespace cubind {

class GreenContext {
 public:
  // A green context on `device` with the SMs of `resources`
  // (cuDevResourceGenerateDesc, then cuGreenCtxCreate with
  // CU_GREEN_CTX_DEFAULT_STREAM). Several resources must be groups (or the
  // remainder) of one split. It is not made current.
  // @throws std::invalid_argument for no resources, an empty one (a
  // remainder of 0 SMs) or one of another device; CudaError.
  GreenContext(const Device& device, const std::vector<SmResource>& resources);

  GreenContext(GreenContext&& other) noexcept;
  GreenContext& operator=(GreenContext&& other) noexcept;
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;
  // cuGreenCtxDestroy. The driver destroys no stream with it: every Stream of
  // this context must be destroyed first (a stream that outlives it cannot be
  // destroyed any more, and leaks). Never throws.
  ~GreenContext();

  // Null once moved from.
  CUgreenCtx handle() const noexcept { return handle_; }

  // The context to make current, guard, or sync (cuCtxFromGreenCtx).
  // @throws std::logic_error when null.
  Context context() const;
  Device device() const;

  // The SMs this context was given (cuGreenCtxGetDevResource).
  SmResource sm_resource() const;

  // A stream of this context (cuGreenCtxStreamCreate). Green contexts take
  // non-blocking streams only.
  // @throws std::invalid_argument for non_blocking = false,
  // std::out_of_range for a priority outside the context's range, CudaError.
  Stream create_stream(StreamOptions options = {}) const;

  // Waits for all work in this context (cuCtxSynchronize).
  void sync() const;

 private:
  void require_owner(const char* where) const;

  CUgreenCtx handle_ = nullptr;
  CUcontext context_ = nullptr;
  int device_ = -1;
};

}  // namespace cubind

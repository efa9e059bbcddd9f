// A CUDA device: a cheap value naming one GPU by ordinal. Devices are never
// created or destroyed, so Device is copyable; what it owns (its primary
// context) is held by the process, not by the Device.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

#include "cubind/context.hpp"

namespace cubind {

struct ComputeCapability {
  int major;
  int minor;
};

inline bool operator==(ComputeCapability a, ComputeCapability b) noexcept {
  return a.major == b.major && a.minor == b.minor;
}
inline bool operator!=(ComputeCapability a, ComputeCapability b) noexcept { return !(a == b); }

class Device {
 public:
  // The number of devices this process sees; 0 on a machine with a driver but
  // no GPU. @throws LoaderError without a driver, CudaError when cuInit fails otherwise.
  static int count();

  // @throws std::out_of_range naming the ordinal and the count.
  static Device get(int ordinal);

  // The device of the context current on this thread.
  // @throws std::logic_error when no context is current.
  static Device current();
  // The same, or none when no context is current, or the driver cannot say
  // (cuCtxGetCurrent fails: not initialized). @throws CudaError from cuCtxGetDevice
  static std::optional<Device> current_if_any();

  CUdevice handle() const noexcept { return handle_; }
  int ordinal() const noexcept { return ordinal_; }

  // cuDeviceGetName.
  std::string name() const;
  // cuDeviceGetUuid, as "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
  std::string uuid() const;
  // cuDeviceGetPCIBusId: "0000:3b:00.0".
  std::string pci_bus_id() const;
  ComputeCapability compute_capability() const;
  // "sm_90": the architecture to compile for.
  std::string arch() const;
  // cuDeviceGetAttribute.
  int attribute(CUdevice_attribute attribute) const;
  // cuDeviceTotalMem, in bytes.
  std::size_t total_memory() const;

  // The device's primary context, retained once per process on first use and
  // released at exit while the driver is still alive. Streams, events, pools
  // and buffers live in it: those with static storage duration must be
  // destroyed (or released) before exit, as they would otherwise outlive it.
  Context primary_context() const;

  // Makes the primary context current on the calling thread (cuCtxSetCurrent),
  // for code that relies on a current context. The change is permanent; use a
  // ContextGuard for a scoped one.
  void set_current() const;

  // Waits for all work on the primary context (cuCtxSynchronize).
  void sync() const;

  // Whether this device can read and write memory of `peer` (cuDeviceCanAccessPeer).
  bool can_access_peer(const Device& peer) const;
  // Lets this device's primary context access memory of `peer`'s
  // (cuCtxEnablePeerAccess). Idempotent: enabling twice is not an error.
  // @throws std::invalid_argument when peer is this device.
  void enable_peer_access(const Device& peer) const;
  // cuCtxDisablePeerAccess. Idempotent, as enable_peer_access.
  void disable_peer_access(const Device& peer) const;

  friend bool operator==(const Device& a, const Device& b) noexcept { return a.ordinal_ == b.ordinal_; }
  friend bool operator!=(const Device& a, const Device& b) noexcept { return !(a == b); }

 private:
  Device(CUdevice handle, int ordinal) noexcept : handle_(handle), ordinal_(ordinal) {}

  CUdevice handle_;
  int ordinal_;
};

}  // namespace cubind

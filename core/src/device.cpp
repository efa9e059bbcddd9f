#include "cubind/device.hpp"

#include <optional>
#include <stdexcept>
#include <string>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"

namespace cubind {

int Device::count() {
  try {
    detail::init_driver();
  } catch (const CudaError& e) {
    // A driver without a GPU fails cuInit this way; that is "no devices", not an error.
    if (e.status() == CUDA_ERROR_NO_DEVICE) return 0;
    throw;
  }
  int n = 0;
  detail::check(raw::cuDeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

Device Device::get(int ordinal) {
  if (ordinal < 0) {
    throw std::out_of_range("cubind::Device::get: device ordinal " + std::to_string(ordinal) + " is negative");
  }
  const int n = count();
  if (ordinal >= n) {
    throw std::out_of_range("cubind::Device::get: device ordinal " + std::to_string(ordinal) +
                            " is out of range: this process sees " + std::to_string(n) +
                            (n == 1 ? " device" : " devices") +
                            (n > 0 ? " (ordinals 0 to " + std::to_string(n - 1) + ")" : std::string()));
  }
  CUdevice handle = 0;
  detail::check(raw::cuDeviceGet(&handle, ordinal), "cuDeviceGet");
  return Device(handle, ordinal);
}

Device Device::current() {
  const std::optional<Context> context = Context::current();
  if (!context) {
    throw std::logic_error(
        "cubind::Device::current: no CUDA context is current on this thread; call Device::set_current() or "
        "hold a ContextGuard");
  }
  return context->device();
}

std::optional<Device> Device::current_if_any() {
  CUcontext context = nullptr;
  if (raw::cuCtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) return std::nullopt;
  CUdevice device = 0;
  detail::check(raw::cuCtxGetDevice(&device), "cuCtxGetDevice");
  // A CUdevice is the device's ordinal.
  return Device(device, static_cast<int>(device));
}

std::string Device::name() const {
  char buffer[256] = {};
  detail::check(raw::cuDeviceGetName(buffer, sizeof buffer, handle_), "cuDeviceGetName");
  return buffer;
}

std::string Device::uuid() const {
  CUuuid id{};
  detail::check(raw::cuDeviceGetUuid(&id, handle_), "cuDeviceGetUuid");
  static const char* const kHex = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(id.bytes[i]);
    text += kHex[byte >> 4];
    text += kHex[byte & 0xf];
  }
  return text;
}

std::string Device::pci_bus_id() const {
  char buffer[64] = {};
  detail::check(raw::cuDeviceGetPCIBusId(buffer, sizeof buffer, handle_), "cuDeviceGetPCIBusId");
  return buffer;
}

int Device::attribute(CUdevice_attribute attribute) const {
  int value = 0;
  detail::check(raw::cuDeviceGetAttribute(&value, attribute, handle_), "cuDeviceGetAttribute");
  return value;
}

ComputeCapability Device::compute_capability() const {
  return {attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)};
}

std::string Device::arch() const {
  const ComputeCapability cc = compute_capability();
  return "sm_" + std::to_string(cc.major) + std::to_string(cc.minor);
}

std::size_t Device::total_memory() const {
  std::size_t bytes = 0;
  detail::check(raw::cuDeviceTotalMem(&bytes, handle_), "cuDeviceTotalMem");
  return bytes;
}

Context Device::primary_context() const { return Context::from_native_handle(detail::primary_context(ordinal_)); }

void Device::set_current() const { primary_context().set_current(); }

void Device::sync() const { primary_context().sync(); }

bool Device::can_access_peer(const Device& peer) const {
  if (peer == *this) return true;
  int can = 0;
  detail::check(raw::cuDeviceCanAccessPeer(&can, handle_, peer.handle_), "cuDeviceCanAccessPeer");
  return can != 0;
}

namespace {
void require_other(const Device& self, const Device& peer, const char* where) {
  if (peer == self) {
    throw std::invalid_argument(std::string(where) + ": device " + std::to_string(peer.ordinal()) +
                                " is this device; a device always accesses its own memory");
  }
}
}  // namespace

void Device::enable_peer_access(const Device& peer) const {
  require_other(*this, peer, "cubind::Device::enable_peer_access");
  const CUcontext peer_context = detail::primary_context(peer.ordinal_);
  ContextGuard guard(*this);
  const CUresult status = raw::cuCtxEnablePeerAccess(peer_context, 0);
  if (status != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) detail::check(status, "cuCtxEnablePeerAccess");
}

void Device::disable_peer_access(const Device& peer) const {
  require_other(*this, peer, "cubind::Device::disable_peer_access");
  const CUcontext peer_context = detail::primary_context(peer.ordinal_);
  ContextGuard guard(*this);
  const CUresult status = raw::cuCtxDisablePeerAccess(peer_context);
  if (status != CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) detail::check(status, "cuCtxDisablePeerAccess");
}

}  // namespace cubind

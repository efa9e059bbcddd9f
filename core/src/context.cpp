#include "cubind/context.hpp"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"

namespace cubind {

namespace detail {

namespace {

// One retain of each device's primary context per process, taken on first use
// and given back by the destructor at exit.
class PrimaryContexts {
 public:
  PrimaryContexts() {
    // Construction follows cuInit, so this object's destructor is registered
    // after, and therefore runs before, any exit handler the driver installed
    // while initializing: the driver is normally still alive to release into.
    init_driver();
    check(raw::cuDeviceGetCount(&count_), "cuDeviceGetCount");
    slots_ = std::make_unique<std::atomic<CUcontext>[]>(static_cast<std::size_t>(count_));
    devices_.assign(static_cast<std::size_t>(count_), 0);
  }

  ~PrimaryContexts() {
    if (kept_at_exit.load(std::memory_order_relaxed)) return;
    for (int i = 0; i < count_; ++i) {
      if (slots_[i].load(std::memory_order_acquire) == nullptr) continue;
      // After the driver's own teardown this returns CUDA_ERROR_DEINITIALIZED,
      // which is exactly the "already gone" case to ignore.
      release_quietly([&] { return raw::cuDevicePrimaryCtxRelease(devices_[i]); });
    }
  }

  static inline std::atomic<bool> kept_at_exit{false};

  PrimaryContexts(const PrimaryContexts&) = delete;
  PrimaryContexts& operator=(const PrimaryContexts&) = delete;

  CUcontext get(int ordinal) {
    if (ordinal < 0 || ordinal >= count_) {
      throw std::out_of_range("cubind: device ordinal " + std::to_string(ordinal) + " is out of range: " +
                              std::to_string(count_) + " devices");
    }
    CUcontext context = slots_[ordinal].load(std::memory_order_acquire);
    if (context != nullptr) return context;
    std::lock_guard<std::mutex> lock(mutex_);
    context = slots_[ordinal].load(std::memory_order_relaxed);
    if (context != nullptr) return context;
    CUdevice device = 0;
    check(raw::cuDeviceGet(&device, ordinal), "cuDeviceGet");
    check(raw::cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    devices_[ordinal] = device;
    slots_[ordinal].store(context, std::memory_order_release);
    return context;
  }

  int ordinal_of(CUcontext context) const noexcept {
    for (int i = 0; i < count_; ++i) {
      if (slots_[i].load(std::memory_order_acquire) == context) return i;
    }
    return -1;
  }

 private:
  std::mutex mutex_;
  int count_ = 0;
  std::unique_ptr<std::atomic<CUcontext>[]> slots_;
  std::vector<CUdevice> devices_;
};

PrimaryContexts& primary_contexts() {
  static PrimaryContexts contexts;
  return contexts;
}

std::string hex(const void* pointer) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%p", pointer);
  return buffer;
}

}  // namespace

CUcontext primary_context(int ordinal) { return primary_contexts().get(ordinal); }

int context_device(CUcontext context) {
  const int primary = primary_contexts().ordinal_of(context);
  if (primary >= 0) return primary;
  const int green = green_context_device(context);
  if (green >= 0) return green;
  CUdevice device = 0;
  {
    ContextGuard guard(Context::from_native_handle(context));
    check(raw::cuCtxGetDevice(&device), "cuCtxGetDevice");
  }
  int count = 0;
  check(raw::cuDeviceGetCount(&count), "cuDeviceGetCount");
  for (int i = 0; i < count; ++i) {
    CUdevice candidate = 0;
    check(raw::cuDeviceGet(&candidate, i), "cuDeviceGet");
    if (candidate == device) return i;
  }
  throw std::logic_error("cubind: context " + hex(context) + " runs on a device this process cannot see");
}

std::string describe_context(CUcontext context) {
  if (context == nullptr) return "no context";
  const int primary = primary_contexts().ordinal_of(context);
  if (primary >= 0) return "the primary context of device " + std::to_string(primary) + " (" + hex(context) + ")";
  const int green = green_context_device(context);
  if (green >= 0) return "a green context of device " + std::to_string(green) + " (" + hex(context) + ")";
  try {
    return "context " + hex(context) + " (a non-primary context of device " + std::to_string(context_device(context)) + ")";
  } catch (const std::exception&) {
    return "context " + hex(context);
  }
}

}  // namespace detail

Context Context::from_native_handle(CUcontext handle) {
  if (handle == nullptr) throw std::invalid_argument("cubind::Context::from_native_handle: the handle is null");
  return Context(handle);
}

std::optional<Context> Context::current() {
  CUcontext handle = nullptr;
  const CUresult status = raw::cuCtxGetCurrent(&handle);
  // Before cuInit no context can be current; that is an answer, not an error.
  if (status == CUDA_ERROR_NOT_INITIALIZED) return std::nullopt;
  detail::check(status, "cuCtxGetCurrent");
  if (handle == nullptr) return std::nullopt;
  return Context(handle);
}

Context Context::primary(const Device& device) { return device.primary_context(); }

Device Context::device() const { return Device::get(detail::context_device(handle_)); }

void Context::sync() const {
  ContextGuard guard(*this);
  detail::check(raw::cuCtxSynchronize(), "cuCtxSynchronize");
}

void Context::set_current() const {
  // Replacing the current context with itself changes nothing, and reading
  // the current one (a thread-local) costs the driver less than setting it:
  // the usual call, made at the top of every library entry point, is the
  // one that finds it current already.
  CUcontext current = nullptr;
  if (raw::cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == handle_) return;
  detail::check(raw::cuCtxSetCurrent(handle_), "cuCtxSetCurrent");
}

void Context::clear_current() { detail::check(raw::cuCtxSetCurrent(nullptr), "cuCtxSetCurrent"); }

ContextGuard::ContextGuard(const Context& context) { enter(context.handle()); }

ContextGuard::ContextGuard(const Device& device) { enter(detail::primary_context(device.ordinal())); }

void ContextGuard::enter(CUcontext context) {
  CUcontext current = nullptr;
  detail::check(raw::cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current == context) return;
  detail::check(raw::cuCtxPushCurrent(context), "cuCtxPushCurrent");
  pushed_ = true;
}

ContextGuard::~ContextGuard() {
  if (!pushed_) return;
  detail::release_quietly([] {
    CUcontext popped = nullptr;
    return raw::cuCtxPopCurrent(&popped);
  });
}

void keep_primary_contexts_at_exit() noexcept {
  detail::PrimaryContexts::kept_at_exit.store(true, std::memory_order_relaxed);
}

}  // namespace cubind

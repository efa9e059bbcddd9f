#include "cubind/green_context.hpp"

#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace detail {

namespace {

struct GreenEntry {
  CUgreenCtx green;
  int ordinal;
};

std::mutex g_green_mutex;
std::unordered_map<CUcontext, GreenEntry>& green_contexts() {
  // Never destroyed: a GreenContext with static storage may be destroyed
  // after any other static object.
  static auto* contexts = new std::unordered_map<CUcontext, GreenEntry>();
  return *contexts;
}

}  // namespace

void green_context_made(CUcontext context, CUgreenCtx green, int ordinal) {
  std::lock_guard<std::mutex> lock(g_green_mutex);
  green_contexts()[context] = GreenEntry{green, ordinal};
}

void green_context_destroyed(CUcontext context) noexcept {
  std::lock_guard<std::mutex> lock(g_green_mutex);
  green_contexts().erase(context);
}

CUgreenCtx green_context_of(CUcontext context) noexcept {
  std::lock_guard<std::mutex> lock(g_green_mutex);
  const auto found = green_contexts().find(context);
  return found == green_contexts().end() ? nullptr : found->second.green;
}

int green_context_device(CUcontext context) noexcept {
  std::lock_guard<std::mutex> lock(g_green_mutex);
  const auto found = green_contexts().find(context);
  return found == green_contexts().end() ? -1 : found->second.ordinal;
}

bool shares_device_memory(CUcontext context, CUcontext primary) noexcept {
  if (context == primary) return true;
  const int ordinal = green_context_device(context);
  if (ordinal < 0) return false;
  try {
    return primary_context(ordinal) == primary;
  } catch (...) {
    return false;
  }
}

}  // namespace detail

namespace {

[[noreturn]] void throw_bad_resource(std::size_t index, const std::string& why) {
  throw std::invalid_argument("cubind::GreenContext::GreenContext: resources[" + std::to_string(index) + "] " + why);
}

}  // namespace

GreenContext::GreenContext(const Device& device, const std::vector<SmResource>& resources) {
  if (resources.empty()) {
    throw std::invalid_argument(
        "cubind::GreenContext::GreenContext: no resources; pass the SmResource groups of a split");
  }
  std::vector<CUdevResource> natives;
  natives.reserve(resources.size());
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const SmResource& resource = resources[i];
    if (resource.sm_count() == 0) throw_bad_resource(i, "holds 0 SMs (an empty remainder of a split)");
    if (resource.device_ordinal() >= 0 && resource.device_ordinal() != device.ordinal()) {
      throw_bad_resource(i, "is of device " + std::to_string(resource.device_ordinal()) + ", not of device " +
                                std::to_string(device.ordinal()));
    }
    natives.push_back(resource.native());
  }
  // The driver retains the primary context for the green one; having it
  // retained already spares it a costly initialization.
  detail::primary_context(device.ordinal());
  CUdevResourceDesc desc = nullptr;
  detail::check(raw::cuDevResourceGenerateDesc(&desc, natives.data(), static_cast<unsigned int>(natives.size())),
                "cuDevResourceGenerateDesc");
  CUgreenCtx handle = nullptr;
  detail::check(raw::cuGreenCtxCreate(&handle, desc, device.handle(), CU_GREEN_CTX_DEFAULT_STREAM),
                "cuGreenCtxCreate");
  CUcontext context = nullptr;
  const CUresult converted = raw::cuCtxFromGreenCtx(&context, handle);
  if (converted != CUDA_SUCCESS) {
    raw::cuGreenCtxDestroy(handle);
    detail::check(converted, "cuCtxFromGreenCtx");
  }
  handle_ = handle;
  context_ = context;
  device_ = device.ordinal();
  detail::green_context_made(context, handle, device_);
}

GreenContext::GreenContext(GreenContext&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      context_(std::exchange(other.context_, nullptr)),
      device_(std::exchange(other.device_, -1)) {}

GreenContext& GreenContext::operator=(GreenContext&& other) noexcept {
  if (this != &other) {
    GreenContext old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

GreenContext::~GreenContext() {
  if (handle_ == nullptr) return;
  detail::green_context_destroyed(context_);
  detail::release_quietly([this] { return raw::cuGreenCtxDestroy(handle_); });
}

void GreenContext::require_owner(const char* where) const {
  if (handle_ == nullptr) detail::throw_null(where, "GreenContext");
}

Context GreenContext::context() const {
  require_owner("cubind::GreenContext::context");
  return Context::from_native_handle(context_);
}

Device GreenContext::device() const {
  require_owner("cubind::GreenContext::device");
  return Device::get(device_);
}

SmResource GreenContext::sm_resource() const {
  require_owner("cubind::GreenContext::sm_resource");
  CUdevResource resource{};
  detail::check(raw::cuGreenCtxGetDevResource(handle_, &resource, CU_DEV_RESOURCE_TYPE_SM),
                "cuGreenCtxGetDevResource");
  return SmResource::from_native(resource, device_);
}

Stream GreenContext::create_stream(StreamOptions options) const {
  constexpr const char* where = "cubind::GreenContext::create_stream";
  require_owner(where);
  if (!options.non_blocking) {
    throw std::invalid_argument(std::string(where) +
                                ": non_blocking is false; a green context's streams are non-blocking "
                                "(cuGreenCtxStreamCreate takes CU_STREAM_NON_BLOCKING only)");
  }
  int priority = 0;
  if (options.priority) {
    // The driver would clamp a priority out of range; cubind says so, as
    // Stream's constructor does.
    int least = 0;
    int greatest = 0;
    {
      ContextGuard guard(Context::from_native_handle(context_));
      detail::check(raw::cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
    }
    if (*options.priority < greatest || *options.priority > least) {
      throw std::out_of_range(std::string(where) + ": priority " + std::to_string(*options.priority) +
                              " is outside the range of device " + std::to_string(device_) + ", " +
                              std::to_string(greatest) + " (highest) to " + std::to_string(least) + " (lowest)");
    }
    priority = *options.priority;
  }
  CUstream handle = nullptr;
  detail::check(raw::cuGreenCtxStreamCreate(&handle, handle_, CU_STREAM_NON_BLOCKING, priority),
                "cuGreenCtxStreamCreate");
  try {
    return Stream::from_native_handle(handle);
  } catch (...) {
    raw::cuStreamDestroy(handle);
    throw;
  }
}

void GreenContext::sync() const { context().sync(); }

}  // namespace cubind

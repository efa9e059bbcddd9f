#include "cubind/event.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "cubind/stream.hpp"
#include "context_registry.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

CUevent create_event(const Device& device, unsigned int flags) {
  ContextGuard guard(device);
  CUevent handle = nullptr;
  detail::check(raw::cuEventCreate(&handle, flags), "cuEventCreate");
  return handle;
}

CUevent create_event(const Context& context, unsigned int flags) {
  ContextGuard guard(context);
  CUevent handle = nullptr;
  detail::check(raw::cuEventCreate(&handle, flags), "cuEventCreate");
  return handle;
}

void require_handle(CUevent handle, const char* where) {
  if (handle == nullptr) throw std::invalid_argument(std::string(where) + ": the handle is null");
}

unsigned int event_flags(bool timing, bool blocking_sync, bool interprocess) {
  unsigned int flags = timing ? 0u : static_cast<unsigned int>(CU_EVENT_DISABLE_TIMING);
  if (blocking_sync) flags |= CU_EVENT_BLOCKING_SYNC;
  if (interprocess) flags |= CU_EVENT_INTERPROCESS;
  return flags;
}

}  // namespace

void EventRef::require_event(const char* where) const {
  if (handle_ == nullptr) detail::throw_null(where, "event");
}

void EventRef::record(StreamRef stream) const {
  require_event("cubind::EventRef::record");
  detail::require_stream(stream, "cubind::EventRef::record");
  detail::check(raw::cuEventRecord(handle_, stream.handle()), "cuEventRecord");
}

bool EventRef::query() const {
  require_event("cubind::EventRef::query");
  const CUresult status = raw::cuEventQuery(handle_);
  if (status == CUDA_ERROR_NOT_READY) return false;
  detail::check(status, "cuEventQuery");
  return true;
}

void EventRef::sync() const {
  require_event("cubind::EventRef::sync");
  detail::check(raw::cuEventSynchronize(handle_), "cuEventSynchronize");
}

Event::Event(const Device& device, EventOptions options)
    : EventRef(create_event(device, event_flags(false, options.blocking_sync, options.interprocess))),
      context_(detail::primary_context(device.ordinal())) {}

Event::Event(const Context& context, EventOptions options)
    : EventRef(create_event(context, event_flags(false, options.blocking_sync, options.interprocess))),
      context_(context.handle()) {}

Event Event::from_native_handle(CUevent handle) {
  require_handle(handle, "cubind::Event::from_native_handle");
  return Event(handle, nullptr);
}

Event Event::from_ipc_handle(const Device& device, const CUipcEventHandle& ipc_handle) {
  ContextGuard guard(device);
  CUevent handle = nullptr;
  detail::check(raw::cuIpcOpenEventHandle(&handle, ipc_handle), "cuIpcOpenEventHandle");
  return Event(handle, detail::primary_context(device.ordinal()));
}

Event::Event(Event&& other) noexcept
    : EventRef(std::exchange(other.handle_, nullptr)), context_(std::exchange(other.context_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

Event::~Event() {
  if (handle_ != nullptr) detail::release_quietly([this] { return raw::cuEventDestroy(handle_); });
}

CUevent Event::release() {
  require_event("cubind::Event::release");
  context_ = nullptr;
  return std::exchange(handle_, nullptr);
}

CUipcEventHandle Event::ipc_handle() const {
  require_event("cubind::Event::ipc_handle");
  std::optional<ContextGuard> guard;
  if (context_ != nullptr) guard.emplace(Context::from_native_handle(context_));
  CUipcEventHandle handle{};
  detail::check(raw::cuIpcGetEventHandle(&handle, handle_), "cuIpcGetEventHandle");
  return handle;
}

TimedEvent::TimedEvent(const Device& device, bool blocking_sync)
    : Event(create_event(device, event_flags(true, blocking_sync, false)), detail::primary_context(device.ordinal())) {}

TimedEvent::TimedEvent(const Context& context, bool blocking_sync)
    : Event(create_event(context, event_flags(true, blocking_sync, false)), context.handle()) {}

TimedEvent TimedEvent::from_native_handle(CUevent handle) {
  require_handle(handle, "cubind::TimedEvent::from_native_handle");
  return TimedEvent(handle, nullptr);
}

TimedEvent::Duration operator-(const TimedEvent& end, const TimedEvent& start) {
  end.require_event("cubind::operator-(TimedEvent, TimedEvent)");
  start.require_event("cubind::operator-(TimedEvent, TimedEvent)");
  float milliseconds = 0.0f;
  detail::check(raw::cuEventElapsedTime(&milliseconds, start.handle(), end.handle()), "cuEventElapsedTime");
  return TimedEvent::Duration(milliseconds);
}

}  // namespace cubind

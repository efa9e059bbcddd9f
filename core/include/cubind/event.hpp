// Events. EventRef is a non-owning view; Event owns a CUevent created without
// timing; TimedEvent owns one created with timing, and only a TimedEvent
// subtracts to a duration, so "elapsed time of an event without timing data"
// cannot be written.
#pragma once

#include <cuda.h>

#include <chrono>
#include <cstddef>

namespace cubind {

class Context;
class Device;
class StreamRef;

class EventRef {
 public:
  // A view of an event owned elsewhere.
  constexpr explicit EventRef(CUevent handle) noexcept : handle_(handle) {}
  EventRef(int) = delete;
  EventRef(std::nullptr_t) = delete;

  CUevent handle() const noexcept { return handle_; }

  // Captures the work submitted to `stream` so far (cuEventRecord).
  // @throws std::logic_error for a null event or stream, CudaError.
  void record(StreamRef stream) const;
  // True once the captured work has completed (cuEventQuery).
  bool query() const;
  // Blocks until the captured work has completed (cuEventSynchronize).
  void sync() const;

  friend bool operator==(const EventRef& a, const EventRef& b) noexcept { return a.handle_ == b.handle_; }
  friend bool operator!=(const EventRef& a, const EventRef& b) noexcept { return !(a == b); }

 protected:
  // Names the class and method in the std::logic_error a null event raises.
  void require_event(const char* where) const;

  CUevent handle_;
};

struct EventOptions {
  // Waiters block on an OS primitive instead of spinning (CU_EVENT_BLOCKING_SYNC).
  bool blocking_sync = false;
  // Shareable with other processes through ipc_handle() (CU_EVENT_INTERPROCESS).
  bool interprocess = false;
};

// An owned event without timing data: the cheapest kind to record and wait on.
class Event : public EventRef {
 public:
  // cuEventCreate in the device's primary context.
  explicit Event(const Device& device, EventOptions options = {});
  // cuEventCreate in `context`: for a stream of a green context, its context.
  explicit Event(const Context& context, EventOptions options = {});

  // Takes ownership of an event created elsewhere; ~Event destroys it.
  // @throws std::invalid_argument for a null handle.
  static Event from_native_handle(CUevent handle);

  // Opens an event another process exported with ipc_handle(); the result is
  // owned and may be waited on and queried, not timed.
  static Event from_ipc_handle(const Device& device, const CUipcEventHandle& handle);

  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  // cuEventDestroy; errors, including a driver already shut down, are ignored.
  ~Event();

  // Gives up ownership; the Event becomes null.
  // @throws std::logic_error when already null.
  CUevent release();

  // The handle to pass to another process (cuIpcGetEventHandle), taken in the
  // event's context (the current one for an adopted event).
  // @throws CudaError unless the event was created with interprocess = true.
  CUipcEventHandle ipc_handle() const;

 protected:
  Event(CUevent handle, CUcontext context) noexcept : EventRef(handle), context_(context) {}

 private:
  friend class Stream;

  CUcontext context_;  // where it was created; null when adopted
};

// An owned event that records a timestamp. Subtracting two gives the time the
// device spent between them.
class TimedEvent : public Event {
 public:
  using Duration = std::chrono::duration<float, std::milli>;

  explicit TimedEvent(const Device& device, bool blocking_sync = false);
  explicit TimedEvent(const Context& context, bool blocking_sync = false);

  // Takes ownership; the event must have been created without CU_EVENT_DISABLE_TIMING.
  static TimedEvent from_native_handle(CUevent handle);

  // The device time from `start` to `end` (cuEventElapsedTime), in
  // milliseconds with about half a microsecond's resolution. Both must have
  // completed. @throws CudaError (CUDA_ERROR_NOT_READY) otherwise.
  friend Duration operator-(const TimedEvent& end, const TimedEvent& start);

 private:
  TimedEvent(CUevent handle, CUcontext context) noexcept : Event(handle, context) {}
};

}  // namespace cubind

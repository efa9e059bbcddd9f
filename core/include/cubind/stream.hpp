// Streams: Stream owns a CUstream; StreamRef is a cheap non-owning view that
// every stream-ordered call takes, so a Stream, a foreign CUstream and the
// legacy or per-thread default stream can all be passed.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "cubind/context.hpp"
#include "cubind/device.hpp"
#include "cubind/event.hpp"
#include "cubind/graph.hpp"

namespace cubind {

class Stream;

class StreamRef {
 public:
  // A view of a stream owned elsewhere (0 is the legacy default stream).
  constexpr explicit StreamRef(CUstream handle) noexcept : handle_(handle) {}
  StreamRef(const Stream& stream) noexcept;  // NOLINT: implicit, as views are
  StreamRef(int) = delete;
  StreamRef(std::nullptr_t) = delete;

  constexpr CUstream handle() const noexcept { return handle_; }

  static StreamRef legacy_default() noexcept { return StreamRef(CU_STREAM_LEGACY); }
  static StreamRef per_thread_default() noexcept { return StreamRef(CU_STREAM_PER_THREAD); }

  // The calls below work on any stream, owned by cubind or not. A default
  // stream means the one of the context current on the calling thread; with
  // none current, the driver refuses it (CudaError). Each throws
  // std::logic_error, naming the call, for the StreamRef of a null Stream.

  // Blocks until all work submitted so far has completed (cuStreamSynchronize).
  // @throws CudaError
  void sync() const;
  // True when all work submitted so far has completed; false for
  // CUDA_ERROR_NOT_READY (cuStreamQuery). @throws CudaError for any other status
  bool query() const;
  // cuStreamGetPriority: lower numbers run first. @throws CudaError
  int priority() const;
  // Whether the stream does not synchronize with the legacy default stream
  // (CU_STREAM_NON_BLOCKING in cuStreamGetFlags). @throws CudaError
  bool is_non_blocking() const;

  // The stream's context (cuStreamGetCtx); for a default stream, the current one.
  // @throws CudaError, e.g. for a default stream with no context current
  Context context() const;
  // The same, or none where the driver cannot say (a default stream with no
  // context current): any failure of cuStreamGetCtx is an answer here.
  std::optional<Context> context_if_known() const;

  // Work submitted after this call waits for the event (cuStreamWaitEvent).
  // @throws std::logic_error for a null event, CudaError
  void wait(EventRef event) const;
  // Work submitted after this call waits for the work submitted to `other`
  // so far, through a temporary event recorded on `other`, made in `other`'s
  // context. A default `other` is taken to be the one of this stream's
  // context (of the current context when this is a default stream too).
  // Waiting on itself does nothing. @throws CudaError
  void wait(StreamRef other) const;

  // Queues fn(data) to run on a driver thread after the work submitted so far
  // (cuLaunchHostFunc); later work waits for it. `data` stays the caller's:
  // it must live until fn has run (for every launch of a graph this stream
  // is capturing). fn must not call CUDA. Stream::launch_host_func takes any
  // C++ callable and keeps it alive itself.
  // @throws std::invalid_argument for a null fn, CudaError
  void launch_host_func(CUhostFn fn, void* data) const;

  // cuStreamBeginCapture: work submitted from now on is recorded, not run.
  // @throws CudaError
  void begin_capture(CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) const;
  // cuStreamEndCapture: the recorded work as an owned graph, which
  // Graph::instantiate() instantiates in this stream's context (when known).
  // @throws CudaError (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) when an illegal
  // call during the capture invalidated it
  Graph end_capture() const;
  // True from begin_capture to end_capture, even once the capture is
  // invalidated (cuStreamIsCapturing). @throws CudaError
  bool is_capturing() const;

 private:
  CUstream handle_;
};

// Makes `stream`'s context current for a scope, when the driver can say which
// (StreamRef::context_if_known), and restores the one current before; with no
// answer (a default stream, no context current) it changes nothing. For calls
// that take their context from the current one, such as those on raw
// addresses (memory.hpp): so that they work on any thread, with no
// set_current() first. A ContextGuard underneath, costing what it does.
class StreamContextGuard {
 public:
  // @throws std::logic_error for the StreamRef of a null Stream, CudaError.
  explicit StreamContextGuard(StreamRef stream);

  StreamContextGuard(const StreamContextGuard&) = delete;
  StreamContextGuard& operator=(const StreamContextGuard&) = delete;

 private:
  std::optional<ContextGuard> guard_;
};

namespace detail {

// What a null (moved-from or released) Stream converts to. A null CUstream
// would be read by CUDA as the legacy default stream, so a null Stream would
// silently run work there; this value is no stream at all, and every cubind
// call taking a StreamRef rejects it with std::logic_error.
inline CUstream invalid_stream() noexcept { return reinterpret_cast<CUstream>(~std::uintptr_t{0}); }

// Throws std::logic_error, naming `where` ("cubind::Buffer::fill"), for the
// StreamRef of a null Stream. For every cubind call that takes a StreamRef.
void require_stream(StreamRef stream, const char* where);

// A callable queued by Stream::launch_host_func, type-erased so that move-only
// callables are accepted.
class HostCallback {
 public:
  virtual ~HostCallback() = default;
  virtual void run() = 0;
};

template <typename F>
class HostCallbackOf final : public HostCallback {
 public:
  explicit HostCallbackOf(F&& f) : f_(std::move(f)) {}
  explicit HostCallbackOf(const F& f) : f_(f) {}
  void run() override { f_(); }

 private:
  F f_;
};

// Exceptions thrown by a stream's host callbacks, shared with the callbacks
// still in flight (they may outlive the Stream).
struct HostCallbackErrors;

}  // namespace detail

struct StreamOptions {
  // Does not synchronize with the legacy default stream (CU_STREAM_NON_BLOCKING).
  bool non_blocking = true;
  // Lower numbers run first; unset is the context's default priority.
  // Checked against cuCtxGetStreamPriorityRange.
  std::optional<int> priority;
};

class Stream {
 public:
  // cuStreamCreateWithPriority in the device's primary context.
  // @throws std::out_of_range for a priority outside the device's range, CudaError.
  explicit Stream(const Device& device, StreamOptions options = {});

  // Takes ownership of a stream created elsewhere; ~Stream destroys it. For a
  // non-owning view of a foreign stream, use StreamRef.
  // @throws std::invalid_argument for the null, legacy or per-thread default stream.
  static Stream from_native_handle(CUstream handle);

  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  // cuStreamDestroy, which returns at once: queued work still runs, and host
  // callbacks queued on it stay alive until they have run. Never throws.
  ~Stream();

  // Null once moved from or released (then a StreamRef of it is rejected by
  // every stream-ordered call).
  CUstream handle() const noexcept { return handle_; }
  // Gives up ownership. @throws std::logic_error when already null.
  CUstream release();

  // The stream's context (cuStreamGetCtx) and its device.
  Context context() const;
  Device device() const;
  int priority() const;
  bool is_non_blocking() const;

  // True when all work submitted so far has completed (cuStreamQuery).
  bool query() const;
  // Blocks until all submitted work has completed (cuStreamSynchronize). Then
  // rethrows the first exception a host callback of this stream threw since
  // the last sync, if any; the stream itself remains usable.
  void sync() const;

  // Work submitted after this call waits for the event (cuStreamWaitEvent).
  void wait(EventRef event) const;
  // Work submitted after this call waits for the work submitted to `other`
  // so far, through an event recorded on `other`.
  void wait(StreamRef other) const;

  // An event capturing the work submitted so far.
  Event record() const;

  // Queues `f()` to run on a driver thread after the work submitted so far
  // (cuLaunchHostFunc); later work waits for it. The callable (move-only ones
  // too) is kept alive until it has run, or, when the stream is being captured,
  // as long as the graph it becomes part of. It must not call CUDA. An
  // exception it throws is caught and rethrown by the next sync() of this
  // Stream; one thrown while an earlier one is still pending, or left pending
  // when the last callback and the Stream are gone, is printed to stderr.
  template <typename F>
  void launch_host_func(F&& f) {
    using Callable = std::decay_t<F>;
    static_assert(std::is_invocable_v<Callable&>, "launch_host_func takes a callable with no arguments");
    launch_host_callback(std::make_unique<detail::HostCallbackOf<Callable>>(std::forward<F>(f)));
  }

  // cuStreamBeginCapture: work submitted from now on is recorded, not run.
  // Thread-local mode by default: only this thread's unsafe calls are refused.
  void begin_capture(CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) const;
  // cuStreamEndCapture: the recorded work as a graph.
  // @throws CudaError (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) when an illegal
  // call during the capture invalidated it.
  Graph end_capture() const;
  // True from begin_capture to end_capture, even once the capture is invalidated.
  bool is_capturing() const;

 private:
  Stream(CUstream handle, CUcontext context) noexcept;
  void launch_host_callback(std::unique_ptr<detail::HostCallback> callback) const;
  void require_owner(const char* where) const;
  CUcontext context_handle(const char* where) const;
  // The record of host callbacks' errors, made by the first callback.
  detail::HostCallbackErrors* callback_errors() const;

  CUstream handle_ = nullptr;
  // Known when created here; looked up on first need for an adopted stream,
  // possibly by two threads at once, hence atomic.
  mutable std::atomic<CUcontext> context_{nullptr};
  // Null until the first host callback, so that a stream with none
  // allocates nothing for them; counted by hand (each callback in flight
  // holds a reference).
  mutable std::atomic<detail::HostCallbackErrors*> callback_errors_{nullptr};
};

inline StreamRef::StreamRef(const Stream& stream) noexcept
    : handle_(stream.handle() != nullptr ? stream.handle() : detail::invalid_stream()) {}

}  // namespace cubind

#include "cubind/stream.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "context_registry.hpp"
#include "handle_set.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace detail {

void require_stream(StreamRef stream, const char* where) {
  if (stream.handle() == invalid_stream()) throw_null(where, "the stream", "a null cubind::Stream: moved from or released");
}

namespace {

// Bumped whenever cubind lets go of a stream, which voids every memo.
std::atomic<std::uint64_t> g_streams_epoch{0};

// The handles of the streams cubind owns. Never destroyed, so that a stream
// destroyed late in the process's exit (after this library's static
// destructors) still finds it.
HandleSet<CUstream>& g_owned = *new HandleSet<CUstream>();

struct StreamMemo {
  CUstream handle = nullptr;
  CUcontext context = nullptr;
  std::uint64_t epoch = ~std::uint64_t{0};
};
// initial-exec: read without a call into the dynamic loader (__tls_get_addr),
// which costs as much as the rest of the check; one small object fits in the
// static TLS space glibc keeps for libraries opened with dlopen.
__attribute__((tls_model("initial-exec"))) thread_local StreamMemo t_memo;

bool is_owned(CUstream handle) { return g_owned.contains(handle); }

}  // namespace

void stream_owned(CUstream handle) { g_owned.insert(handle); }

void stream_disowned(CUstream handle) noexcept {
  g_owned.erase(handle);
  g_streams_epoch.fetch_add(1, std::memory_order_acq_rel);
}

namespace {

// Asks the driver, and keeps the answer for a stream cubind owns. Out of line,
// so that the memo's hit path stays a few instructions with no frame to set up.
[[gnu::noinline, gnu::cold]] CUcontext lookup_context_slow(CUstream handle, std::uint64_t epoch) {
  CUcontext context = nullptr;
  check(raw::cuStreamGetCtx(handle, &context), "cuStreamGetCtx");
  if (!is_default_stream(handle) && is_owned(handle)) t_memo = StreamMemo{handle, context, epoch};
  return context;
}

[[gnu::noinline, gnu::cold]] void throw_wrong_context(CUcontext actual, CUcontext expected, const char* where) {
  throw std::invalid_argument(std::string(where) + ": the stream belongs to " + describe_context(actual) +
                              ", but this call works in " + describe_context(expected) +
                              "; pass a stream of that context");
}

inline CUcontext lookup_context(CUstream handle) {
  // Read before asking the driver: a stream let go of meanwhile has bumped it,
  // and the memo written then is void from the start.
  const std::uint64_t epoch = g_streams_epoch.load(std::memory_order_acquire);
  const StreamMemo& memo = t_memo;
  if (memo.handle == handle && memo.epoch == epoch) return memo.context;
  return lookup_context_slow(handle, epoch);
}

}  // namespace

CUcontext stream_context(StreamRef stream, const char* where) {
  require_stream(stream, where);
  return lookup_context(stream.handle());
}

void require_stream_context(StreamRef stream, CUcontext expected, const char* where) {
  require_stream(stream, where);
  const CUcontext actual = lookup_context(stream.handle());
  if (actual != expected && !shares_device_memory(actual, expected)) throw_wrong_context(actual, expected, where);
}

namespace {

std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace

// Made at a stream's first host callback (a stream with none allocates
// nothing for it) and shared by the Stream and each callback in flight, which
// count their references here.
struct HostCallbackErrors {
  std::atomic<std::size_t> references{1};
  std::mutex mutex;
  std::exception_ptr pending;

  void retain() noexcept { references.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Runs on a driver thread, from a callback: nowhere to throw, so the
  // exception waits for Stream::sync.
  void store(std::exception_ptr error) noexcept {
    std::lock_guard<std::mutex> lock(mutex);
    if (!pending) {
      pending = std::move(error);
      return;
    }
    std::fprintf(stderr, "cubind: a host callback threw while an earlier exception was still pending: %s\n",
                 describe_exception(error).c_str());
  }

  std::exception_ptr take() noexcept {
    std::lock_guard<std::mutex> lock(mutex);
    return std::exchange(pending, nullptr);
  }

  ~HostCallbackErrors() {
    if (pending) {
      std::fprintf(stderr, "cubind: a host callback threw and no Stream::sync() collected it: %s\n",
                   describe_exception(pending).c_str());
    }
  }
};

namespace {

struct QueuedCallback {
  QueuedCallback(std::unique_ptr<HostCallback> queued, HostCallbackErrors* shared) noexcept
      : callback(std::move(queued)), errors(shared) {
    errors->retain();
  }
  ~QueuedCallback() { errors->release(); }
  QueuedCallback(const QueuedCallback&) = delete;
  QueuedCallback& operator=(const QueuedCallback&) = delete;

  std::unique_ptr<HostCallback> callback;
  HostCallbackErrors* errors;

  void run() noexcept {
    try {
      callback->run();
    } catch (...) {
      errors->store(std::current_exception());
    }
  }
};

void CUDA_CB run_once(void* data) {
  std::unique_ptr<QueuedCallback> queued(static_cast<QueuedCallback*>(data));
  queued->run();
}

// In a graph the callback runs at every launch; the graph's user object frees it.
void CUDA_CB run_in_graph(void* data) { static_cast<QueuedCallback*>(data)->run(); }

void CUDA_CB destroy_queued(void* data) { delete static_cast<QueuedCallback*>(data); }


void wait_through_event(CUstream stream, CUcontext context, StreamRef other) {
  // The event must be made in the context of the stream it is recorded on:
  // `other`'s own, or for a default `other`, `context` (the waiting stream's),
  // else the current one.
  std::optional<ContextGuard> guard;
  if (!is_default_stream(other.handle())) {
    guard.emplace(Context::from_native_handle(stream_context(other, "cubind::StreamRef::wait")));
  } else if (context != nullptr) {
    guard.emplace(Context::from_native_handle(context));
  }
  CUevent event = nullptr;
  check(raw::cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult status = raw::cuEventRecord(event, other.handle());
  const char* failed = "cuEventRecord";
  if (status == CUDA_SUCCESS) {
    status = raw::cuStreamWaitEvent(stream, event, 0);
    failed = "cuStreamWaitEvent";
  }
  // Destroying an event still waited on is allowed: the driver keeps what the
  // wait needs until it is satisfied.
  raw::cuEventDestroy(event);
  check(status, failed);
}

}  // namespace
}  // namespace detail

Stream::Stream(const Device& device, StreamOptions options) {
  const CUcontext context = detail::primary_context(device.ordinal());
  ContextGuard guard(device);
  int priority = 0;
  if (options.priority) {
    int least = 0;
    int greatest = 0;
    detail::check(raw::cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange");
    // CUDA numbers priorities downwards: `greatest` is the smaller number.
    if (*options.priority < greatest || *options.priority > least) {
      throw std::out_of_range("cubind::Stream::Stream: priority " + std::to_string(*options.priority) +
                              " is outside the range of device " + std::to_string(device.ordinal()) + ", " +
                              std::to_string(greatest) + " (highest) to " + std::to_string(least) + " (lowest)");
    }
    priority = *options.priority;
  }
  const unsigned int flags = options.non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
  CUstream handle = nullptr;
  detail::check(raw::cuStreamCreateWithPriority(&handle, flags, priority), "cuStreamCreateWithPriority");
  try {
    detail::stream_owned(handle);  // std::bad_alloc when the table cannot grow
  } catch (...) {
    raw::cuStreamDestroy(handle);
    throw;
  }
  handle_ = handle;
  context_ = context;
}

Stream::Stream(CUstream handle, CUcontext context) noexcept : handle_(handle), context_(context) {}

Stream Stream::from_native_handle(CUstream handle) {
  if (detail::is_default_stream(handle) || handle == detail::invalid_stream()) {
    throw std::invalid_argument(
        "cubind::Stream::from_native_handle: a default stream (null, legacy or per-thread) cannot be owned; "
        "use StreamRef to refer to it");
  }
  // Registered first: when that throws (std::bad_alloc), the handle is still
  // the caller's, not destroyed by a Stream that owned it.
  detail::stream_owned(handle);
  return Stream(handle, nullptr);
}

Stream::Stream(Stream&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      context_(other.context_.exchange(nullptr)),
      callback_errors_(other.callback_errors_.exchange(nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Stream old(std::move(*this));
    handle_ = std::exchange(other.handle_, nullptr);
    context_.store(other.context_.exchange(nullptr));
    callback_errors_.store(other.callback_errors_.exchange(nullptr));
  }
  return *this;
}

Stream::~Stream() {
  if (handle_ != nullptr) {
    detail::stream_disowned(handle_);
    detail::release_quietly([this] { return raw::cuStreamDestroy(handle_); });
  }
  if (detail::HostCallbackErrors* errors = callback_errors_.load(std::memory_order_acquire)) errors->release();
}

detail::HostCallbackErrors* Stream::callback_errors() const {
  detail::HostCallbackErrors* errors = callback_errors_.load(std::memory_order_acquire);
  if (errors != nullptr) return errors;
  auto* made = new detail::HostCallbackErrors();
  if (callback_errors_.compare_exchange_strong(errors, made, std::memory_order_acq_rel, std::memory_order_acquire)) {
    return made;
  }
  delete made;  // another thread's first callback made it meanwhile: `errors` is that one
  return errors;
}

void Stream::require_owner(const char* where) const {
  if (handle_ == nullptr) detail::throw_null(where, "Stream");
}

CUcontext Stream::context_handle(const char* where) const {
  require_owner(where);
  CUcontext context = context_.load();
  if (context == nullptr) {
    context = detail::stream_context(StreamRef(handle_), where);
    context_.store(context);
  }
  return context;
}

CUstream Stream::release() {
  require_owner("cubind::Stream::release");
  context_ = nullptr;
  if (detail::HostCallbackErrors* errors = callback_errors_.exchange(nullptr)) errors->release();
  detail::stream_disowned(handle_);
  return std::exchange(handle_, nullptr);
}

Context Stream::context() const { return Context::from_native_handle(context_handle("cubind::Stream::context")); }

Device Stream::device() const { return Device::get(detail::context_device(context_handle("cubind::Stream::device"))); }

int Stream::priority() const {
  require_owner("cubind::Stream::priority");
  return StreamRef(handle_).priority();
}

bool Stream::is_non_blocking() const {
  require_owner("cubind::Stream::is_non_blocking");
  return StreamRef(handle_).is_non_blocking();
}

bool Stream::query() const {
  require_owner("cubind::Stream::query");
  return StreamRef(handle_).query();
}

void Stream::sync() const {
  require_owner("cubind::Stream::sync");
  StreamRef(handle_).sync();
  detail::HostCallbackErrors* errors = callback_errors_.load(std::memory_order_acquire);
  if (errors == nullptr) return;  // no host callback yet
  if (std::exception_ptr error = errors->take()) std::rethrow_exception(error);
}

void Stream::wait(EventRef event) const {
  require_owner("cubind::Stream::wait");
  if (event.handle() == nullptr) {
    throw std::logic_error("cubind::Stream::wait: the event is a null cubind::Event (moved from or released)");
  }
  StreamRef(handle_).wait(event);
}

void Stream::wait(StreamRef other) const {
  // Both checked before any driver call: finding this stream's context may need one.
  require_owner("cubind::Stream::wait");
  detail::require_stream(other, "cubind::Stream::wait");
  const CUcontext context = context_handle("cubind::Stream::wait");
  if (other.handle() == handle_) return;
  detail::wait_through_event(handle_, context, other);
}

Event Stream::record() const {
  const CUcontext context = context_handle("cubind::Stream::record");
  ContextGuard guard(Context::from_native_handle(context));
  CUevent handle = nullptr;
  detail::check(raw::cuEventCreate(&handle, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  Event event(handle, context);
  event.record(*this);
  return event;
}

void Stream::launch_host_callback(std::unique_ptr<detail::HostCallback> callback) const {
  const CUcontext context = context_handle("cubind::Stream::launch_host_func");
  ContextGuard guard(Context::from_native_handle(context));
  std::unique_ptr<detail::QueuedCallback> queued(new detail::QueuedCallback(std::move(callback), callback_errors()));

  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph graph = nullptr;
  detail::check(raw::cuStreamGetCaptureInfo(handle_, &capture, nullptr, &graph, nullptr, nullptr, nullptr),
                "cuStreamGetCaptureInfo");
  if (capture != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
    StreamRef(handle_).launch_host_func(detail::run_once, queued.get());
    queued.release();  // run_once frees it
    return;
  }
  // Captured, the callback runs once per graph launch, for as long as the
  // graph (and any instantiation of it) exists: the graph owns it through a
  // user object.
  CUuserObject object = nullptr;
  detail::check(raw::cuUserObjectCreate(&object, queued.get(), detail::destroy_queued, 1,
                                        CU_USER_OBJECT_NO_DESTRUCTOR_SYNC),
                "cuUserObjectCreate");
  detail::QueuedCallback* owned_by_graph = queued.release();
  const CUresult retained = raw::cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE);
  if (retained != CUDA_SUCCESS) {
    raw::cuUserObjectRelease(object, 1);
    detail::check(retained, "cuGraphRetainUserObject");
  }
  StreamRef(handle_).launch_host_func(detail::run_in_graph, owned_by_graph);
}

void Stream::begin_capture(CUstreamCaptureMode mode) const {
  require_owner("cubind::Stream::begin_capture");
  StreamRef(handle_).begin_capture(mode);
}

Graph Stream::end_capture() const {
  context_handle("cubind::Stream::end_capture");
  return StreamRef(handle_).end_capture();
}

bool Stream::is_capturing() const {
  require_owner("cubind::Stream::is_capturing");
  return StreamRef(handle_).is_capturing();
}

// StreamRef: the driver calls themselves, for any stream.

void StreamRef::sync() const {
  detail::require_stream(*this, "cubind::StreamRef::sync");
  detail::check(raw::cuStreamSynchronize(handle_), "cuStreamSynchronize");
}

bool StreamRef::query() const {
  detail::require_stream(*this, "cubind::StreamRef::query");
  const CUresult status = raw::cuStreamQuery(handle_);
  if (status == CUDA_ERROR_NOT_READY) return false;
  detail::check(status, "cuStreamQuery");
  return true;
}

int StreamRef::priority() const {
  detail::require_stream(*this, "cubind::StreamRef::priority");
  int priority = 0;
  detail::check(raw::cuStreamGetPriority(handle_, &priority), "cuStreamGetPriority");
  return priority;
}

bool StreamRef::is_non_blocking() const {
  detail::require_stream(*this, "cubind::StreamRef::is_non_blocking");
  unsigned int flags = 0;
  detail::check(raw::cuStreamGetFlags(handle_, &flags), "cuStreamGetFlags");
  return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

Context StreamRef::context() const {
  return Context::from_native_handle(detail::stream_context(*this, "cubind::StreamRef::context"));
}

std::optional<Context> StreamRef::context_if_known() const {
  detail::require_stream(*this, "cubind::StreamRef::context_if_known");
  CUcontext context = nullptr;
  if (raw::cuStreamGetCtx(handle_, &context) != CUDA_SUCCESS || context == nullptr) return std::nullopt;
  return Context::from_native_handle(context);
}

void StreamRef::wait(EventRef event) const {
  detail::require_stream(*this, "cubind::StreamRef::wait");
  if (event.handle() == nullptr) {
    throw std::logic_error("cubind::StreamRef::wait: the event is a null cubind::Event (moved from or released)");
  }
  detail::check(raw::cuStreamWaitEvent(handle_, event.handle(), 0), "cuStreamWaitEvent");
}

void StreamRef::wait(StreamRef other) const {
  detail::require_stream(*this, "cubind::StreamRef::wait");
  detail::require_stream(other, "cubind::StreamRef::wait");
  if (other.handle_ == handle_) return;
  // This stream's context matters only when `other` is a default stream.
  CUcontext context = nullptr;
  if (detail::is_default_stream(other.handle_) && !detail::is_default_stream(handle_)) {
    context = detail::stream_context(*this, "cubind::StreamRef::wait");
  }
  detail::wait_through_event(handle_, context, other);
}

void StreamRef::launch_host_func(CUhostFn fn, void* data) const {
  detail::require_stream(*this, "cubind::StreamRef::launch_host_func");
  if (fn == nullptr) throw std::invalid_argument("cubind::StreamRef::launch_host_func: the function is null");
  detail::check(raw::cuLaunchHostFunc(handle_, fn, data), "cuLaunchHostFunc");
}

void StreamRef::begin_capture(CUstreamCaptureMode mode) const {
  detail::require_stream(*this, "cubind::StreamRef::begin_capture");
  detail::check(raw::cuStreamBeginCapture(handle_, mode), "cuStreamBeginCapture");
}

Graph StreamRef::end_capture() const {
  detail::require_stream(*this, "cubind::StreamRef::end_capture");
  // Asked first: the graph remembers where to be instantiated.
  const std::optional<Context> context = context_if_known();
  CUgraph graph = nullptr;
  detail::check(raw::cuStreamEndCapture(handle_, &graph), "cuStreamEndCapture");
  return Graph(graph, context ? context->handle() : nullptr);
}

bool StreamRef::is_capturing() const {
  detail::require_stream(*this, "cubind::StreamRef::is_capturing");
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  detail::check(raw::cuStreamIsCapturing(handle_, &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

StreamContextGuard::StreamContextGuard(StreamRef stream) {
  if (const std::optional<Context> context = stream.context_if_known()) guard_.emplace(*context);
}

}  // namespace cubind

// Contexts. The contexts cubind retains are the primary contexts, one per
// device, held for the life of the process; the only ones it creates are green
// contexts, owned by GreenContext (green_context.hpp). A Context is therefore a
// copyable view, and ContextGuard is the one way cubind changes which context
// is current, for a scope.
#pragma once

#include <cuda.h>

#include <optional>

namespace cubind {

class Device;

class Context {
 public:
  // A view of a context owned elsewhere; cubind never destroys it.
  // @throws std::invalid_argument for a null handle.
  static Context from_native_handle(CUcontext handle);

  // The context current on the calling thread, if any (cuCtxGetCurrent).
  static std::optional<Context> current();

  // The primary context of `device`; the same as device.primary_context().
  static Context primary(const Device& device);

  CUcontext handle() const noexcept { return handle_; }

  // The device the context runs on.
  Device device() const;

  // Waits for all work in the context (cuCtxSynchronize, under a ContextGuard).
  void sync() const;

  // Makes this context current on the calling thread (cuCtxSetCurrent),
  // replacing the top of its context stack. The change is permanent; use a
  // ContextGuard for a scoped one. @throws CudaError
  void set_current() const;
  // Leaves no context current on the calling thread (cuCtxSetCurrent with
  // null), as before any was made current: to restore what
  // Context::current() returned as none. @throws CudaError
  static void clear_current();

  friend bool operator==(const Context& a, const Context& b) noexcept { return a.handle_ == b.handle_; }
  friend bool operator!=(const Context& a, const Context& b) noexcept { return !(a == b); }

 private:
  explicit Context(CUcontext handle) noexcept : handle_(handle) {}

  CUcontext handle_;
};

// Makes a context current on the calling thread for a scope, then restores the
// one that was current before. Pushes only when the context is not already
// current, so a guard around code that is already in the right context costs a
// single cuCtxGetCurrent.
class ContextGuard {
 public:
  explicit ContextGuard(const Context& context);
  // The device's primary context.
  explicit ContextGuard(const Device& device);
  // Pops what it pushed; never throws, and does nothing once the driver is
  // shutting down.
  ~ContextGuard();

  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;
  ContextGuard(ContextGuard&&) = delete;
  ContextGuard& operator=(ContextGuard&&) = delete;

 private:
  void enter(CUcontext context);

  bool pushed_ = false;
};

// Whether this process is the child of a fork() made after cubind initialized
// the driver. The driver cannot be used in such a child: the owners of
// cubind let go of their handles there without calling it, and the exit of
// the child releases nothing.
bool in_forked_child() noexcept;

// Leaves the primary contexts cubind retained to the driver's own teardown at
// exit, instead of releasing them (a release waits for the contexts' queued
// work). For a host whose queued work may never finish, such as a host
// callback of an interpreter that stopped its thread.
void keep_primary_contexts_at_exit() noexcept;

}  // namespace cubind

// Private: the driver's one-time initialization, the fork state it sets up,
// and the quiet release every destructor of a runtime owner goes through.
// Not installed.
#pragma once

namespace cubind::detail {

// cuInit(0), once per process; a failure is rethrown by every later call.
void init_driver();

// True in the child of a fork made after init_driver (cubind::in_forked_child).
bool forked_child() noexcept;

// Destructors release through this: nothing may escape, and a driver that is
// shutting down (CUDA_ERROR_DEINITIALIZED) or gone is not an error there. In
// a forked child the driver is not called at all: the handles are the
// parent's, and the driver cannot be used there.
template <typename Release>
void release_quietly(Release&& release) noexcept {
  if (forked_child()) return;
  try {
    (void)release();
  } catch (...) {
  }
}

}  // namespace cubind::detail

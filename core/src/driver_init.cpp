#include "driver_init.hpp"

#include <pthread.h>

#include <atomic>
#include <mutex>

#include "cubind/context.hpp"
#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind::detail {

namespace {
std::once_flag g_init_once;
CUresult g_init_status = CUDA_SUCCESS;
std::atomic<bool> g_forked_child{false};

void after_fork_in_child() noexcept { g_forked_child.store(true, std::memory_order_relaxed); }
}  // namespace

void init_driver() {
  // A LoaderError (no driver) escapes call_once and leaves it unset: the next
  // call fails the same way, with the loader's message.
  std::call_once(g_init_once, [] {
    g_init_status = raw::cuInit(0);
    // From here on, a fork's child must leave the driver alone.
    if (g_init_status == CUDA_SUCCESS) pthread_atfork(nullptr, nullptr, after_fork_in_child);
  });
  check(g_init_status, "cuInit");
}

bool forked_child() noexcept { return g_forked_child.load(std::memory_order_relaxed); }

}  // namespace cubind::detail

namespace cubind {

bool in_forked_child() noexcept { return detail::forked_child(); }

}  // namespace cubind

#include "runtime_support.hpp"

#include <mutex>
#include <stdexcept>
#include <string>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"

namespace cubind::detail {

namespace {
std::once_flag g_init_once;
CUresult g_init_status = CUDA_SUCCESS;
}  // namespace

void init_driver() {
  // A LoaderError (no driver) escapes call_once and leaves it unset: the next
  // call fails the same way, with the loader's message.
  std::call_once(g_init_once, [] { g_init_status = raw::cuInit(0); });
  check(g_init_status, "cuInit");
}

void throw_null(const std::string& where, const char* subject, const char* how) {
  throw std::logic_error(where + ": " + subject + " is null (" + how + ")");
}

}  // namespace cubind::detail

#include "null_owner.hpp"

#include <stdexcept>
#include <string>

namespace cubind::detail {

void throw_null(const std::string& where, const char* subject, const char* how) {
  throw std::logic_error(where + ": " + subject + " is null (" + how + ")");
}

}  // namespace cubind::detail

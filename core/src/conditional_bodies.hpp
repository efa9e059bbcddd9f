// Private: how many bodies each kind of conditional node takes, for
// add_conditional_node and capture_conditional. Not installed.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace cubind::detail {

// @throws std::invalid_argument naming `where` and the count unless `type` takes `count` bodies.
inline void require_conditional_body_count(CUgraphConditionalNodeType type, unsigned int count, const char* where) {
  const bool count_ok = (type == CU_GRAPH_COND_TYPE_IF && (count == 1 || count == 2)) ||
                        (type == CU_GRAPH_COND_TYPE_WHILE && count == 1) ||
                        (type == CU_GRAPH_COND_TYPE_SWITCH && count >= 1);
  if (!count_ok) {
    throw std::invalid_argument(std::string(where) + ": " + std::to_string(count) +
                                " bodies; an if node takes 1 or 2, a while node 1, a switch node 1 or more");
  }
}

}  // namespace cubind::detail

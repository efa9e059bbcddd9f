// The node-by-node graph calls refuse null graphs, nodes and instantiations
// before reaching the driver, and a host node's data is released when the
// node cannot be added.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "cubind/graph_definition.hpp"

namespace {

const cubind::GraphRef kNullGraph{static_cast<CUgraph>(nullptr)};
int released = 0;
void CUDA_CB release(void*) { ++released; }

TEST(GraphDefinition, NullGraphsAndNodesAreRefusedWithTheirName) {
  CUgraphNodeParams params{};
  try {
    cubind::add_node(kNullGraph, {}, params);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cubind::add_node: the graph is null");
  }
  EXPECT_THROW(cubind::graph_nodes(kNullGraph), std::invalid_argument);
  EXPECT_THROW(cubind::graph_edges(kNullGraph), std::invalid_argument);
  EXPECT_THROW(cubind::node_type(nullptr), std::invalid_argument);
  EXPECT_THROW(cubind::node_neighbours(nullptr, true), std::invalid_argument);
  EXPECT_THROW(cubind::set_exec_node_params(nullptr, nullptr, params), std::invalid_argument);
  EXPECT_THROW(cubind::change_edges(kNullGraph, {}, {}, true), std::invalid_argument);
}

TEST(GraphDefinition, HostNodeDataIsReleasedWhenTheGraphIsNull) {
  released = 0;
  EXPECT_THROW(cubind::add_host_node(kNullGraph, {}, release, nullptr, release), std::invalid_argument);
  EXPECT_EQ(released, 1);
}

}  // namespace

"""CUDA graphs, as cuda.core 1.2's cuda.core.graph: GraphBuilder (a graph
built by stream capture, from Device.create_graph_builder or
Stream.create_graph_builder), Graph (its executable form), GraphCondition
(the condition of conditional nodes), GraphCompleteOptions and
GraphDebugPrintOptions. Building a graph node by node (GraphDefinition and the
node classes) is not provided yet: see docs/migration-from-cuda-core.md."""

from cubind.core._core import Graph, GraphBuilder, GraphCondition
from cubind.core._graph_options import GraphCompleteOptions, GraphDebugPrintOptions

__all__ = [
    "Graph",
    "GraphBuilder",
    "GraphCompleteOptions",
    "GraphCondition",
    "GraphDebugPrintOptions",
]

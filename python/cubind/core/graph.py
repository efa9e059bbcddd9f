"""CUDA graphs, as cuda.core 1.2's cuda.core.graph: GraphBuilder (a graph
built by stream capture, from Device.create_graph_builder or
Stream.create_graph_builder), GraphDefinition (a graph built node by node,
with the node classes below), Graph (the executable form of either, whose
nodes graph[node] can be changed for later launches), GraphCondition (the
condition of conditional nodes), GraphCompleteOptions and
GraphDebugPrintOptions."""

from cubind.core._graph._graph_builder import Graph, GraphBuilder, GraphCondition
from cubind.core._graph._graph_definition import (
    AllocNode,
    ChildGraphNode,
    ConditionalNode,
    EmptyNode,
    EventRecordNode,
    EventWaitNode,
    ExecutableChildGraphNode,
    ExecutableEventRecordNode,
    ExecutableEventWaitNode,
    ExecutableGraphNode,
    ExecutableHostCallbackNode,
    ExecutableKernelNode,
    ExecutableMemcpyNode,
    ExecutableMemsetNode,
    FreeNode,
    GraphDefinition,
    GraphNode,
    HostCallbackNode,
    IfElseNode,
    IfNode,
    KernelNode,
    MemcpyNode,
    MemsetNode,
    SwitchNode,
    WhileNode,
)
from cubind.core._graph_options import GraphCompleteOptions, GraphDebugPrintOptions

__all__ = [
    "AllocNode",
    "ChildGraphNode",
    "ConditionalNode",
    "EmptyNode",
    "EventRecordNode",
    "EventWaitNode",
    "ExecutableChildGraphNode",
    "ExecutableEventRecordNode",
    "ExecutableEventWaitNode",
    "ExecutableGraphNode",
    "ExecutableHostCallbackNode",
    "ExecutableKernelNode",
    "ExecutableMemcpyNode",
    "ExecutableMemsetNode",
    "FreeNode",
    "Graph",
    "GraphBuilder",
    "GraphCompleteOptions",
    "GraphCondition",
    "GraphDefinition",
    "GraphDebugPrintOptions",
    "GraphNode",
    "HostCallbackNode",
    "IfElseNode",
    "IfNode",
    "KernelNode",
    "MemcpyNode",
    "MemsetNode",
    "SwitchNode",
    "WhileNode",
]

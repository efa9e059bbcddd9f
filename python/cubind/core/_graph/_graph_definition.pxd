# cython: language_level=3
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._graph._graph_builder cimport Graph

cdef class _GraphOwner:
    cdef cpp.Graph* _graph

cdef class GraphDefinition:
    cdef cpp.CUgraph _graph
    cdef object _owner
    cdef object __weakref__
    @staticmethod
    cdef GraphDefinition _view(cpp.CUgraph graph, object owner)
    cdef cpp.CUgraph _get(self) except NULL

cdef class GraphNode:
    cdef GraphDefinition _graph_def
    cdef cpp.CUgraphNode _node
    cdef bint _destroyed
    cdef object _kept           # the Python objects the node was made with
    cdef object __weakref__
    @staticmethod
    cdef GraphNode _make(object cls, GraphDefinition graph, cpp.CUgraphNode node)
    cdef cpp.CUgraphNode _handle(self) except? NULL
    cdef vector[cpp.CUgraphNode] _deps(self) except *
    cdef list _neighbours(self, bint forward)
    cdef _change_edges(self, list others, bint forward, bint add)
    cdef GraphNode _added(self, object cls, cpp.CUgraphNode node, object kept)
    cdef _event_node(self, event, bint record, object cls, str where)
    cdef _conditional(self, condition, cpp.CUgraphConditionalNodeType kind, unsigned int count, object cls, str where)
    cdef cpp.NodeInfo _info(self) except *

cdef class EmptyNode(GraphNode):
    pass

cdef class KernelNode(GraphNode):
    pass

cdef class AllocNode(GraphNode):
    pass

cdef class FreeNode(GraphNode):
    pass

cdef class MemsetNode(GraphNode):
    pass

cdef class MemcpyNode(GraphNode):
    pass

cdef class ChildGraphNode(GraphNode):
    pass

cdef class EventRecordNode(GraphNode):
    pass

cdef class EventWaitNode(GraphNode):
    pass

cdef class HostCallbackNode(GraphNode):
    pass

cdef class ConditionalNode(GraphNode):
    cdef object _condition
    cdef object _cond_type
    cdef tuple _branches

cdef class IfNode(ConditionalNode):
    pass

cdef class IfElseNode(ConditionalNode):
    pass

cdef class WhileNode(ConditionalNode):
    pass

cdef class SwitchNode(ConditionalNode):
    pass

cdef class _Released:
    cdef void* _data
    cdef cpp.CUhostFn _release

cdef class ExecutableGraphNode:
    cdef Graph _exec_graph
    cdef GraphNode _source
    @staticmethod
    cdef ExecutableGraphNode _make(object cls, Graph graph, GraphNode node)
    cdef cpp.CUgraphExec _exec(self) except NULL
    cdef _set(self, cpp.CUgraphNodeParams params)
    cdef bint _enabled(self) except -1
    cdef _enable(self, bint enabled)

cdef class _Switchable(ExecutableGraphNode):
    pass

cdef class ExecutableKernelNode(_Switchable):
    pass

cdef class ExecutableMemsetNode(_Switchable):
    pass

cdef class ExecutableMemcpyNode(_Switchable):
    pass

cdef class ExecutableChildGraphNode(ExecutableGraphNode):
    pass

cdef class ExecutableEventRecordNode(ExecutableGraphNode):
    pass

cdef class ExecutableEventWaitNode(ExecutableGraphNode):
    pass

cdef class ExecutableHostCallbackNode(ExecutableGraphNode):
    pass
cdef Graph _instantiate_in(cpp.CUgraph graph, cpp.CUcontext context, options)
cdef object _executable_node(Graph graph, object node)

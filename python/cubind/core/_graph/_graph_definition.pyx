# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Building a graph node by node (cuda.core.graph's GraphDefinition and node
# classes) over cubind/graph_definition.hpp: a GraphDefinition is a CUgraph,
# a GraphNode one CUgraphNode of it, and the Executable* views change a node
# of an instantiated Graph (cuGraphExecNodeSetParams).

from cpython.ref cimport Py_INCREF
from libc.stdint cimport uint64_t, uintptr_t
from libc.string cimport memset
from libcpp.utility cimport pair
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._context cimport _context_device, _current_context as _context_current
from cubind.core._device cimport _Device as Device, _device_ordinal
from cubind.core._errors cimport _raw_handle
from cubind.core._event cimport Event
from cubind.core._graph._graph_builder cimport _complete_options, _dot_print, Graph, GraphCondition
from cubind.core._host_callbacks cimport host_function, release_python_object
from cubind.core._launch cimport LaunchConfig, _pack
from cubind.core._memory._buffer cimport Buffer
from cubind.core._module cimport Kernel
from cubind.core._stream cimport _stream_handle

import collections.abc
import weakref
import weakref as _weakref
from collections.abc import MutableSet as _MutableSet
from cubind.core._errors import _invalid_value, CUDAError
from cubind.core.typing import GraphConditionalType


# One Python object per live node handle, so nodes() and edges() give back
# the objects that built them (and what they keep: kernel, event, callback).
_NODE_REGISTRY = _weakref.WeakValueDictionary()


cdef enum:
    _T_KERNEL = 0
    _T_MEMCPY = 1
    _T_MEMSET = 2
    _T_HOST = 3
    _T_GRAPH = 4
    _T_EMPTY = 5
    _T_WAIT_EVENT = 6
    _T_EVENT_RECORD = 7
    _T_MEM_ALLOC = 10
    _T_MEM_FREE = 11
    _T_CONDITIONAL = 13


# Where graph memory lives, between its Python names ("device", "host",
# "managed", or an enum whose value is one) and the core's GraphMemoryType.
cdef cpp.GraphMemoryType _graph_memory_type(object memory_type, str where) except *:
    memory_type = str(memory_type.value if hasattr(memory_type, "value") else memory_type)
    if memory_type == "device":
        return cpp.GraphMemoryType.device
    if memory_type == "host":
        return cpp.GraphMemoryType.host
    if memory_type == "managed":
        return cpp.GraphMemoryType.managed
    raise ValueError(f"{where}: memory_type: {memory_type!r} is not a valid GraphMemoryType "
                     "(must be 'device', 'host' or 'managed')")


cdef str _memory_type_name(cpp.GraphMemoryType memory_type):
    if memory_type == cpp.GraphMemoryType.host:
        return "host"
    if memory_type == cpp.GraphMemoryType.managed:
        return "managed"
    return "device"


cdef class _GraphOwner:
    # Owns a root CUgraph; definitions viewing it or graphs nested in it
    # (child graphs, conditional bodies) hold this to keep it alive.

    def __dealloc__(self):
        if self._graph != NULL:
            with nogil:
                del self._graph
            self._graph = NULL


cdef _GraphOwner _own_graph(cpp.Graph* graph):
    cdef _GraphOwner owner = _GraphOwner.__new__(_GraphOwner)
    owner._graph = graph
    return owner


cdef cpp.CUcontext _current_context(str where) except NULL:
    cdef cpp.CUcontext context
    with nogil:
        context = _context_current()
    if context == NULL:
        raise RuntimeError(f"{where}: no CUDA context is current; call Device().set_current() first")
    return context


cdef int _retain(cpp.CUgraph graph, object obj) except -1:
    # The graph (and every instantiation of it) keeps obj alive.
    Py_INCREF(obj)
    with nogil:
        cpp.graph_retain(cpp.GraphRef(graph), <void*>obj, release_python_object)
    return 0


cdef uintptr_t _address_of(object value, str where, str name) except? 0:
    if isinstance(value, Buffer):
        return (<Buffer>value)._ptr
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < (1 << 64):
            raise ValueError(f"{where}: {name} is {value}, which is no address")
        return value
    raise TypeError(f"{where}: {name} must be a Buffer or an int address, not {type(value).__name__}")


cdef object _owner_for(object value, object owner, str where, str name):
    # What the graph keeps alive for an operand: a Buffer itself, or the
    # owner given beside a raw address.
    if owner is not None and isinstance(value, Buffer):
        raise ValueError(f"{where}: {name}_owner cannot be given with a Buffer {name} (the Buffer is kept already)")
    return value if isinstance(value, Buffer) else owner


cdef int _check_size(object value, str where, str name) except -1:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{where}: {name} is {value}; it must not be negative")
    return 0


cdef tuple _memset_value(object value, str where):
    # (value, element size) from an int byte or a 1-, 2- or 4-byte buffer.
    cdef const unsigned char[::1] raw
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < 256:
            raise ValueError(f"{where}: value {value} does not fit in a byte; pass a 2- or 4-byte buffer "
                             "(a numpy scalar) for a wider fill")
        return value, 1
    try:
        raw = memoryview(value).cast("B")
    except TypeError:
        raise TypeError(f"{where}: value must be an int or a buffer of 1, 2 or 4 bytes, "
                        f"not {type(value).__name__}") from None
    if raw.shape[0] not in (1, 2, 4):
        raise ValueError(f"{where}: value must be 1, 2 or 4 bytes, not {raw.shape[0]}")
    return int.from_bytes(bytes(raw), "little"), raw.shape[0]


cdef object _packed_kernel_args(Kernel k, tuple args, vector[uint64_t]& storage, vector[void*]& pointers):
    # The arguments as launch() packs them, into storage the caller keeps
    # until the driver has copied them.
    cdef Py_ssize_t n = len(args)
    cdef Py_ssize_t i
    cdef size_t size
    cdef char* slot
    if not k._have_sizes:
        k._load_sizes()
    if <size_t>n != k._sizes.size():
        raise TypeError(f"launch: kernel '{k.name}' takes {k._sizes.size()} arguments, {n} given")
    storage.resize(k._slots if k._slots else 1)
    pointers.resize(n if n else 1)
    slot = <char*>storage.data()
    for i in range(n):
        size = k._sizes[i]
        pointers[i] = slot
        _pack(args[i], size, slot, i, k)
        slot += ((size + 7) >> 3) << 3
    return None


cdef cpp.CUgraphNodeParams _kernel_params(object config, object kernel, tuple args, cpp.CUcontext context,
                                          vector[uint64_t]& storage, vector[void*]& pointers, str where) except *:
    cdef LaunchConfig c
    cdef cpp.KernelNode node
    if not isinstance(config, LaunchConfig):
        raise TypeError(f"{where}: config must be a LaunchConfig, not {type(config).__name__}")
    if not isinstance(kernel, Kernel):
        raise TypeError(f"{where}: kernel must be a Kernel, not {type(kernel).__name__}")
    c = <LaunchConfig>config
    if c.cluster is not None or c.is_cooperative:
        raise ValueError(f"{where}: clustered and cooperative launches are not supported in graph kernel nodes")
    node.grid = cpp.Dim3(c.grid[0], c.grid[1], c.grid[2])
    node.block = cpp.Dim3(c.block[0], c.block[1], c.block[2])
    _packed_kernel_args(<Kernel>kernel, args, storage, pointers)
    node.kernel = (<Kernel>kernel)._cpp.handle()
    node.context = context
    node.shared_memory_bytes = c.shmem_size
    node.arguments = pointers.data()
    return cpp.kernel_node(node)


cdef cpp.CUgraphNodeParams _memset_params(object dst, object value, object width, object height, object pitch,
                                          cpp.CUcontext context, str where) except *:
    cdef cpp.MemsetNode node
    node.dst = _address_of(dst, where, "dst")
    fill, element_size = _memset_value(value, where)
    _check_size(width, where, "width")
    _check_size(height, where, "height")
    _check_size(pitch, where, "pitch")
    node.value = fill
    node.element_size = element_size
    node.width = width
    node.height = height
    node.pitch = pitch
    node.context = context
    return cpp.memset_node(node)


cdef cpp.CUgraphNodeParams _memcpy_params(cpp.CUdeviceptr dst, cpp.CUdeviceptr src, size_t size,
                                          cpp.CUcontext context) noexcept:
    cdef cpp.MemcpyNode node
    node.dst = dst
    node.src = src
    node.bytes = size
    node.context = context
    return cpp.memcpy_node(node)


cdef cpp.CUgraphNodeParams _event_params(cpp.CUevent event, bint record) noexcept:
    return cpp.event_record_node(event) if record else cpp.event_wait_node(event)


cdef class GraphDefinition:
    """GraphDefinition()

    A graph built node by node: GraphDefinition's methods add nodes without
    dependencies, a node's methods add nodes that depend on it. instantiate()
    makes a Graph to launch (cuGraphCreate, cuGraphAddNode). Nodes are added
    in the context current when they are added."""


    def __init__(self):
        cdef cpp.Graph* graph
        with nogil:
            graph = cpp.graph_create_new()
        self._owner = _own_graph(graph)
        self._graph = graph.handle()

    @staticmethod
    cdef GraphDefinition _view(cpp.CUgraph graph, object owner):
        cdef GraphDefinition self = GraphDefinition.__new__(GraphDefinition)
        self._graph = graph
        self._owner = owner
        return self

    cdef cpp.CUgraph _get(self) except NULL:
        if self._graph == NULL:
            raise RuntimeError("GraphDefinition is no longer valid")
        return self._graph

    def __repr__(self):
        return f"<GraphDefinition handle={<uintptr_t>self._graph:#x}>"

    def __eq__(self, other):
        if not isinstance(other, GraphDefinition):
            return NotImplemented
        return self._graph == (<GraphDefinition>other)._graph

    def __hash__(self):
        return hash(("GraphDefinition", <uintptr_t>self._graph))

    @property
    def is_valid(self):
        """Whether the definition still has its graph."""
        return self._graph != NULL

    @property
    def handle(self):
        """The CUgraph (cubind.bindings.driver); int() gives its address."""
        return _raw_handle("driver", "CUgraph", <uintptr_t>self._get())

    @property
    def _entry(self):
        """A node standing for "no dependencies": what the methods below add
        after."""
        return GraphNode._make(GraphNode, self, NULL)

    def allocate(self, size, *, device=None, memory_type="device", peer_access=None):
        """Adds an allocation node without dependencies: see GraphNode.allocate."""
        return self._entry.allocate(size, device=device, memory_type=memory_type, peer_access=peer_access)

    def deallocate(self, dptr):
        """Adds a free node without dependencies: see GraphNode.deallocate."""
        return self._entry.deallocate(dptr)

    def memset(self, dst, value, width, height=1, pitch=0, *, dst_owner=None):
        """Adds a memset node without dependencies: see GraphNode.memset."""
        return self._entry.memset(dst, value, width, height, pitch, dst_owner=dst_owner)

    def launch(self, config, kernel, *args):
        """Adds a kernel node without dependencies: see GraphNode.launch."""
        return self._entry.launch(config, kernel, *args)

    def empty(self):
        """Adds an empty node without dependencies."""
        return self._entry.join()

    def join(self, *nodes):
        """Adds an empty node after all of nodes."""
        return self._entry.join(*nodes)

    def memcpy(self, dst, src, size, *, dst_owner=None, src_owner=None):
        """Adds a copy node without dependencies: see GraphNode.memcpy."""
        return self._entry.memcpy(dst, src, size, dst_owner=dst_owner, src_owner=src_owner)

    def embed(self, child):
        """Adds a child graph node without dependencies: see GraphNode.embed."""
        return self._entry.embed(child)

    def record(self, event):
        """Adds an event record node without dependencies."""
        return self._entry.record(event)

    def wait(self, event):
        """Adds an event wait node without dependencies."""
        return self._entry.wait(event)

    def callback(self, fn, *, user_data=None):
        """Adds a host callback node without dependencies: see GraphNode.callback."""
        return self._entry.callback(fn, user_data=user_data)

    def create_condition(self, default_value=None):
        """A condition for this graph's conditional nodes
        (cuGraphConditionalHandleCreate, in the current context). With
        default_value the condition takes it at the start of every launch;
        without, device code sets it (cudaGraphSetConditional)."""
        cdef cpp.CUgraph graph = self._get()
        cdef cpp.CUcontext context = _current_context("GraphDefinition.create_condition")
        cdef bint has_default = default_value is not None
        cdef unsigned int value = 0
        cdef unsigned long long handle
        if has_default:
            if not isinstance(default_value, int) or isinstance(default_value, bool):
                raise TypeError(f"GraphDefinition.create_condition: default_value must be an int or None, "
                                f"not {type(default_value).__name__}")
            if not 0 <= default_value <= 0xFFFFFFFF:
                raise ValueError(f"GraphDefinition.create_condition: default_value {default_value} does not fit "
                                 "in an unsigned 32-bit int")
            value = default_value
        with nogil:
            handle = cpp.create_graph_condition(cpp.GraphRef(graph), context, has_default, value)
        return GraphCondition._make(handle)

    def if_then(self, condition):
        """Adds an if node without dependencies: see GraphNode.if_then."""
        return self._entry.if_then(condition)

    def if_else(self, condition):
        """Adds an if-else node without dependencies: see GraphNode.if_else."""
        return self._entry.if_else(condition)

    def while_loop(self, condition):
        """Adds a while node without dependencies: see GraphNode.while_loop."""
        return self._entry.while_loop(condition)

    def switch(self, condition, count):
        """Adds a switch node without dependencies: see GraphNode.switch."""
        return self._entry.switch(condition, count)

    def instantiate(self, options=None):
        """An executable Graph of this definition, in the current context
        (cuGraphInstantiateWithParams); options is a GraphCompleteOptions."""
        cdef cpp.CUgraph graph = self._get()
        cdef cpp.CUcontext context = _current_context("GraphDefinition.instantiate")
        return _instantiate_in(graph, context, options)

    def debug_dot_print(self, path, options=None):
        """Writes a GraphViz DOT description of the graph to path (cuGraphDebugDotPrint)."""
        _dot_print(self._get(), path, options)

    def nodes(self):
        """Every node of the graph, as a set (cuGraphGetNodes)."""
        cdef cpp.CUgraph graph = self._get()
        cdef vector[cpp.CUgraphNode] found
        with nogil:
            found = cpp.graph_nodes(cpp.GraphRef(graph))
        return {_node_of(self, n) for n in found}

    def edges(self):
        """Every dependency of the graph as a set of (from, to) node pairs (cuGraphGetEdges)."""
        cdef cpp.CUgraph graph = self._get()
        cdef vector[pair[cpp.CUgraphNode, cpp.CUgraphNode]] found
        with nogil:
            found = cpp.graph_edges(cpp.GraphRef(graph))
        return {(_node_of(self, e.first), _node_of(self, e.second)) for e in found}


cdef Graph _instantiate_in(cpp.CUgraph graph, cpp.CUcontext context, options):
    cdef cpp.GraphInstantiateOptions opts
    cdef cpp.GraphExec* exec_
    cdef int device_id
    options = _complete_options(options)
    opts.auto_free_on_launch = bool(options.auto_free_on_launch)
    opts.device_launch = bool(options.device_launch)
    opts.use_node_priority = bool(options.use_node_priority)
    if options.upload_stream is not None:
        opts.upload_stream = _stream_handle(options.upload_stream)
    with nogil:
        device_id = _context_device(context)
        exec_ = cpp.graph_instantiate(graph, context, opts)
    return Graph._make(exec_, device_id)


cdef object _node_class(int kind):
    return {
        _T_KERNEL: KernelNode, _T_MEMCPY: MemcpyNode, _T_MEMSET: MemsetNode, _T_HOST: HostCallbackNode,
        _T_GRAPH: ChildGraphNode, _T_EMPTY: EmptyNode, _T_WAIT_EVENT: EventWaitNode,
        _T_EVENT_RECORD: EventRecordNode, _T_MEM_ALLOC: AllocNode, _T_MEM_FREE: FreeNode,
        _T_CONDITIONAL: ConditionalNode,
    }.get(kind, GraphNode)


cdef GraphNode _node_of(GraphDefinition graph, cpp.CUgraphNode node):
    # The registered object of a node handle, or a new one of its type's class.
    cdef cpp.CUgraphNodeType kind
    found = _NODE_REGISTRY.get(<uintptr_t>node)
    if found is not None and (<GraphNode>found)._graph_def._graph == graph._graph:
        return found
    with nogil:
        kind = cpp.node_type(node)
    return _new_node(_node_class(kind), graph, node)


cdef GraphNode _new_node(object cls, GraphDefinition graph, cpp.CUgraphNode node):
    cdef GraphNode made = GraphNode._make(cls, graph, node)
    _NODE_REGISTRY[<uintptr_t>node] = made
    return made


class AdjacencySetProxy(_MutableSet):
    """A node's predecessors (pred) or successors (succ) as a mutable set:
    adding or discarding a node adds or removes the edge in the graph
    (cuGraphAddDependencies, cuGraphRemoveDependencies)."""

    __slots__ = ("_node", "_forward")

    def __init__(self, node, is_fwd):
        self._node = node
        self._forward = bool(is_fwd)

    @classmethod
    def _from_iterable(cls, it):
        return set(it)

    def _members(self):
        return (<GraphNode>self._node)._neighbours(self._forward)

    def __contains__(self, x):
        return x in self._members()

    def __iter__(self):
        return iter(self._members())

    def __len__(self):
        return len(self._members())

    def _change(self, others, bint add):
        (<GraphNode>self._node)._change_edges(list(others), self._forward, add)

    def add(self, value):
        if value not in self:
            self._change([value], True)

    def discard(self, value):
        if value in self:
            self._change([value], False)

    def clear(self):
        """Removes all the edges in one driver call."""
        self._change(self._members(), False)

    def __isub__(self, it):
        """Removes the edges to every node of it in one driver call."""
        self._change([n for n in it if n in self], False)
        return self

    def update(self, *others):
        """Adds edges to the nodes of every iterable in others."""
        members = self._members()
        self._change({n for other in others for n in other if n not in members}, True)

    def __ior__(self, it):
        """Adds edges to every node of it in one driver call."""
        self.update(it)
        return self

    def __repr__(self):
        return f"{{{', '.join(repr(n) for n in self._members())}}}"


def _replace_edges(proxy, value):
    # Read value first: it may be this very proxy (node.succ |= {...}).
    wanted = set(value)
    current = set(proxy)
    proxy -= current - wanted
    proxy.update(wanted - current)


cdef class GraphNode:
    """A node of a GraphDefinition; its methods add a node that depends on it."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} cannot be made directly; use GraphDefinition's "
                           "or another node's methods")

    @staticmethod
    cdef GraphNode _make(object cls, GraphDefinition graph, cpp.CUgraphNode node):
        cdef GraphNode self = cls.__new__(cls)
        self._graph_def = graph
        self._node = node
        return self

    cdef cpp.CUgraphNode _handle(self) except? NULL:
        if self._destroyed:
            raise RuntimeError("the graph node has been destroyed")
        self._graph_def._get()
        return self._node

    cdef vector[cpp.CUgraphNode] _deps(self) except *:
        cdef vector[cpp.CUgraphNode] deps
        cdef cpp.CUgraphNode node = self._handle()
        if node != NULL:
            deps.push_back(node)
        return deps

    def __repr__(self):
        if self._node == NULL:
            return f"<{type(self).__name__} entry of {self._graph_def!r}>"
        return f"<{type(self).__name__} handle={<uintptr_t>self._node:#x}>"

    def __eq__(self, other):
        if not isinstance(other, GraphNode):
            return NotImplemented
        return (self._node == (<GraphNode>other)._node and
                self._graph_def._graph == (<GraphNode>other)._graph_def._graph)

    def __hash__(self):
        return hash(("GraphNode", <uintptr_t>self._node))

    @property
    def type(self):
        """The CUgraphNodeType (cubind.bindings.driver), None for the entry node."""
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUgraphNodeType kind
        if node == NULL:
            return None
        with nogil:
            kind = cpp.node_type(node)
        from cubind.bindings import driver
        return driver.CUgraphNodeType(kind)

    @property
    def graph(self):
        """The GraphDefinition the node belongs to."""
        return self._graph_def

    @property
    def handle(self):
        """The CUgraphNode (cubind.bindings.driver); None for the entry node."""
        cdef cpp.CUgraphNode node = self._handle()
        if node == NULL:
            return None
        return _raw_handle("driver", "CUgraphNode", <uintptr_t>node)

    @property
    def is_valid(self):
        """False once destroy() was called or the graph is gone."""
        return not self._destroyed and self._graph_def._graph != NULL

    def destroy(self):
        """Removes the node and its edges from the graph (cuGraphDestroyNode);
        doing it again does nothing."""
        cdef cpp.CUgraphNode node
        if self._destroyed or self._node == NULL:
            return
        node = self._handle()
        with nogil:
            cpp.destroy_node(node)
        _NODE_REGISTRY.pop(<uintptr_t>node, None)
        self._destroyed = True

    cdef list _neighbours(self, bint forward):
        cdef cpp.CUgraphNode node = self._handle()
        cdef vector[cpp.CUgraphNode] found
        if node == NULL:
            # The entry node stands for "no dependencies": it has no edges,
            # as in cuda.core.
            return []
        with nogil:
            found = cpp.node_neighbours(node, forward)
        return [_node_of(self._graph_def, n) for n in found]

    cdef _change_edges(self, list others, bint forward, bint add):
        cdef vector[cpp.CUgraphNode] src
        cdef vector[cpp.CUgraphNode] dst
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUgraph graph = self._graph_def._get()
        if not others:
            return None
        for other in others:
            if not isinstance(other, GraphNode):
                raise TypeError(f"expected GraphNode, got {type(other).__name__}: an edge needs a GraphNode of "
                                f"the graph, not {other!r:.60}")
        if others and (node == NULL or any((<GraphNode>other)._node == NULL for other in others)):
            # What the driver answers for an edge to nothing (cuGraphAddDependencies
            # with a null node), said before it is asked.
            raise _invalid_value("the entry node (GraphDefinition's, standing for no dependencies) can have no "
                                 "edges; add nodes after it with its methods instead", "cuGraphAddDependencies")
        for other in others:
            if (<GraphNode>other)._graph_def._graph != graph:
                raise ValueError(f"{other!r} belongs to another graph")
            src.push_back(node if forward else (<GraphNode>other)._handle())
            dst.push_back((<GraphNode>other)._handle() if forward else node)
        with nogil:
            cpp.change_edges(cpp.GraphRef(graph), src, dst, add)

    @property
    def pred(self):
        """The node's predecessors: a mutable set whose changes edit the graph's edges."""
        self._handle()
        return AdjacencySetProxy(self, False)

    @pred.setter
    def pred(self, value):
        _replace_edges(AdjacencySetProxy(self, False), value)

    @property
    def succ(self):
        """The node's successors: a mutable set whose changes edit the graph's edges."""
        self._handle()
        return AdjacencySetProxy(self, True)

    @succ.setter
    def succ(self, value):
        _replace_edges(AdjacencySetProxy(self, True), value)

    cdef GraphNode _added(self, object cls, cpp.CUgraphNode node, object kept):
        cdef GraphNode made = _new_node(cls, self._graph_def, node)
        made._kept = kept
        return made

    def launch(self, config, kernel, *args):
        """Adds a kernel node after this one: kernel (a Kernel) with config (a
        LaunchConfig) and args, converted as launch() converts them; the graph
        keeps the arguments alive. Clustered and cooperative launches are not
        supported."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUcontext context = _current_context("GraphNode.launch")
        cdef vector[uint64_t] storage
        cdef vector[void*] pointers
        cdef cpp.CUgraphNodeParams params = _kernel_params(config, kernel, args, context, storage, pointers,
                                                           "GraphNode.launch")
        cdef cpp.CUgraphNode node
        _retain(graph, (kernel, args))
        with nogil:
            node = cpp.add_node(cpp.GraphRef(graph), deps, params)
        return self._added(KernelNode, node, kernel)

    def join(self, *nodes):
        """Adds an empty node after this one and every node of nodes."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUgraphNode node
        for other in nodes:
            if not isinstance(other, GraphNode):
                raise TypeError(f"join: every node must be a GraphNode, not {type(other).__name__}")
            if (<GraphNode>other)._graph_def._graph != graph:
                raise ValueError(f"join: {other!r} belongs to another graph")
            if (<GraphNode>other)._handle() != NULL:
                deps.push_back((<GraphNode>other)._node)
        with nogil:
            node = cpp.add_empty_node(cpp.GraphRef(graph), deps)
        return self._added(EmptyNode, node, None)

    def allocate(self, size, *, device=None, memory_type="device", peer_access=None):
        """Adds an allocation node after this one (graph memory): size bytes
        on device (default: the current context's), memory_type "device",
        "host" or "managed", peer_access a list of devices given read-write
        access. Its address is AllocNode.dptr."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.AllocNode alloc
        cdef cpp.AddedAllocNode added
        _check_size(size, "GraphNode.allocate", "size")
        alloc.bytes = size
        if device is None:
            alloc.device = Device()._id
        else:
            alloc.device = _device_ordinal(device)
        alloc.memory_type = _graph_memory_type(memory_type, "GraphNode.allocate")
        for peer in peer_access or ():
            alloc.peers.push_back(_device_ordinal(peer))
        with nogil:
            added = cpp.add_alloc_node(cpp.GraphRef(graph), deps, alloc)
        return self._added(AllocNode, added.node, None)

    def deallocate(self, dptr):
        """Adds a free node after this one, for an address an allocation node
        of the graph made (AllocNode.dptr)."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUdeviceptr address = _address_of(dptr, "GraphNode.deallocate", "dptr")
        cdef cpp.CUgraphNode node
        with nogil:
            node = cpp.add_free_node(cpp.GraphRef(graph), deps, address)
        return self._added(FreeNode, node, None)

    def memset(self, dst, value, width, height=1, pitch=0, *, dst_owner=None):
        """Adds a memset node after this one: width elements (of value's size:
        an int fills bytes, a 2- or 4-byte buffer wider elements) in each of
        height rows pitch bytes apart. A Buffer dst is kept alive by the
        graph; for an int address, dst_owner is."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUcontext context = _current_context("GraphNode.memset")
        cdef cpp.CUgraphNodeParams params = _memset_params(dst, value, width, height, pitch, context,
                                                           "GraphNode.memset")
        cdef cpp.CUgraphNode node
        owner = _owner_for(dst, dst_owner, "GraphNode.memset", "dst")
        if owner is not None:
            _retain(graph, owner)
        with nogil:
            node = cpp.add_node(cpp.GraphRef(graph), deps, params)
        return self._added(MemsetNode, node, None)

    def memcpy(self, dst, src, size, *, dst_owner=None, src_owner=None):
        """Adds a copy node after this one: size bytes from src to dst (device
        or pinned host memory, told apart by the driver). Buffers are kept
        alive by the graph; for int addresses, the *_owner objects are."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUcontext context = _current_context("GraphNode.memcpy")
        cdef cpp.CUdeviceptr d = _address_of(dst, "GraphNode.memcpy", "dst")
        cdef cpp.CUdeviceptr s = _address_of(src, "GraphNode.memcpy", "src")
        cdef cpp.CUgraphNodeParams params
        cdef cpp.CUgraphNode node
        _check_size(size, "GraphNode.memcpy", "size")
        params = _memcpy_params(d, s, size, context)
        owners = (_owner_for(dst, dst_owner, "GraphNode.memcpy", "dst"),
                  _owner_for(src, src_owner, "GraphNode.memcpy", "src"))
        if owners != (None, None):
            _retain(graph, owners)
        with nogil:
            node = cpp.add_node(cpp.GraphRef(graph), deps, params)
        return self._added(MemcpyNode, node, None)

    def embed(self, child):
        """Adds a child graph node after this one, running a copy of child
        (a GraphDefinition)."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUgraphNode node
        cdef cpp.CUgraphNodeParams params
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"GraphNode.embed: child must be a GraphDefinition, not {type(child).__name__}")
        params = cpp.child_graph_node(cpp.GraphRef((<GraphDefinition>child)._get()))
        with nogil:
            node = cpp.add_node(cpp.GraphRef(graph), deps, params)
        return self._added(ChildGraphNode, node, None)

    cdef _event_node(self, event, bint record, object cls, str where):
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUgraphNode node
        cdef cpp.CUgraphNodeParams params
        if not isinstance(event, Event):
            raise TypeError(f"{where}: event must be an Event, not {type(event).__name__}")
        params = _event_params((<Event>event)._handle, record)
        _retain(graph, event)
        with nogil:
            node = cpp.add_node(cpp.GraphRef(graph), deps, params)
        return self._added(cls, node, event)

    def record(self, event):
        """Adds an event record node after this one."""
        return self._event_node(event, True, EventRecordNode, "GraphNode.record")

    def wait(self, event):
        """Adds a node after this one that waits for event."""
        return self._event_node(event, False, EventWaitNode, "GraphNode.wait")

    def callback(self, fn, *, user_data=None):
        """Adds a host node after this one calling fn on a driver thread at
        every launch: a Python callable taking no arguments, or a ctypes
        function pointer of CUhostFn's prototype, CFUNCTYPE(None, c_void_p),
        called with user_data (an int address passed as it is, or a
        bytes-like object, copied). The graph keeps fn (the ctypes object
        too, which cuda.core leaves to the caller) and the copy alive for as
        long as it, a clone of it or an instantiation lives. fn must not
        call CUDA."""
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUhostFn function
        cdef cpp.CUhostFn release
        cdef void* data
        cdef cpp.CUgraphNode node
        kept = host_function(fn, user_data, "GraphNode", "callback", "fn", &function, &data, &release)
        with nogil:
            node = cpp.add_host_node(cpp.GraphRef(graph), deps, function, data, release)
        return self._added(HostCallbackNode, node, kept)

    cdef _conditional(self, condition, cpp.CUgraphConditionalNodeType kind, unsigned int count, object cls,
                      str where):
        cdef vector[cpp.CUgraphNode] deps = self._deps()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUcontext context = _current_context(where)
        cdef cpp.AddedConditionalNode added
        cdef unsigned long long value
        cdef ConditionalNode made
        if not isinstance(condition, GraphCondition):
            raise TypeError(f"{where}: condition must be a GraphCondition (from create_condition), "
                            f"not {type(condition).__name__}")
        value = (<GraphCondition>condition)._value
        try:
            with nogil:
                added = cpp.add_conditional_node(cpp.GraphRef(graph), deps, value, kind, count, context)
        except CUDAError as error:
            (<GraphCondition>condition)._added_node(error, where)
        (<GraphCondition>condition)._added_node(None, where)
        made = <ConditionalNode>self._added(cls, added.node, None)
        made._condition = condition
        made._cond_type = {cpp.CU_GRAPH_COND_TYPE_IF: GraphConditionalType("if"),
                           cpp.CU_GRAPH_COND_TYPE_WHILE: GraphConditionalType("while"),
                           cpp.CU_GRAPH_COND_TYPE_SWITCH: GraphConditionalType("switch")}[kind]
        made._branches = tuple(GraphDefinition._view(b, self._graph_def._owner) for b in added.bodies)
        return made

    def if_then(self, condition):
        """Adds an if node after this one; its body (IfNode.then, a
        GraphDefinition) runs when the condition is non-zero."""
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_IF, 1, IfNode, "GraphNode.if_then")

    def if_else(self, condition):
        """Adds an if node with an else branch (IfElseNode.then, .else_)."""
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_IF, 2, IfElseNode, "GraphNode.if_else")

    def while_loop(self, condition):
        """Adds a while node; its body (WhileNode.body) runs while the
        condition is non-zero, checked before each iteration."""
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_WHILE, 1, WhileNode, "GraphNode.while_loop")

    def switch(self, condition, count):
        """Adds a switch node of count cases (SwitchNode.branches); case n
        runs when the condition is n, none when it is count or more."""
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"GraphNode.switch: count must be an int, not {type(count).__name__}")
        if not 0 <= count <= 0xFFFFFFFF:
            raise OverflowError(f"GraphNode.switch: count is {count}, which is not an unsigned 32-bit int")
        if count == 0:
            # What the driver answers (cuGraphAddNode), said before it is asked.
            raise _invalid_value("GraphNode.switch: count is 0; a switch node needs at least 1 branch",
                                 "cuGraphAddNode")
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_SWITCH, count, SwitchNode, "GraphNode.switch")

    cdef cpp.NodeInfo _info(self) except *:
        # The node's parameters (node_info reads its type).
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.NodeInfo info
        with nogil:
            info = cpp.node_info(node)
        return info


cdef class EmptyNode(GraphNode):
    """A node that does nothing: it orders the nodes before and after it."""

    def __repr__(self):
        return f"<EmptyNode handle={<uintptr_t>self._node:#x}>"


cdef class KernelNode(GraphNode):
    """A kernel launch node: grid, block, shmem_size, kernel, config."""

    def __repr__(self):
        return f"<KernelNode handle={<uintptr_t>self._node:#x} grid={self.grid} block={self.block}>"

    def update(self, *, config=None, kernel=None, args=None):
        """Replaces the launch's config, kernel and/or arguments in the graph
        (cuGraphNodeSetParams); a new kernel needs its args (() for none)."""
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUcontext context = _current_context("KernelNode.update")
        cdef vector[uint64_t] storage
        cdef vector[void*] pointers
        cdef cpp.CUgraphNodeParams params
        if kernel is not None and args is None:
            raise ValueError("KernelNode.update: a new kernel needs its args (args=() for none)")
        if args is None:
            raise ValueError("KernelNode.update: the node's arguments cannot be read back; pass args")
        kernel = self.kernel if kernel is None else kernel
        config = self.config if config is None else config
        params = _kernel_params(config, kernel, tuple(args), context, storage, pointers, "KernelNode.update")
        _retain(self._graph_def._get(), (kernel, tuple(args)))
        with nogil:
            cpp.set_node_params(node, params)
        self._kept = kernel

    @property
    def grid(self):
        info = self._info()
        return (info.grid.x, info.grid.y, info.grid.z)

    @property
    def block(self):
        info = self._info()
        return (info.block.x, info.block.y, info.block.z)

    @property
    def shmem_size(self):
        return self._info().shared_memory_bytes

    @property
    def kernel(self):
        """The Kernel launched."""
        cdef uintptr_t handle
        if isinstance(self._kept, Kernel):
            return self._kept
        handle = <uintptr_t>self._info().kernel
        # A node made from a CUfunction (by capture) may report no CUkernel.
        return Kernel.from_handle(handle) if handle else None

    @property
    def config(self):
        """A LaunchConfig of the node's grid, block and shmem_size."""
        cdef cpp.NodeInfo info = self._info()
        return LaunchConfig(grid=(info.grid.x, info.grid.y, info.grid.z),
                            block=(info.block.x, info.block.y, info.block.z), shmem_size=info.shared_memory_bytes)


cdef class AllocNode(GraphNode):
    """A graph memory allocation node: dptr, bytesize, device_id, memory_type, peer_access."""

    def __repr__(self):
        return f"<AllocNode handle={<uintptr_t>self._node:#x} dptr={self.dptr:#x} bytesize={self.bytesize}>"

    @property
    def dptr(self):
        return self._info().dst

    @property
    def bytesize(self):
        return self._info().bytes

    @property
    def device_id(self):
        return self._info().device

    @property
    def memory_type(self):
        return _memory_type_name(self._info().memory_type)

    @property
    def peer_access(self):
        return tuple(self._info().peers)


cdef class FreeNode(GraphNode):
    """A graph memory free node: dptr."""

    def __repr__(self):
        return f"<FreeNode handle={<uintptr_t>self._node:#x} dptr={self.dptr:#x}>"

    @property
    def dptr(self):
        return self._info().dst


cdef class MemsetNode(GraphNode):
    """A memset node: dptr, value, element_size, width, height, pitch."""

    def __repr__(self):
        return f"<MemsetNode handle={<uintptr_t>self._node:#x} dptr={self.dptr:#x} value={self.value}>"

    def update(self, *, dst=None, value=None, width=None, height=None, pitch=None, dst_owner=None):
        """Replaces the given parameters in the graph (cuGraphNodeSetParams)."""
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUcontext context = _current_context("MemsetNode.update")
        cdef cpp.NodeInfo info = self._info()
        cdef cpp.CUgraphNodeParams params
        if value is None:
            value = info.value.to_bytes(info.element_size, "little") if info.element_size != 1 else info.value
        params = _memset_params(info.dst if dst is None else dst, value, info.width if width is None else width,
                                info.height if height is None else height, info.pitch if pitch is None else pitch,
                                context, "MemsetNode.update")
        if dst is not None:
            owner = _owner_for(dst, dst_owner, "MemsetNode.update", "dst")
            if owner is not None:
                _retain(self._graph_def._get(), owner)
        with nogil:
            cpp.set_node_params(node, params)

    @property
    def dptr(self):
        return self._info().dst

    @property
    def value(self):
        return self._info().value

    @property
    def element_size(self):
        return self._info().element_size

    @property
    def width(self):
        return self._info().width

    @property
    def height(self):
        return self._info().height

    @property
    def pitch(self):
        return self._info().pitch


cdef class MemcpyNode(GraphNode):
    """A one-dimensional copy node: dst, src, size."""

    def __repr__(self):
        return f"<MemcpyNode handle={<uintptr_t>self._node:#x} dst={self.dst:#x} src={self.src:#x} size={self.size}>"

    def update(self, *, dst=None, src=None, size=None, dst_owner=None, src_owner=None):
        """Replaces the given parameters in the graph (cuGraphNodeSetParams)."""
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUcontext context = _current_context("MemcpyNode.update")
        cdef cpp.NodeInfo info = self._info()
        cdef cpp.CUdeviceptr d = info.dst if dst is None else _address_of(dst, "MemcpyNode.update", "dst")
        cdef cpp.CUdeviceptr s = info.src if src is None else _address_of(src, "MemcpyNode.update", "src")
        cdef size_t n = info.bytes
        cdef cpp.CUgraphNodeParams params
        if size is not None:
            _check_size(size, "MemcpyNode.update", "size")
            n = size
        params = _memcpy_params(d, s, n, context)
        owners = (_owner_for(dst, dst_owner, "MemcpyNode.update", "dst") if dst is not None else None,
                  _owner_for(src, src_owner, "MemcpyNode.update", "src") if src is not None else None)
        if owners != (None, None):
            _retain(self._graph_def._get(), owners)
        with nogil:
            cpp.set_node_params(node, params)

    @property
    def dst(self):
        return self._info().dst

    @property
    def src(self):
        return self._info().src

    @property
    def size(self):
        return self._info().bytes


cdef class ChildGraphNode(GraphNode):
    """A child graph node: child_graph, the graph it runs (owned by the node)."""

    def __repr__(self):
        return f"<ChildGraphNode handle={<uintptr_t>self._node:#x}>"

    def update(self, child):
        """Makes the node run a copy of child (cuGraphNodeSetParams); child
        must have the topology of the graph it replaces."""
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUgraphNodeParams params
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"ChildGraphNode.update: child must be a GraphDefinition, not {type(child).__name__}")
        params = cpp.child_graph_node(cpp.GraphRef((<GraphDefinition>child)._get()))
        with nogil:
            cpp.set_node_params(node, params)

    @property
    def child_graph(self):
        """The graph the node runs, as a GraphDefinition that does not own it."""
        return GraphDefinition._view(self._info().child, self._graph_def._owner)


cdef class EventRecordNode(GraphNode):
    """A node recording an event."""

    def __repr__(self):
        return f"<EventRecordNode handle={<uintptr_t>self._node:#x}>"

    def update(self, event):
        """Records event instead (cuGraphNodeSetParams)."""
        _update_event(self, event, True, "EventRecordNode.update")

    @property
    def event(self):
        return self._kept


cdef class EventWaitNode(GraphNode):
    """A node waiting for an event."""

    def __repr__(self):
        return f"<EventWaitNode handle={<uintptr_t>self._node:#x}>"

    def update(self, event):
        """Waits for event instead (cuGraphNodeSetParams)."""
        _update_event(self, event, False, "EventWaitNode.update")

    @property
    def event(self):
        return self._kept


cdef _update_event(GraphNode self, event, bint record, str where):
    cdef cpp.CUgraphNode node = self._handle()
    cdef cpp.CUgraphNodeParams params
    if not isinstance(event, Event):
        raise TypeError(f"{where}: event must be an Event, not {type(event).__name__}")
    params = _event_params((<Event>event)._handle, record)
    _retain(self._graph_def._get(), event)
    with nogil:
        cpp.set_node_params(node, params)
    self._kept = event


cdef class HostCallbackNode(GraphNode):
    """A host callback node: callback, the Python callable (None for a ctypes one)."""

    def __repr__(self):
        return f"<HostCallbackNode handle={<uintptr_t>self._node:#x} callback={self._kept!r}>"

    def update(self, fn, *, user_data=None):
        """Calls fn instead (as GraphNode.callback takes it; cuGraphNodeSetParams)."""
        cdef cpp.CUgraphNode node = self._handle()
        cdef cpp.CUgraph graph = self._graph_def._get()
        cdef cpp.CUhostFn function
        cdef cpp.CUhostFn release
        cdef void* data
        cdef cpp.CUgraphNodeParams params
        kept = host_function(fn, user_data, "HostCallbackNode", "update", "fn", &function, &data, &release)
        with nogil:
            cpp.graph_retain(cpp.GraphRef(graph), data, release)
        params = cpp.host_node(function, data)
        with nogil:
            cpp.set_node_params(node, params)
        self._kept = kept

    @property
    def callback(self):
        return self._kept


cdef class ConditionalNode(GraphNode):
    """A conditional node: condition, cond_type (a GraphConditionalType: IF, WHILE, SWITCH)
    and branches, its body graphs. A conditional node read back from the
    driver (nodes()) has neither: CUDA 13.0 cannot report them."""


    def __repr__(self):
        return f"<{type(self).__name__} handle={<uintptr_t>self._node:#x} cond_type={getattr(self._cond_type, 'value', None)!r}>"

    @property
    def condition(self):
        return self._condition

    @property
    def cond_type(self):
        return self._cond_type

    @property
    def branches(self):
        return self._branches if self._branches is not None else ()


cdef class IfNode(ConditionalNode):
    """An if node: then, the body run when the condition is non-zero."""

    @property
    def then(self):
        return self._branches[0]


cdef class IfElseNode(ConditionalNode):
    """An if node with an else branch: then (condition non-zero) and else_."""

    @property
    def then(self):
        return self._branches[0]

    @property
    def else_(self):
        return self._branches[1]


cdef class WhileNode(ConditionalNode):
    """A while node: body, run while the condition is non-zero."""

    @property
    def body(self):
        return self._branches[0]


cdef class SwitchNode(ConditionalNode):
    """A switch node: branches[n] runs when the condition is n."""


cdef class _Released:
    # Runs release(data) when dropped: what an instantiation keeps for a
    # host callback node changed in it.

    def __dealloc__(self):
        if self._release != NULL:
            self._release(self._data)


cdef class ExecutableGraphNode:
    """A node of an instantiated Graph (graph[node]): update() changes what
    later launches do (cuGraphExecNodeSetParams); the Graph is unchanged
    otherwise, and so is the GraphDefinition it came from."""


    def __init__(self):
        raise RuntimeError("ExecutableGraphNode cannot be made directly; index a Graph with a node: graph[node]")

    @staticmethod
    cdef ExecutableGraphNode _make(object cls, Graph graph, GraphNode node):
        cdef ExecutableGraphNode self = cls.__new__(cls)
        self._exec_graph = graph
        self._source = node
        return self

    cdef cpp.CUgraphExec _exec(self) except NULL:
        return self._exec_graph._get().handle()

    def __repr__(self):
        return f"<{type(self).__name__} of {self._source!r}>"

    cdef _set(self, cpp.CUgraphNodeParams params):
        cdef cpp.CUgraphExec exec_ = self._exec()
        cdef cpp.CUgraphNode node = self._source._handle()
        with nogil:
            cpp.set_exec_node_params(exec_, node, params)

    cdef bint _enabled(self) except -1:
        cdef cpp.CUgraphExec exec_ = self._exec()
        cdef cpp.CUgraphNode node = self._source._handle()
        cdef bint value
        with nogil:
            value = cpp.exec_node_enabled(exec_, node)
        return value

    cdef _enable(self, bint enabled):
        cdef cpp.CUgraphExec exec_ = self._exec()
        cdef cpp.CUgraphNode node = self._source._handle()
        with nogil:
            cpp.set_exec_node_enabled(exec_, node, enabled)


cdef class _Switchable(ExecutableGraphNode):
    @property
    def is_enabled(self):
        """Whether the node runs in later launches (cuGraphNodeGetEnabled)."""
        return self._enabled()

    def enable(self):
        """Makes the node run again (cuGraphNodeSetEnabled)."""
        self._enable(True)

    def disable(self):
        """Makes later launches skip the node (cuGraphNodeSetEnabled)."""
        self._enable(False)


cdef class ExecutableKernelNode(_Switchable):
    """A kernel node of an instantiated Graph."""

    def update(self, *, config, kernel, args):
        """Replaces the launch (config, kernel and every argument; args=()
        for none) for later launches (cuGraphExecNodeSetParams)."""
        cdef cpp.CUcontext context = _current_context("ExecutableKernelNode.update")
        cdef vector[uint64_t] storage
        cdef vector[void*] pointers
        cdef cpp.CUgraphNodeParams params
        args = tuple(args)
        params = _kernel_params(config, kernel, args, context, storage, pointers, "ExecutableKernelNode.update")
        self._exec_graph._keep((kernel, args))
        self._set(params)


cdef class ExecutableMemsetNode(_Switchable):
    """A memset node of an instantiated Graph."""

    def update(self, *, dst, value, width, height=1, pitch=0):
        """Replaces every memset parameter for later launches."""
        cdef cpp.CUcontext context = _current_context("ExecutableMemsetNode.update")
        cdef cpp.CUgraphNodeParams params = _memset_params(dst, value, width, height, pitch, context,
                                                           "ExecutableMemsetNode.update")
        self._exec_graph._keep(dst)
        self._set(params)


cdef class ExecutableMemcpyNode(_Switchable):
    """A copy node of an instantiated Graph."""

    def update(self, *, dst, src, size):
        """Replaces the copy (one-dimensional) for later launches."""
        cdef cpp.CUcontext context = _current_context("ExecutableMemcpyNode.update")
        cdef cpp.CUdeviceptr d = _address_of(dst, "ExecutableMemcpyNode.update", "dst")
        cdef cpp.CUdeviceptr s = _address_of(src, "ExecutableMemcpyNode.update", "src")
        _check_size(size, "ExecutableMemcpyNode.update", "size")
        self._exec_graph._keep((dst, src))
        self._set(_memcpy_params(d, s, size, context))


cdef class ExecutableChildGraphNode(ExecutableGraphNode):
    """A child graph node of an instantiated Graph."""

    def update(self, child):
        """Takes the parameters of child (a GraphDefinition of the same topology)."""
        if not isinstance(child, GraphDefinition):
            raise TypeError(f"ExecutableChildGraphNode.update: child must be a GraphDefinition, "
                            f"not {type(child).__name__}")
        self._set(cpp.child_graph_node(cpp.GraphRef((<GraphDefinition>child)._get())))


cdef class ExecutableEventRecordNode(ExecutableGraphNode):
    """An event record node of an instantiated Graph."""

    def update(self, event):
        """Records event in later launches."""
        if not isinstance(event, Event):
            raise TypeError(f"ExecutableEventRecordNode.update: event must be an Event, not {type(event).__name__}")
        self._exec_graph._keep(event)
        self._set(_event_params((<Event>event)._handle, True))


cdef class ExecutableEventWaitNode(ExecutableGraphNode):
    """An event wait node of an instantiated Graph."""

    def update(self, event):
        """Waits for event in later launches."""
        if not isinstance(event, Event):
            raise TypeError(f"ExecutableEventWaitNode.update: event must be an Event, not {type(event).__name__}")
        self._exec_graph._keep(event)
        self._set(_event_params((<Event>event)._handle, False))


cdef class ExecutableHostCallbackNode(ExecutableGraphNode):
    """A host callback node of an instantiated Graph."""

    def update(self, fn, *, user_data=None):
        """Calls fn (as GraphNode.callback takes it) in later launches."""
        cdef cpp.CUhostFn function
        cdef cpp.CUhostFn release
        cdef void* data
        kept = host_function(fn, user_data, "ExecutableHostCallbackNode", "update", "fn", &function, &data, &release)
        # The Graph keeps fn (or the copied user_data) as long as it lives.
        self._exec_graph._keep_data(data, release)
        self._set(cpp.host_node(function, data))


_EXECUTABLE_CLASSES = {
    KernelNode: ExecutableKernelNode, MemsetNode: ExecutableMemsetNode, MemcpyNode: ExecutableMemcpyNode,
    ChildGraphNode: ExecutableChildGraphNode, EventRecordNode: ExecutableEventRecordNode,
    EventWaitNode: ExecutableEventWaitNode, HostCallbackNode: ExecutableHostCallbackNode,
}


cdef object _executable_node(Graph graph, object node):
    if not isinstance(node, GraphNode) or (<GraphNode>node)._node == NULL:
        raise TypeError(f"Graph[node]: node must be a GraphNode of the definition the Graph was made from, "
                        f"not {node!r}")
    for cls in type(node).__mro__:
        found = _EXECUTABLE_CLASSES.get(cls)
        if found is not None:
            return ExecutableGraphNode._make(found, graph, <GraphNode>node)
    return ExecutableGraphNode._make(ExecutableGraphNode, graph, <GraphNode>node)

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Graphs (cuda.core.graph): GraphBuilder builds a graph by stream capture
# (cubind/graph_capture.hpp), Graph is an instantiation of it that runs on a
# stream (cubind::GraphExec), GraphCondition is a conditional node's
# condition, GraphMemoryResource the memory a graph allocates.

cimport cython
from libc.stdint cimport uint64_t, uintptr_t
from libcpp.memory cimport static_pointer_cast
from libcpp.optional cimport optional
from libcpp.string cimport string
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _device_ordinal
from cubind.core._errors cimport _raw_handle
from cubind.core._graph._graph_definition cimport (
    _executable_node,
    GraphDefinition,
    _GraphOwner,
    _instantiate_in,
    _Released,
)
from cubind.core._host_callbacks cimport host_function
from cubind.core._launch cimport _accept_argument_type, _argument_error
from cubind.core._memory._buffer cimport MemoryResource
from cubind.core._stream cimport Stream, _stream_context, _stream_handle, _stream_handle_of

import os
import threading
from cubind.core._errors import _invalid_value, CUDAError
from cubind.core._graph_options import GraphCompleteOptions, GraphDebugPrintOptions


cdef dict _CAPTURE_MODES = {
    "global": cpp.CU_STREAM_CAPTURE_MODE_GLOBAL,
    "thread_local": cpp.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
    "relaxed": cpp.CU_STREAM_CAPTURE_MODE_RELAXED,
}


# What a GraphBuilder is: a primary builder owns the graph it captures; a
# forked one (from split) captures into its primary's graph on a stream of
# its own; a body builder fills a conditional node's body graph, which that
# node owns.
cdef enum:
    _PRIMARY = 0
    _FORKED = 1
    _BODY = 2


# cuGraphExecUpdate's status when the graph cannot take the source's parameters.
cdef int _CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910


cdef class GraphCondition:
    """The condition of conditional nodes (GraphBuilder.create_condition):
    device code sets it with cudaGraphSetConditional. Passed to launch() as a
    kernel argument, it becomes its CUgraphConditionalHandle value."""


    cdef int _added_node(self, object error, str where) except -1:
        # After a conditional node was made with it (error None) or failed to
        # be: the driver refuses a second node of one condition with
        # INVALID_VALUE alone, so that failure says why.
        if error is None:
            self._used = True
            return 0
        if self._used:
            raise ValueError(f"{where}: this GraphCondition already controls a conditional node, and the driver "
                             "takes a condition for one node only; make another with create_condition()") from error
        raise error

    @staticmethod
    cdef GraphCondition _make(unsigned long long value):
        cdef GraphCondition self = GraphCondition.__new__(GraphCondition)
        self._value = value
        return self

    @property
    def handle(self):
        """The CUgraphConditionalHandle (cubind.bindings.driver); int() gives its value."""
        return _raw_handle("driver", "CUgraphConditionalHandle", <uintptr_t>self._value)

    def __int__(self):
        return self._value

    def __repr__(self):
        return f"<GraphCondition handle={self._value:#x}>"

    def __eq__(self, other):
        if not isinstance(other, GraphCondition):
            return NotImplemented
        return self._value == (<GraphCondition>other)._value

    def __hash__(self):
        return hash(("GraphCondition", self._value))


cdef object _complete_options(options):
    if options is None:
        return GraphCompleteOptions()
    if not isinstance(options, GraphCompleteOptions):
        raise TypeError(f"GraphBuilder.complete: options must be a GraphCompleteOptions or None, "
                        f"not {type(options).__name__}")
    return options


cdef Graph _instantiate(cpp.CUgraph graph, cpp.CUstream stream, options):
    # cuGraphInstantiateWithParams in the context of the stream the graph was built on.
    cdef cpp.CUcontext context
    with nogil:
        context = _stream_context(stream)
    return _instantiate_in(graph, context, options)


@cython.no_gc_clear
cdef class GraphBuilder:
    """A graph being built by stream capture: made by
    Device.create_graph_builder() (on a new stream of its own) or
    Stream.create_graph_builder() (on that stream). Between begin_building()
    and end_building(), work submitted to it (launch(builder, ...), Buffer
    copies and fills with stream=builder) is recorded, not run; complete()
    turns the graph into a Graph to launch. split/join fork and merge the
    capture over several streams; if_then, if_else, switch and while_loop add
    conditional nodes whose bodies are built by the builders they return."""

    # The _GraphOwner of the primary builder's graph (shared by the builders
    # split from it and the bodies of its conditional nodes): empty until the
    # capture ends, then the owner of the graph, kept alive by every
    # GraphDefinition viewing the graph or a body in it.

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "directly creating a GraphBuilder object can be ambiguous. Please either call "
            "Device.create_graph_builder() or stream.create_graph_builder()"
        )

    @staticmethod
    cdef GraphBuilder _make(Stream stream, bint owns_stream, int kind, object parent):
        cdef GraphBuilder self = GraphBuilder.__new__(GraphBuilder)
        self._stream = stream
        self._owns_stream = owns_stream
        self._kind = kind
        self._parent = parent
        self._retired = []
        self._owner = _GraphOwner.__new__(_GraphOwner) if parent is None else (<GraphBuilder>parent)._owner
        return self

    cdef cpp.CUgraph _owned_graph(self):
        if self._owner is None or (<_GraphOwner>self._owner)._graph == NULL:
            return NULL
        return (<_GraphOwner>self._owner)._graph.handle()

    @staticmethod
    def _init(stream):
        """A primary builder capturing on stream, which it does not own."""
        if not isinstance(stream, Stream):
            raise TypeError(f"GraphBuilder._init: stream must be a Stream, not {type(stream).__name__}")
        _stream_handle_of(<Stream>stream)
        return GraphBuilder._make(<Stream>stream, False, _PRIMARY, None)

    cdef cpp.CUstream _handle(self) except? NULL:
        if self._closed:
            raise RuntimeError("GraphBuilder has been closed")
        return _stream_handle_of(self._stream)

    cdef cpp.CUgraph _built(self, str method) except? NULL:
        # The graph of a builder that has ended building.
        cdef cpp.CUgraph graph
        if self._closed:
            raise RuntimeError("GraphBuilder has been closed")
        graph = self._body if self._kind == _BODY else self._owned_graph()
        if not self._ended or graph == NULL:
            raise RuntimeError(f"GraphBuilder.{method}: Graph has not finished building.")
        return graph

    cdef _close_retired(self):
        for stream in self._retired:
            stream.close()
        self._retired = []

    cdef int _end_open_capture(self) except -1:
        # Ends a capture this builder opened and has not ended, dropping its
        # graph (an invalidated capture ends with its error; nothing to keep).
        # A builder from split() ends by being joined, so not here.
        cdef cpp.CUstream handle
        cdef cpp.Graph* dropped = NULL
        if not self._started or self._ended or self._kind == _FORKED or self._stream._closed:
            return 0
        handle = self._stream._handle
        try:
            with nogil:
                if self._kind == _BODY:
                    cpp.end_capture_into(cpp.StreamRef(handle))
                else:
                    dropped = cpp.graph_from_capture(cpp.StreamRef(handle))
        except CUDAError:
            pass
        with nogil:
            del dropped
        return 0

    def __dealloc__(self):
        # A builder dropped while it captures (an exception between
        # begin_building and end_building) ends its capture, so its stream
        # is never destroyed mid-capture. no_gc_clear keeps _stream set here
        # when the builder was part of a cycle. Not in a forked child, where
        # the driver cannot be used.
        if self._closed or self._stream is None or cpp.in_forked_child():
            return
        try:
            self._end_open_capture()
        except Exception:
            pass

    def close(self):
        """Lets go of the builder: a capture still open is ended and its graph
        dropped, the stream is closed when the builder made it, and the graph
        of a builder that ended building is destroyed (Graphs completed from it
        stay valid)."""
        if self._closed:
            return
        self._end_open_capture()
        self._body = NULL
        self._owner = None
        self._close_retired()
        if self._owns_stream:
            self._stream.close()
        self._parent = None
        self._closed = True

    @property
    def is_closed(self):
        """Whether close() was called (join closes the builders it merges)."""
        return self._closed

    @property
    def stream(self):
        """The stream the builder captures on."""
        self._handle()
        return self._stream

    @property
    def is_join_required(self):
        """True for a builder from split(): it must be joined back (join)
        before its primary builder ends building."""
        return self._kind == _FORKED

    @property
    def graph_definition(self):
        """The graph being built as a GraphDefinition sharing it: nodes added
        through it are part of what complete() instantiates, and it stays
        valid after close(). For a primary builder, once it ended building;
        for a conditional body, before begin_building or after end_building;
        never for a builder from split()."""
        if self._closed:
            raise RuntimeError("GraphBuilder has been closed")
        if self._kind == _FORKED:
            raise RuntimeError("GraphBuilder.graph_definition: a builder from split() shares its primary "
                               "builder's graph; ask the primary builder")
        if self._started and not self._ended:
            raise RuntimeError("GraphBuilder.graph_definition: the builder is building; end_building() first")
        if self._kind == _BODY:
            return GraphDefinition._view(self._body, self._owner)
        if not self._ended or self._owned_graph() == NULL:
            raise RuntimeError("GraphBuilder.graph_definition: Graph has not finished building.")
        return GraphDefinition._view(self._owned_graph(), self._owner)

    def begin_building(self, mode="relaxed"):
        """Starts capturing (cuStreamBeginCapture; cuStreamBeginCaptureToGraph
        for a conditional body). mode says which unsafe calls other code may
        make meanwhile: "global" (none, in any thread), "thread_local" (none in
        this thread), "relaxed" (no restriction). Returns the builder."""
        cdef cpp.CUstream handle = self._handle()
        cdef cpp.CUstreamCaptureMode cmode
        if not isinstance(mode, str) or mode not in _CAPTURE_MODES:
            raise ValueError(f"Unsupported build mode: {mode!r}; use 'global', 'thread_local' or 'relaxed'")
        if self._kind == _FORKED:
            raise RuntimeError("GraphBuilder.begin_building: a builder from split() is building already, "
                               "into its primary builder's graph")
        if self._ended:
            raise RuntimeError("Cannot resume building after building has ended.")
        if self._started:
            raise RuntimeError("GraphBuilder.begin_building: the builder is building already")
        cmode = _CAPTURE_MODES[mode]
        with nogil:
            if self._kind == _BODY:
                cpp.begin_capture_into(cpp.StreamRef(handle), cpp.GraphRef(self._body), cmode)
            else:
                cpp.StreamRef(handle).begin_capture(cmode)
        self._started = True
        return self

    @property
    def is_building(self):
        """True while the stream is capturing. Raises RuntimeError once an
        illegal call has invalidated the capture: end_building must end it."""
        cdef cpp.CUstream handle = self._handle()
        cdef cpp.CaptureStatus status
        with nogil:
            status = cpp.capture_status(cpp.StreamRef(handle))
        if status == cpp.CaptureStatus.active:
            return True
        if status == cpp.CaptureStatus.invalidated:
            raise RuntimeError("Build process encountered an error and has been invalidated. "
                               "Build process must now be ended.")
        return False

    def end_building(self):
        """Ends the capture (cuStreamEndCapture); the graph is then ready for
        complete(), embed() and debug_dot_print(). Returns the builder."""
        cdef cpp.CUstream handle = self._handle()
        cdef cpp.Graph* graph = NULL
        if self._kind == _FORKED:
            raise RuntimeError("GraphBuilder.end_building: a builder from split() ends by being joined "
                               "(GraphBuilder.join) into the builder it was split from")
        if not self._started or self._ended:
            raise RuntimeError("GraphBuilder.end_building: the builder is not building; call begin_building() first")
        try:
            with nogil:
                if self._kind == _BODY:
                    cpp.end_capture_into(cpp.StreamRef(handle))
                else:
                    graph = cpp.graph_from_capture(cpp.StreamRef(handle))
        finally:
            # Failed or not, the capture is over (an invalidated one ends with its error).
            self._ended = True
            self._close_retired()
        if self._kind == _PRIMARY:
            (<_GraphOwner>self._owner)._graph = graph
        return self

    def complete(self, options=None):
        """Instantiates the graph (cuGraphInstantiateWithParams) with options
        (a GraphCompleteOptions): a Graph to launch, independent of the builder."""
        cdef cpp.CUgraph graph = self._built("complete")
        return _instantiate(graph, _stream_handle_of(self._stream), options)

    def debug_dot_print(self, path, options=None):
        """Writes a GraphViz DOT description of the graph to path
        (cuGraphDebugDotPrint); options (a GraphDebugPrintOptions) adds detail."""
        cdef cpp.CUgraph graph = self._built("debug_dot_print")
        _dot_print(graph, path, options)

    def split(self, count):
        """count builders that start from the work captured so far: this one
        first, then count - 1 new ones, each on a new stream; their work runs
        concurrently until join() merges them."""
        cdef cpp.CUstream handle = self._handle()
        cdef cpp.CUstream forked
        cdef GraphBuilder builder
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"GraphBuilder.split: count must be an int, not {type(count).__name__}")
        if count < 2:
            raise ValueError(f"Invalid split count: expecting >= 2, got {count}")
        if not self.is_building:
            raise RuntimeError("GraphBuilder.split: the builder is not building; call begin_building() first")
        device = self._stream.device
        builders = [self]
        for _ in range(count - 1):
            stream = device.create_stream()
            forked = _stream_handle_of(<Stream>stream)
            with nogil:
                cpp.StreamRef(forked).wait(cpp.StreamRef(handle))
            builder = GraphBuilder._make(<Stream>stream, True, _FORKED, self)
            builder._started = True
            builders.append(builder)
        return tuple(builders)

    @staticmethod
    def join(*graph_builders):
        """Merges builders: the one that was not split off (else the first)
        waits for the work of all the others, which are closed. Returns it."""
        cdef GraphBuilder root = None
        cdef GraphBuilder other
        cdef cpp.CUstream root_handle
        cdef cpp.CUstream other_handle
        for builder in graph_builders:
            if not isinstance(builder, GraphBuilder):
                raise TypeError(f"GraphBuilder.join: every argument must be a GraphBuilder, not {type(builder).__name__}")
        if len(graph_builders) < 2:
            raise ValueError("Must join with at least two graph builders")
        for builder in graph_builders:
            if (<GraphBuilder>builder)._kind != _FORKED:
                root = <GraphBuilder>builder
                break
        if root is None:
            root = <GraphBuilder>graph_builders[0]
        root_handle = root._handle()
        for builder in graph_builders:
            other = <GraphBuilder>builder
            if other is root:
                continue
            other_handle = other._handle()
            with nogil:
                cpp.StreamRef(root_handle).wait(cpp.StreamRef(other_handle))
            # The fork's stream is part of the capture until it ends: closed then.
            root._retired.extend(other._retired)
            other._retired = []
            if other._owns_stream:
                root._retired.append(other._stream)
                other._owns_stream = False
            other.close()
        return root

    def __cuda_stream__(self):
        return (0, <uintptr_t>self._handle())

    def create_condition(self, default_value=None):
        """A condition for conditional nodes of this graph
        (cuGraphConditionalHandleCreate). With default_value, the condition
        takes that value at the start of every launch; without, device code
        must set it (cudaGraphSetConditional) before its node runs."""
        cdef cpp.CUstream handle = self._handle()
        cdef optional[unsigned int] value
        cdef unsigned long long condition
        if default_value is not None:
            if not isinstance(default_value, int):
                raise TypeError(f"GraphBuilder.create_condition: default_value must be an int or None, "
                                f"not {type(default_value).__name__}")
            if not 0 <= default_value <= 0xFFFFFFFF:
                raise ValueError(f"GraphBuilder.create_condition: default_value is {default_value}; "
                                 "it must fit an unsigned 32-bit int")
            value = <unsigned int>default_value
        with nogil:
            condition = cpp.create_condition(cpp.StreamRef(handle), value)
        return GraphCondition._make(condition)

    cdef tuple _conditional(self, condition, cpp.CUgraphConditionalNodeType kind, unsigned int count, str method):
        cdef cpp.CUstream handle = self._handle()
        cdef vector[cpp.CUgraph] bodies
        cdef unsigned long long value
        cdef GraphBuilder body
        cdef size_t i
        if not isinstance(condition, GraphCondition):
            raise TypeError(f"GraphBuilder.{method}: condition must be a GraphCondition (from create_condition), "
                            f"not {type(condition).__name__}")
        value = (<GraphCondition>condition)._value
        try:
            with nogil:
                bodies = cpp.capture_conditional(cpp.StreamRef(handle), value, kind, count)
        except CUDAError as error:
            (<GraphCondition>condition)._added_node(error, f"GraphBuilder.{method}")
        (<GraphCondition>condition)._added_node(None, method)
        device = self._stream.device
        out = []
        for i in range(bodies.size()):
            body = GraphBuilder._make(<Stream>device.create_stream(), True, _BODY, self)
            body._body = bodies[i]
            out.append(body)
        return tuple(out)

    def if_then(self, condition):
        """Adds an if node: its body (built by the builder returned) runs
        when the condition is non-zero."""
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_IF, 1, "if_then")[0]

    def if_else(self, condition):
        """Adds an if node with an else branch: (then builder, else builder)."""
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_IF, 2, "if_else")

    def switch(self, condition, count):
        """Adds a switch node with count cases: a builder per case; case n
        runs when the condition is n, none when it is count or more."""
        if not isinstance(count, int) or isinstance(count, bool):
            raise TypeError(f"GraphBuilder.switch: count must be an int, not {type(count).__name__}")
        if not 0 <= count <= 0xFFFFFFFF:
            raise OverflowError(f"GraphBuilder.switch: count is {count}, which is not an unsigned 32-bit int")
        if count == 0:
            raise _invalid_value("GraphBuilder.switch: count is 0; a switch node needs at least 1 branch",
                                 "cuStreamUpdateCaptureDependencies")
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_SWITCH, count, "switch")

    def while_loop(self, condition):
        """Adds a while node: its body runs again and again while the
        condition is non-zero (checked before each iteration)."""
        return self._conditional(condition, cpp.CU_GRAPH_COND_TYPE_WHILE, 1, "while_loop")[0]

    def embed(self, child):
        """Adds a child graph node running a copy of child's graph (child
        must have ended building)."""
        cdef cpp.CUstream handle = self._handle()
        cdef cpp.CUgraph graph
        if not isinstance(child, GraphBuilder):
            raise TypeError(f"GraphBuilder.embed: child must be a GraphBuilder, not {type(child).__name__}")
        graph = (<GraphBuilder>child)._built("embed")
        with nogil:
            cpp.capture_child_graph(cpp.StreamRef(handle), cpp.GraphRef(graph))

    def callback(self, fn, *, user_data=None):
        """Adds a host node calling fn on a driver thread at every launch of
        the graph (cuLaunchHostFunc under capture). fn is a Python callable
        taking no arguments, or a ctypes function pointer of CUhostFn's
        prototype, CFUNCTYPE(None, c_void_p), called with user_data: an int
        (an address passed as it is) or a bytes-like object (copied). The
        graph keeps fn (the ctypes object too) and the copy alive for as
        long as it or an instantiation of it lives. fn must not call CUDA;
        what a Python callable raises goes to sys.unraisablehook."""
        cdef cpp.CUstream handle = self._handle()
        cdef void* data
        cdef cpp.CUhostFn release
        cdef cpp.CUhostFn function
        host_function(fn, user_data, "GraphBuilder", "callback", "fn", &function, &data, &release)
        # The graph's user object owns data from here on, failed or not
        # (capture_host_func releases it on failure).
        with nogil:
            cpp.capture_host_func(cpp.StreamRef(handle), function, data, release)

    def __repr__(self):
        state = "closed" if self._closed else "built" if self._ended else "building" if self._started else "new"
        kind = ("primary", "forked", "conditional body")[self._kind]
        return f"<GraphBuilder {kind} {state}>"


def _graph_builder_on(Stream stream, bint owns_stream):
    # Device.create_graph_builder and Stream.create_graph_builder, which load
    # this module on their first call rather than with cubind.core.
    return GraphBuilder._make(stream, owns_stream, _PRIMARY, None)


cdef _dot_print(cpp.CUgraph graph, path, options):
    cdef string cpath
    cdef unsigned int flags
    if options is None:
        options = GraphDebugPrintOptions()
    elif not isinstance(options, GraphDebugPrintOptions):
        raise TypeError(f"debug_dot_print: options must be a GraphDebugPrintOptions or None, "
                        f"not {type(options).__name__}")
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"debug_dot_print: path must be a str or os.PathLike, not {type(path).__name__}")
    cpath = os.fsencode(path)
    flags = options._to_flags()
    with nogil:
        cpp.debug_dot_print(cpp.GraphRef(graph), cpath, flags)


cdef class Graph:
    """An executable graph (GraphBuilder.complete): launch(stream) runs all of
    its work on a stream, as often as wanted (cuGraphLaunch)."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError("directly constructing a Graph instance is not supported; use GraphBuilder.complete()")

    def __dealloc__(self):
        if self._exec != NULL:
            with nogil:
                del self._exec
            self._exec = NULL

    @staticmethod
    cdef Graph _make(cpp.GraphExec* exec_, int device_id):
        cdef Graph self = Graph.__new__(Graph)
        self._exec = exec_
        self._device_id = device_id
        return self

    cdef cpp.GraphExec* _get(self) except NULL:
        if self._exec == NULL:
            raise RuntimeError("Graph has been closed")
        return self._exec

    def close(self):
        """Destroys the instantiation (cuGraphExecDestroy); launches already
        queued still run."""
        if self._exec != NULL:
            with nogil:
                del self._exec
            self._exec = NULL

    @property
    def is_closed(self):
        return self._exec == NULL

    @property
    def handle(self):
        """The CUgraphExec (cubind.bindings.driver); int() gives its address."""
        return _raw_handle("driver", "CUgraphExec", <uintptr_t>self._get().handle())

    cdef _keep(self, object obj):
        if self._kept is None:
            self._kept = []
        self._kept.append(obj)

    cdef _keep_data(self, void* data, cpp.CUhostFn release):
        cdef _Released kept = _Released.__new__(_Released)
        kept._data = data
        kept._release = release
        self._keep(kept)

    def __getitem__(self, node):
        """graph[node]: the instance of node (a node of the GraphDefinition
        this Graph was made from) in this Graph, whose update() changes later
        launches; kernel, memset and memcpy nodes can also be disabled."""
        self._get()
        return _executable_node(self, node)

    def update(self, source):
        """Takes over the parameters of source (a GraphDefinition, or a
        GraphBuilder that ended building), whose graph must have this one's
        topology (cuGraphExecUpdate); on failure CUDAError says why and the
        Graph is unchanged."""
        cdef cpp.GraphExec* exec_ = self._get()
        cdef cpp.CUgraph graph
        if isinstance(source, GraphDefinition):
            graph = (<GraphDefinition>source)._get()
        elif isinstance(source, GraphBuilder):
            if not (<GraphBuilder>source)._ended and not (<GraphBuilder>source)._closed:
                # cuda.core's type and words, then which call is missing.
                raise ValueError("Graph has not finished building. (Graph.update: the source GraphBuilder has not "
                                 "ended building; call its end_building() first)")
            graph = (<GraphBuilder>source)._built("update")
        else:
            raise TypeError(f"expected GraphBuilder or GraphDefinition, got {type(source).__name__} "
                            "(Graph.update's source)")
        try:
            with nogil:
                exec_.update(cpp.GraphRef(graph))
        except CUDAError as error:
            # The core names the driver's reason (CUgraphExecUpdateResult) when
            # the graph could not take the source's parameters.
            if error.status != _CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and "the driver's reason" not in str(error):
                raise
            failed = CUDAError(f"Graph update failed: {error}")
            for name in ("status", "api_function", "error_name", "error_string"):
                setattr(failed, name, getattr(error, name))
            raise failed from error

    def upload(self, stream):
        """Prepares the graph's resources on the device ahead of its first
        launch, ordered on stream (cuGraphUpload)."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef cpp.GraphExec* exec_ = self._get()
        with nogil:
            exec_.upload(cpp.StreamRef(handle))

    def launch(self, stream):
        """Runs the whole graph on stream (cuGraphLaunch)."""
        cdef cpp.CUstream handle = _stream_handle(stream)
        cdef cpp.GraphExec* exec_ = self._get()
        with nogil:
            exec_.launch(cpp.StreamRef(handle))

    def __repr__(self):
        if self._exec == NULL:
            return "<Graph closed>"
        return f"<Graph handle={<uintptr_t>self._exec.handle():#x}>"


_GRAPH_MEMORY_RESOURCES = {}


_GRAPH_MEMORY_LOCK = threading.Lock()


def _zero_only(name, value):
    # A high watermark is only reset (set to 0); cuda.core's type and words,
    # then what setting it to 0 does.
    if not isinstance(value, int) or isinstance(value, bool) or value != 0:
        raise AttributeError(f"Attribute '{name}' may only be set to zero (got {value!r}). "
                             f"Setting GraphMemoryResourceAttributes.{name} to 0 resets it to the current usage")


class GraphMemoryResourceAttributes:
    """The memory graphs hold on a device (cuDeviceGetGraphMemAttribute); the
    high watermarks can be reset by setting them to 0."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("GraphMemoryResourceAttributes cannot be instantiated directly; "
                           "use GraphMemoryResource.attributes")

    @classmethod
    def _init(cls, mr):
        self = cls.__new__(cls)
        self._mr = mr
        return self

    def __repr__(self):
        return (f"GraphMemoryResourceAttributes(reserved_mem_current={self.reserved_mem_current}, "
                f"reserved_mem_high={self.reserved_mem_high}, used_mem_current={self.used_mem_current}, "
                f"used_mem_high={self.used_mem_high})")

    @property
    def reserved_mem_current(self):
        """Bytes of backing memory reserved for graphs now."""
        return self._mr._query(cpp.CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)

    @reserved_mem_current.setter
    def reserved_mem_current(self, value):
        # What a read-only attribute of a compiled class says, as cuda.core's does.
        raise AttributeError(f"attribute 'reserved_mem_current' of "
                             f"'{type(self).__module__}.{type(self).__qualname__}' objects is not writable "
                             "(it is read from the driver)")

    @property
    def reserved_mem_high(self):
        """High watermark of reserved_mem_current; set it to 0 to reset it."""
        return self._mr._query(cpp.CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH)

    @reserved_mem_high.setter
    def reserved_mem_high(self, value):
        _zero_only("reserved_mem_high", value)
        self._mr._reset(cpp.CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, "reserved_mem_high", value)

    @property
    def used_mem_current(self):
        """Bytes of graph allocations in use now."""
        return self._mr._query(cpp.CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT)

    @used_mem_current.setter
    def used_mem_current(self, value):
        # What a read-only attribute of a compiled class says, as cuda.core's does.
        raise AttributeError(f"attribute 'used_mem_current' of "
                             f"'{type(self).__module__}.{type(self).__qualname__}' objects is not writable "
                             "(it is read from the driver)")

    @property
    def used_mem_high(self):
        """High watermark of used_mem_current; set it to 0 to reset it."""
        return self._mr._query(cpp.CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)

    @used_mem_high.setter
    def used_mem_high(self, value):
        _zero_only("used_mem_high", value)
        self._mr._reset(cpp.CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, "used_mem_high", value)


cdef class _GraphMemoryResourceBase(MemoryResource):
    # GraphMemoryResource's compiled part; the class itself is a Python
    # subclass, whose __new__ hands out the one resource of each device.


    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._graph_pool.reset()

    def __init__(self, device_id):
        pass

    cdef int _ensure(self) except -1:
        cdef int ordinal = self._device_id
        if not self._graph_pool:
            with nogil:
                self._graph_pool = cpp.graph_memory_resource_new(ordinal)
            self._cpp = static_pointer_cast[cpp.MemoryResource, cpp.GraphMemoryResource](self._graph_pool)
        return 0

    def close(self):
        """Does nothing: the resource is the device's, shared by all."""

    def trim(self):
        """Returns the unused memory cached for graphs on the device to the OS
        (cuDeviceGraphMemTrim)."""
        self._ensure()
        with nogil:
            self._graph_pool.get().trim()

    @property
    def attributes(self):
        """The device's graph memory use: a GraphMemoryResourceAttributes."""
        return GraphMemoryResourceAttributes._init(self)

    def _query(self, int which):
        cdef uint64_t value
        self._ensure()
        with nogil:
            value = self._graph_pool.get().attribute(<cpp.CUgraphMem_attribute>which)
        return value

    def _reset(self, int which, str name, value):
        _zero_only(name, value)
        self._ensure()
        with nogil:
            self._graph_pool.get().reset_high_watermark(<cpp.CUgraphMem_attribute>which)

    @property
    def device_id(self):
        return self._device_id

    @property
    def is_device_accessible(self):
        return True

    @property
    def is_host_accessible(self):
        return False

    def __repr__(self):
        return f"<GraphMemoryResource device_id={self._device_id}>"


class GraphMemoryResource(_GraphMemoryResourceBase):
    """GraphMemoryResource(device_id)

    The memory of graphs on a device (one resource per device, a Device or
    an ordinal): allocate(size, stream=builder) while the builder is building
    adds an allocation node (cuMemAllocAsync under capture), and closing the
    Buffer on the builder a free node. Allocating on a stream that is not
    capturing raises RuntimeError."""

    def __new__(cls, device_id):
        cdef int ordinal = _device_ordinal(device_id)
        with _GRAPH_MEMORY_LOCK:
            found = _GRAPH_MEMORY_RESOURCES.get(ordinal)
            if found is None:
                found = _GraphMemoryResourceBase.__new__(cls, ordinal)
                (<_GraphMemoryResourceBase>found)._device_id = ordinal
                _GRAPH_MEMORY_RESOURCES[ordinal] = found
        return found


cdef void* _condition_bytes(object arg, size_t size, Py_ssize_t index, object kernel) except NULL:
    # A GraphCondition as a kernel argument: its CUgraphConditionalHandle, for
    # device code's cudaGraphSetConditional.
    if size != 8:
        _argument_error(kernel, index, size, arg, "cannot take a GraphCondition (an 8-byte handle)")
    return &(<GraphCondition>arg)._value


_accept_argument_type(GraphCondition, _condition_bytes)

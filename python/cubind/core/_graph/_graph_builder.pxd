# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport MemoryResource
from cubind.core._stream cimport Stream

cdef class GraphCondition:
    cdef object __weakref__
    cdef readonly unsigned long long _value
    cdef bint _used     # a conditional node was made with it
    cdef int _added_node(self, object error, str where) except -1
    @staticmethod
    cdef GraphCondition _make(unsigned long long value)

cdef class GraphBuilder:
    cdef object __weakref__
    cdef Stream _stream
    cdef bint _owns_stream
    cdef int _kind
    cdef bint _started
    cdef bint _ended
    cdef bint _closed
    cdef cpp.CUgraph _body          # a body builder's graph, owned by its node
    cdef object _parent             # the builder a body's node was added by
    cdef list _retired              # streams of joined forks, closed once the capture ends
    cdef object _owner
    @staticmethod
    cdef GraphBuilder _make(Stream stream, bint owns_stream, int kind, object parent)
    cdef cpp.CUgraph _owned_graph(self)
    cdef cpp.CUstream _handle(self) except? NULL
    cdef cpp.CUgraph _built(self, str method) except? NULL
    cdef _close_retired(self)
    cdef int _end_open_capture(self) except -1
    cdef tuple _conditional(self, condition, cpp.CUgraphConditionalNodeType kind, unsigned int count, str method)

cdef class Graph:
    cdef object __weakref__
    cdef cpp.GraphExec* _exec
    cdef int _device_id
    cdef list _kept     # what node updates of this instantiation use (kernel arguments, events, callbacks)
    @staticmethod
    cdef Graph _make(cpp.GraphExec* exec_, int device_id)
    cdef cpp.GraphExec* _get(self) except NULL
    cdef _keep(self, object obj)
    cdef _keep_data(self, void* data, cpp.CUhostFn release)

cdef class _GraphMemoryResourceBase(MemoryResource):
    cdef shared_ptr[cpp.GraphMemoryResource] _graph_pool
    cdef int _device_id
    cdef int _ensure(self) except -1
cdef object _complete_options(options)
cdef _dot_print(cpp.CUgraph graph, path, options)

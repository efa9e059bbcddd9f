# cython: language_level=3
# The C++ core (core/include/cubind/*.hpp) as cubind.core's Cython modules see
# it. Every call that can throw translates the C++ exception through
# cubind_core::translate (_translate.hpp) into CUDAError, ValueError, ...

from cpython.object cimport PyObject
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libcpp cimport bool
from libcpp.map cimport map
from libcpp.memory cimport shared_ptr, unique_ptr
from libcpp.optional cimport optional
from libcpp.string cimport string
from libcpp.utility cimport pair
from libcpp.vector cimport vector

cdef extern from "<cuda.h>" nogil:
    ctypedef enum CUdevice_attribute:
        pass
    ctypedef enum CUfunction_attribute:
        pass
    ctypedef uintptr_t CUdeviceptr
    ctypedef struct CUctx_st
    ctypedef CUctx_st* CUcontext
    ctypedef struct CUstream_st
    ctypedef CUstream_st* CUstream
    ctypedef struct CUevent_st
    ctypedef CUevent_st* CUevent
    ctypedef struct CUkern_st
    ctypedef CUkern_st* CUkernel
    ctypedef struct CUlib_st
    ctypedef CUlib_st* CUlibrary
    ctypedef struct CUgreenCtx_st
    ctypedef CUgreenCtx_st* CUgreenCtx
    ctypedef struct CUmemPoolHandle_st
    ctypedef CUmemPoolHandle_st* CUmemoryPool
    ctypedef void (*CUhostFn)(void* data) noexcept nogil
    CUstream CU_STREAM_LEGACY
    CUstream CU_STREAM_PER_THREAD

cdef extern from "<cuda.h>" nogil:
    ctypedef struct CUgraph_st
    ctypedef CUgraph_st* CUgraph
    ctypedef struct CUgraphExec_st
    ctypedef CUgraphExec_st* CUgraphExec
    ctypedef unsigned long long CUgraphConditionalHandle
    ctypedef enum CUstreamCaptureMode:
        CU_STREAM_CAPTURE_MODE_GLOBAL
        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        CU_STREAM_CAPTURE_MODE_RELAXED
    ctypedef enum CUgraphConditionalNodeType:
        CU_GRAPH_COND_TYPE_IF
        CU_GRAPH_COND_TYPE_WHILE
        CU_GRAPH_COND_TYPE_SWITCH
    ctypedef enum CUgraphMem_attribute:
        CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT
        CU_GRAPH_MEM_ATTR_USED_MEM_HIGH
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH

cdef extern from "_translate.hpp" namespace "cubind_core":
    void translate()

cdef extern from "cubind/device.hpp" namespace "cubind" nogil:
    # Device and Context have no default constructor, which Cython's
    # temporaries need: cubind.core reaches them by ordinal (_owners.hpp).
    cdef cppclass ComputeCapability:
        int major
        int minor

    cdef cppclass Device:
        @staticmethod
        optional[Device] current_if_any() except +translate
        int ordinal()

cdef extern from "cubind/context.hpp" namespace "cubind" nogil:
    # No default constructor: a Context returned by value needs
    # @cython.cpp_locals(True) on the function that calls.
    cdef cppclass Context:
        @staticmethod
        Context from_native_handle(CUcontext handle) except +translate
        @staticmethod
        optional[Context] current() except +translate
        CUcontext handle()
        Device device() except +translate
        void set_current() except +translate
        @staticmethod
        void clear_current() except +translate

    bint in_forked_child() noexcept
    void keep_primary_contexts_at_exit() noexcept

cdef extern from "cubind/event.hpp" namespace "cubind" nogil:
    cdef cppclass EventRef:
        EventRef(CUevent handle)
        CUevent handle()
        void record(StreamRef stream) except +translate
        bool query() except +translate
        void sync() except +translate

    cdef cppclass EventOptions:
        EventOptions()
        bool blocking_sync
        bool interprocess

    cdef cppclass Event(EventRef):
        pass

    cdef cppclass TimedEvent(Event):
        pass

cdef extern from "cubind/stream.hpp" namespace "cubind" nogil:
    cdef cppclass StreamRef:
        StreamRef(CUstream handle)
        CUstream handle()
        void sync() except +translate
        int priority() except +translate
        bool is_non_blocking() except +translate
        Context context() except +translate
        void wait(EventRef event) except +translate
        void wait(StreamRef other) except +translate
        void launch_host_func(CUhostFn fn, void* data) except +translate
        void begin_capture(CUstreamCaptureMode mode) except +translate

    cdef cppclass StreamOptions:
        StreamOptions()
        bool non_blocking
        optional[int] priority

    cdef cppclass Stream:
        CUstream handle()

cdef extern from "cubind/device_resources.hpp" namespace "cubind" nogil:
    # Held on the heap (no default constructor): made by _owners.hpp.
    cdef cppclass SmResource:
        unsigned int sm_count()
        unsigned int min_partition_size()
        unsigned int coscheduled_alignment()

    cdef cppclass SmSplitOptions:
        SmSplitOptions()
        unsigned int groups
        optional[unsigned int] sm_count
        bool ignore_coscheduling

cdef extern from "cubind/green_context.hpp" namespace "cubind" nogil:
    cdef cppclass GreenContext:
        CUgreenCtx handle()
        void sync() except +translate

cdef extern from "cubind/memory_resource.hpp" namespace "cubind" nogil:
    cdef cppclass MemoryResource:
        void* allocate(size_t bytes, StreamRef stream) except +translate
        void deallocate(void* ptr, size_t bytes, StreamRef stream) except +translate
        bool is_device_accessible()
        bool is_host_accessible()
        int device_id()

    cdef cppclass MemoryPool(MemoryResource):
        CUmemoryPool handle()
        bool owns_pool()
        bool is_ipc_enabled()
        bool is_imported()
        uint64_t release_threshold() except +translate
        uint64_t used_memory() except +translate
        uint64_t reserved_memory() except +translate

    cdef cppclass DeviceMemoryResourceOptions:
        DeviceMemoryResourceOptions()
        optional[uint64_t] release_threshold
        size_t max_size
        bool ipc_enabled

    cdef cppclass DeviceMemoryResource(MemoryPool):
        pass

    cdef cppclass PinnedMemoryResourceOptions:
        PinnedMemoryResourceOptions()
        bool ipc_enabled
        size_t max_size
        optional[int] numa_id

    cdef cppclass PinnedMemoryResource(MemoryPool):
        int numa_id()


cdef extern from "cubind/buffer.hpp" namespace "cubind" nogil:
    cdef cppclass Buffer:
        Buffer()
        @staticmethod
        Buffer allocate(shared_ptr[MemoryResource] resource, size_t size, StreamRef stream) except +translate
        void* data()
        CUdeviceptr handle()
        size_t size()
        void close() except +translate
        void close(StreamRef stream) except +translate
        void* release()
        void copy_from(const Buffer& src, StreamRef stream) except +translate
        void fill(uint8_t value, StreamRef stream) except +translate
        void fill(uint16_t value, StreamRef stream) except +translate
        void fill(uint32_t value, StreamRef stream) except +translate

cdef extern from "cubind/memory.hpp" namespace "cubind" nogil:
    # By raw address, in the stream's context (a StreamContextGuard).
    void copy_memory(CUdeviceptr dst, CUdeviceptr src, size_t bytes, StreamRef stream) except +translate
    void fill_memory(CUdeviceptr dst, uint8_t value, size_t count, StreamRef stream) except +translate
    void fill_memory(CUdeviceptr dst, uint16_t value, size_t count, StreamRef stream) except +translate
    void fill_memory(CUdeviceptr dst, uint32_t value, size_t count, StreamRef stream) except +translate
    int pointer_device_ordinal(CUdeviceptr ptr) except +translate

cdef extern from "cubind/graphics_resource.hpp" namespace "cubind" nogil:
    # The CUgraphicsResource, CUarray and CUmipmappedArray handles are read
    # as void* (each converts to it), as cubind.core hands them out as ints.
    enum class GraphicsMapFlags "cubind::GraphicsMapFlags":
        none
        read_only
        write_discard

    cdef cppclass GraphicsResource:
        void* handle()
        bool is_mapped()
        void set_map_flags(GraphicsMapFlags flags) except +translate
        void map(StreamRef stream) except +translate
        void* mapped_array(unsigned int array_index, unsigned int mip_level) except +translate
        void* mapped_mipmapped_array() except +translate
        void unmap(StreamRef stream) except +translate
        void unmap() except +translate
        void close() except +translate

cdef extern from "cubind/checkpoint.hpp" namespace "cubind::checkpoint" nogil:
    enum class ProcessState "cubind::checkpoint::ProcessState":
        running
        locked
        checkpointed
        failed

    const char* process_state_name "cubind::checkpoint::to_string"(ProcessState state)
    bool driver_supports_checkpoint() except +translate

    cdef cppclass Process "cubind::checkpoint::Process":
        Process(int pid) except +translate
        int pid()
        ProcessState state() except +translate
        int restore_thread_id() except +translate
        void lock(unsigned int timeout_ms) except +translate
        void checkpoint() except +translate
        void unlock() except +translate

cdef extern from "_owners.hpp" namespace "cubind_core" nogil:
    # OpenGL interop and checkpointing (graphics_resource.hpp, checkpoint.hpp).
    GraphicsResource* graphics_register_gl_buffer(unsigned int buffer, unsigned int flags) except +translate
    GraphicsResource* graphics_register_gl_image(unsigned int image, unsigned int target,
                                                 unsigned int flags) except +translate
    void graphics_map_buffer(Buffer& into, GraphicsResource& resource, CUstream stream) except +translate
    string checkpoint_uuid_bytes(const string& text) except +translate
    void checkpoint_restore(const Process& process, const string& pairs) except +translate

cdef extern from "<cuda.h>" nogil:
    ctypedef struct CUtensorMap:
        pass
    ctypedef enum CUtensorMapDataType:
        pass
    ctypedef enum CUtensorMapInterleave:
        pass
    ctypedef enum CUtensorMapSwizzle:
        pass
    ctypedef enum CUtensorMapL2promotion:
        pass
    ctypedef enum CUtensorMapFloatOOBfill:
        pass

cdef extern from "cubind/tensor_map.hpp" namespace "cubind" nogil:
    # The driver wants a context current: the caller enters one.
    cdef cppclass TensorMapTiled:
        TensorMapTiled()
        CUtensorMapDataType data_type
        unsigned int rank
        void* address
        uint64_t sizes[5]
        uint64_t strides[4]
        uint32_t box[5]
        uint32_t element_strides[5]
        CUtensorMapInterleave interleave
        CUtensorMapSwizzle swizzle
        CUtensorMapL2promotion l2_promotion
        CUtensorMapFloatOOBfill oob_fill

    cdef cppclass TensorMapIm2col:
        TensorMapIm2col()
        CUtensorMapDataType data_type
        unsigned int rank
        void* address
        uint64_t sizes[5]
        uint64_t strides[4]
        int lower_corner[3]
        int upper_corner[3]
        unsigned int channels_per_pixel
        unsigned int pixels_per_column
        uint32_t element_strides[5]
        CUtensorMapInterleave interleave
        CUtensorMapSwizzle swizzle
        CUtensorMapL2promotion l2_promotion
        CUtensorMapFloatOOBfill oob_fill

    CUtensorMap encode_tensor_map(const TensorMapTiled& tiled) except +translate
    CUtensorMap encode_tensor_map(const TensorMapIm2col& im2col) except +translate
    void replace_tensor_map_address(CUtensorMap& map, void* address) except +translate

cdef extern from "cubind/kernel.hpp" namespace "cubind" nogil:
    cdef cppclass KernelParam:
        size_t offset
        size_t size

    cdef cppclass BlockSizeSuggestion:
        int min_grid_size
        int block_size

    cdef cppclass Kernel:
        Kernel()
        @staticmethod
        Kernel from_native_handle(CUkernel handle) except +translate
        CUkernel handle() except +translate
        const string& name() except +translate
        const vector[KernelParam]& param_info() except +translate
        int max_active_blocks_per_multiprocessor(int block_size, size_t dynamic_shared_memory_bytes, unsigned int flags) except +translate
        BlockSizeSuggestion max_potential_block_size(size_t dynamic_shared_memory_bytes, int block_size_limit, unsigned int flags) except +translate
        size_t available_dynamic_shared_memory_per_block(int blocks_per_multiprocessor, int block_size) except +translate
        int max_potential_cluster_size(const LaunchConfig& config) except +translate
        int max_active_clusters(const LaunchConfig& config) except +translate

cdef extern from "cubind/object_code.hpp" namespace "cubind" nogil:
    enum class CodeKind "cubind::CodeKind":
        cubin
        ptx
        ltoir
        fatbin
        object
        library

    cdef cppclass ObjectCode:
        ObjectCode()
        @staticmethod
        ObjectCode from_bytes(CodeKind kind, vector[char] bytes, string name) except +translate
        CodeKind kind() except +translate
        const string& name() except +translate
        const vector[char]& bytes() except +translate
        Kernel get_kernel(const string& kernel_name) except +translate
        CUlibrary handle() except +translate

cdef extern from "<nvrtc.h>" nogil:
    ctypedef struct _nvrtcProgram
    ctypedef _nvrtcProgram* nvrtcProgram

cdef extern from "<nvJitLink.h>" nogil:
    ctypedef struct nvJitLink
    ctypedef nvJitLink* nvJitLinkHandle

cdef extern from "cubind/program.hpp" namespace "cubind" nogil:
    cdef cppclass ProgramOptions:
        ProgramOptions()
        string arch
        bool lto
        vector[string] extra

    cdef cppclass CompileResult:
        bool ok
        string log
        ObjectCode code
        map[string, string] lowered_names

    cdef cppclass Program:
        Program(string source, string name) except +translate
        CompileResult compile(CodeKind target, const ProgramOptions& options,
                              const vector[string]& name_expressions) except +translate
        nvrtcProgram handle() except +translate

cdef extern from "cubind/linker.hpp" namespace "cubind" nogil:
    cdef cppclass LinkerOptions:
        LinkerOptions()
        string arch
        bool ptx
        vector[string] extra

    cdef cppclass LinkResult:
        bool ok
        string error_log
        string info_log
        ObjectCode code

    cdef cppclass Linker:
        Linker(const LinkerOptions& options) except +translate
        void add(const ObjectCode& code) except +translate
        LinkResult link() except +translate
        string error_log() except +translate
        string info_log() except +translate
        nvJitLinkHandle handle() except +translate

cdef extern from "cubind/launch.hpp" namespace "cubind" nogil:
    cdef cppclass Dim3:
        unsigned int x
        unsigned int y
        unsigned int z
        Dim3()
        Dim3(unsigned int x, unsigned int y, unsigned int z)

    cdef cppclass LaunchConfig:
        LaunchConfig()
        Dim3 grid
        Dim3 block
        size_t shared_memory_bytes
        optional[Dim3] cluster
        bool cooperative

    # The steps of a launch whose arguments are known only at run time.
    cdef cppclass NativeLaunchConfig:
        NativeLaunchConfig()

    void render_launch_config(const LaunchConfig& config, CUstream stream, NativeLaunchConfig& out) except +translate
    const vector[KernelParam]& parameters_for_launch(const Kernel& kernel, StreamRef stream) except +translate
    void launch_rendered(StreamRef stream, const NativeLaunchConfig& rendered, const Kernel& kernel,
                         void* const* args) except +translate

cdef extern from "_owners.hpp" namespace "cubind_core" nogil:
    # Owners the C++ core returns by value, moved to the heap for a Python object to hold.
    # Devices by ordinal.
    int device_count() except +translate
    int device_attribute(int ordinal, CUdevice_attribute attribute) except +translate
    string device_name(int ordinal) except +translate
    string device_uuid(int ordinal) except +translate
    string device_pci_bus_id(int ordinal) except +translate
    ComputeCapability device_compute_capability(int ordinal) except +translate
    CUcontext device_primary_context(int ordinal) except +translate
    void device_set_current(int ordinal) except +translate
    void device_sync(int ordinal) except +translate
    bool device_can_access_peer(int ordinal, int peer) except +translate
    void device_peer_access(int ordinal, int peer, bool enable) except +translate
    DeviceMemoryResource* device_pool_default(int ordinal) except +translate
    DeviceMemoryResource* device_pool_new(int ordinal, const DeviceMemoryResourceOptions& options) except +translate
    bool pool_peer_access(DeviceMemoryResource* pool, int peer, int change) except +translate
    MemoryResource* legacy_pinned_new(int ordinal) except +translate
    PinnedMemoryResource* pinned_pool_current(int ordinal) except +translate
    PinnedMemoryResource* pinned_pool_new(int ordinal, const PinnedMemoryResourceOptions& options) except +translate
    shared_ptr[MemoryPool] device_pool_import(int ordinal, int fd) except +translate
    shared_ptr[MemoryPool] pinned_pool_import(int ordinal, int fd) except +translate
    int pool_export_fd(const MemoryPool& pool) except +translate
    void buffer_export_ipc(const Buffer& buffer, char* out) except +translate
    void buffer_import_ipc(Buffer& into, const shared_ptr[MemoryPool]& pool, const char* payload, size_t size,
                              CUstream stream) except +translate
    void event_export_ipc(const Event& event, char* out) except +translate
    Event* event_import_ipc(int ordinal, const char* payload) except +translate
    int kernel_attribute(const Kernel& kernel, CUfunction_attribute attribute, int ordinal) except +translate
    void stream_make(optional[Stream]& slot, int ordinal, const StreamOptions& options) except +translate
    SmResource* sm_resource_of_device(int ordinal) except +translate
    SmResource* sm_resource_of_context(CUcontext context) except +translate
    SmResource* sm_resource_of_green(const GreenContext& green) except +translate
    SmResource* sm_resource_copy(const SmResource& resource) except +translate
    uintptr_t sm_resource_address(const SmResource& resource)
    vector[SmResource] sm_resource_split(const SmResource& resource, const SmSplitOptions& options) except +translate
    GreenContext* green_context_new(int ordinal, const vector[SmResource*]& resources) except +translate
    CUcontext green_context_context(const GreenContext& green) except +translate
    void green_stream_make(optional[Stream]& slot, const GreenContext& green, const StreamOptions& options) \
        except +translate
    Event* event_new(int ordinal, const EventOptions& options) except +translate
    TimedEvent* timed_event_new(int ordinal, bool blocking_sync) except +translate
    Event* event_new_in(CUcontext context, const EventOptions& options) except +translate
    TimedEvent* timed_event_new_in(CUcontext context, bool blocking_sync) except +translate
    void buffer_allocate(Buffer& into, const shared_ptr[MemoryResource]& resource, size_t size,
                         CUstream stream) except +translate
    bint buffer_allocate_from_pool(Buffer& into, const shared_ptr[MemoryResource]& resource, CUmemoryPool pool,
                                   size_t size, CUstream stream) except +translate
    void buffer_close_to_pool(Buffer& buffer, CUstream stream) except +translate
    void buffer_reset(Buffer& buffer)
    void buffer_abandon(Buffer& buffer)
    ObjectCode* object_code_take(ObjectCode& code)
    ObjectCode* object_code_from_bytes(CodeKind kind, const char* data, size_t size, const string& name) except +translate
    ObjectCode* object_code_from_file(const string& path, CodeKind kind) except +translate
    float elapsed_ms(const TimedEvent& end, const TimedEvent& start) except +translate

cdef extern from "cubind/graph.hpp" namespace "cubind" nogil:
    cdef cppclass GraphRef:
        GraphRef(CUgraph handle)

    cdef cppclass Graph:
        CUgraph handle()

    cdef cppclass GraphExec:
        CUgraphExec handle()
        void launch(StreamRef stream) except +translate
        void upload(StreamRef stream) except +translate
        void update(GraphRef graph) except +translate

    cdef cppclass GraphInstantiateOptions:
        GraphInstantiateOptions()
        bool auto_free_on_launch
        bool device_launch
        bool use_node_priority
        CUstream upload_stream

    void debug_dot_print(GraphRef graph, const string& path, unsigned int flags) except +translate

cdef extern from "cubind/graph_capture.hpp" namespace "cubind" nogil:
    enum class CaptureStatus "cubind::CaptureStatus":
        none
        active
        invalidated

    CaptureStatus capture_status(StreamRef stream) except +translate
    void begin_capture_into(StreamRef stream, GraphRef graph, CUstreamCaptureMode mode) except +translate
    void end_capture_into(StreamRef stream) except +translate
    CUgraphConditionalHandle create_condition(StreamRef stream, optional[unsigned int] default_value) except +translate
    vector[CUgraph] capture_conditional(StreamRef stream, CUgraphConditionalHandle condition,
                                        CUgraphConditionalNodeType type, unsigned int count) except +translate
    void capture_child_graph(StreamRef stream, GraphRef child) except +translate
    void capture_host_func(StreamRef stream, CUhostFn fn, void* data, CUhostFn release) except +translate

cdef extern from "cubind/graph_memory_resource.hpp" namespace "cubind" nogil:
    cdef cppclass GraphMemoryResource(MemoryResource):
        uint64_t attribute(CUgraphMem_attribute attribute) except +translate
        void reset_high_watermark(CUgraphMem_attribute attribute) except +translate
        void trim() except +translate

cdef extern from "_owners.hpp" namespace "cubind_core" nogil:
    # Graph owners on the heap.
    Graph* graph_from_capture(StreamRef stream) except +translate
    GraphExec* graph_instantiate(CUgraph graph, CUcontext context,
                                 const GraphInstantiateOptions& options) except +translate
    Graph* graph_create_new() except +translate
    shared_ptr[GraphMemoryResource] graph_memory_resource_new(int ordinal) except +translate
# Managed memory, virtual memory and batched copies: the core's option
# structs and the driver structs they hold, filled by one conversion each
# (_managed.pyx, _virtual_memory.pyx, _copy_batch.pyx).
cdef extern from "<cuda.h>" nogil:
    ctypedef enum CUmemLocationType:
        CU_MEM_LOCATION_TYPE_INVALID
        CU_MEM_LOCATION_TYPE_DEVICE
        CU_MEM_LOCATION_TYPE_HOST
        CU_MEM_LOCATION_TYPE_HOST_NUMA
        CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
    ctypedef struct CUmemLocation:
        CUmemLocationType type
        int id
    ctypedef enum CUmemAllocationType:
        CU_MEM_ALLOCATION_TYPE_PINNED
        CU_MEM_ALLOCATION_TYPE_MANAGED
    ctypedef enum CUmemAllocationHandleType:
        CU_MEM_HANDLE_TYPE_NONE
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        CU_MEM_HANDLE_TYPE_WIN32_KMT
        CU_MEM_HANDLE_TYPE_FABRIC
    ctypedef enum CUmemAllocationGranularity_flags:
        CU_MEM_ALLOC_GRANULARITY_MINIMUM
        CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
    ctypedef enum CUmemAccess_flags:
        CU_MEM_ACCESS_FLAGS_PROT_NONE
        CU_MEM_ACCESS_FLAGS_PROT_READ
        CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    ctypedef enum CUmem_advise:
        CU_MEM_ADVISE_SET_READ_MOSTLY
        CU_MEM_ADVISE_UNSET_READ_MOSTLY
        CU_MEM_ADVISE_SET_PREFERRED_LOCATION
        CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION
        CU_MEM_ADVISE_SET_ACCESSED_BY
        CU_MEM_ADVISE_UNSET_ACCESSED_BY
    ctypedef enum CUmem_range_attribute:
        CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID
    ctypedef enum CUmemcpySrcAccessOrder:
        CU_MEMCPY_SRC_ACCESS_ORDER_STREAM
        CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL
        CU_MEMCPY_SRC_ACCESS_ORDER_ANY
    ctypedef enum CUmemcpyFlags:
        CU_MEMCPY_FLAG_DEFAULT
        CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
    ctypedef struct CUmemcpyAttributes:
        CUmemcpySrcAccessOrder srcAccessOrder
        CUmemLocation srcLocHint
        CUmemLocation dstLocHint
        unsigned int flags

cdef extern from "cubind/memory_resource.hpp" namespace "cubind" nogil:
    cdef cppclass ManagedMemoryResourceOptions:
        ManagedMemoryResourceOptions()
        optional[CUmemLocation] preferred_location

    cdef cppclass ManagedMemoryResource(MemoryResource):
        CUmemoryPool handle()
        bool owns_pool()

cdef extern from "cubind/managed_memory.hpp" namespace "cubind" nogil:
    cdef cppclass ManagedRange:
        ManagedRange()
        CUdeviceptr ptr
        size_t size

    void prefetch(ManagedRange range, CUmemLocation location, StreamRef stream) except +translate
    void prefetch_batch(const vector[ManagedRange]& ranges, const vector[CUmemLocation]& locations,
                        StreamRef stream) except +translate
    void discard_batch(const vector[ManagedRange]& ranges, StreamRef stream) except +translate
    void discard_prefetch_batch(const vector[ManagedRange]& ranges, const vector[CUmemLocation]& locations,
                                StreamRef stream) except +translate
    void advise(ManagedRange range, CUmem_advise advice, CUmemLocation location) except +translate
    int range_attribute(ManagedRange range, CUmem_range_attribute attribute) except +translate
    vector[int] range_accessed_by(ManagedRange range, size_t slots) except +translate

cdef extern from "cubind/copy_batch.hpp" namespace "cubind" nogil:
    cdef cppclass BatchCopy:
        BatchCopy()
        CUdeviceptr dst
        CUdeviceptr src
        size_t size

    CUmemcpyAttributes default_copy_attributes()
    void copy_batch(const vector[BatchCopy]& copies, const vector[CUmemcpyAttributes]& attributes,
                    StreamRef stream) except +translate

cdef extern from "cubind/virtual_memory.hpp" namespace "cubind" nogil:
    cdef cppclass VirtualMemoryResourceOptions:
        VirtualMemoryResourceOptions()
        CUmemAllocationType allocation_type
        CUmemLocationType location_type
        int location_id
        CUmemAllocationHandleType handle_type
        CUmemAllocationGranularity_flags granularity
        bool gpu_direct_rdma
        CUdeviceptr addr_hint
        size_t addr_align
        vector[int] peers
        CUmemAccess_flags self_access
        CUmemAccess_flags peer_access

    cdef cppclass VirtualMemoryResource(MemoryResource):
        size_t granularity() except +translate
        size_t aligned_size(size_t bytes) except +translate
        void* grow(void* ptr, size_t new_size) except +translate
        void set_options(VirtualMemoryResourceOptions options) except +translate

cdef extern from "_owners.hpp" namespace "cubind_core" nogil:
    # Managed and virtual memory owners on the heap.
    ManagedMemoryResource* managed_pool_new(int ordinal, const ManagedMemoryResourceOptions& options) except +translate
    shared_ptr[ManagedMemoryResource] managed_pool_current(int ordinal) except +translate
    VirtualMemoryResource* virtual_memory_new(int ordinal, const VirtualMemoryResourceOptions& options) except +translate
    void buffer_adopt(Buffer& into, uintptr_t ptr, size_t size, const shared_ptr[MemoryResource]& resource,
                         CUstream stream) except +translate

cdef extern from "<cuda.h>" nogil:
    ctypedef struct CUgraphNode_st
    ctypedef CUgraphNode_st* CUgraphNode
    ctypedef int CUgraphNodeType
    ctypedef struct CUgraphNodeParams:
        CUgraphNodeType type

cdef extern from "cubind/graph_definition.hpp" namespace "cubind" nogil:
    void graph_retain(GraphRef graph, void* data, CUhostFn release) except +translate
    CUgraphNode add_host_node(GraphRef graph, const vector[CUgraphNode]& dependencies, CUhostFn fn, void* data,
                              CUhostFn release) except +translate
    CUgraphConditionalHandle create_graph_condition(GraphRef graph, CUcontext context, bool has_default,
                                                    unsigned int default_value) except +translate
    vector[CUgraphNode] graph_nodes(GraphRef graph) except +translate
    vector[pair[CUgraphNode, CUgraphNode]] graph_edges(GraphRef graph) except +translate
    vector[CUgraphNode] node_neighbours(CUgraphNode node, bool successors) except +translate
    void change_edges(GraphRef graph, const vector[CUgraphNode]& src, const vector[CUgraphNode]& dst,
                      bool add) except +translate
    CUgraphNodeType node_type(CUgraphNode node) except +translate
    void destroy_node(CUgraphNode node) except +translate
    bool exec_node_enabled(CUgraphExec exec_, CUgraphNode node) except +translate
    void set_exec_node_enabled(CUgraphExec exec_, CUgraphNode node, bool enabled) except +translate
    CUgraphNode add_node(GraphRef graph, const vector[CUgraphNode]& dependencies,
                         CUgraphNodeParams& params) except +translate
    void set_node_params(CUgraphNode node, CUgraphNodeParams& params) except +translate
    void set_exec_node_params(CUgraphExec exec_, CUgraphNode node, CUgraphNodeParams& params) except +translate

    # Each node type's CUgraphNodeParams from plain values (they check nothing).
    cdef cppclass KernelNode:
        KernelNode()
        CUkernel kernel
        CUcontext context
        Dim3 grid
        Dim3 block
        unsigned int shared_memory_bytes
        void** arguments
    CUgraphNodeParams kernel_node(const KernelNode& node)

    cdef cppclass MemsetNode:
        MemsetNode()
        CUdeviceptr dst
        unsigned int value
        unsigned int element_size
        size_t width
        size_t height
        size_t pitch
        CUcontext context
    CUgraphNodeParams memset_node(const MemsetNode& node)

    cdef cppclass MemcpyNode:
        MemcpyNode()
        CUdeviceptr dst
        CUdeviceptr src
        size_t bytes
        CUcontext context
    CUgraphNodeParams memcpy_node(const MemcpyNode& node)

    CUgraphNodeParams event_record_node(CUevent event)
    CUgraphNodeParams event_wait_node(CUevent event)
    CUgraphNodeParams child_graph_node(GraphRef child)
    CUgraphNodeParams host_node(CUhostFn fn, void* data)

    CUgraphNode add_empty_node(GraphRef graph, const vector[CUgraphNode]& dependencies) except +translate

    enum class GraphMemoryType "cubind::GraphMemoryType":
        device
        host
        managed

    cdef cppclass AllocNode:
        AllocNode()
        size_t bytes
        int device
        GraphMemoryType memory_type
        vector[int] peers

    cdef cppclass AddedAllocNode:
        AddedAllocNode()
        CUgraphNode node
        CUdeviceptr address
    AddedAllocNode add_alloc_node(GraphRef graph, const vector[CUgraphNode]& dependencies,
                                  const AllocNode& alloc) except +translate

    CUgraphNode add_free_node(GraphRef graph, const vector[CUgraphNode]& dependencies,
                              CUdeviceptr address) except +translate

    cdef cppclass AddedConditionalNode:
        AddedConditionalNode()
        CUgraphNode node
        vector[CUgraph] bodies
    AddedConditionalNode add_conditional_node(GraphRef graph, const vector[CUgraphNode]& dependencies,
                                              CUgraphConditionalHandle condition, CUgraphConditionalNodeType type,
                                              unsigned int count, CUcontext context) except +translate

    # A node's parameters, whichever fields its type has (it reads the type).
    cdef cppclass NodeInfo:
        NodeInfo()
        CUgraphNodeType type
        CUkernel kernel
        Dim3 grid
        Dim3 block
        unsigned int shared_memory_bytes
        CUdeviceptr dst
        CUdeviceptr src
        size_t bytes
        unsigned int value
        unsigned int element_size
        size_t width
        size_t height
        size_t pitch
        int device
        GraphMemoryType memory_type
        vector[int] peers
        CUevent event
        CUgraph child
        CUhostFn fn
        void* data
    NodeInfo node_info(CUgraphNode node) except +translate


# Texture and surface memory (texture.hpp): arrays held as shared_ptr, the
# objects on the heap, both made by _owners.hpp.
cdef extern from "<cuda.h>" nogil:
    ctypedef enum CUarray_format:
        pass
    ctypedef enum CUaddress_mode:
        CU_TR_ADDRESS_MODE_WRAP
        CU_TR_ADDRESS_MODE_CLAMP
        CU_TR_ADDRESS_MODE_MIRROR
        CU_TR_ADDRESS_MODE_BORDER
    ctypedef enum CUfilter_mode:
        CU_TR_FILTER_MODE_POINT
        CU_TR_FILTER_MODE_LINEAR
    ctypedef struct CUarray_st
    ctypedef CUarray_st* CUarray
    ctypedef struct CUmipmappedArray_st
    ctypedef CUmipmappedArray_st* CUmipmappedArray
    ctypedef unsigned long long CUtexObject
    ctypedef unsigned long long CUsurfObject

cdef extern from "cubind/texture.hpp" namespace "cubind" nogil:
    cdef cppclass ArrayDescriptor:
        ArrayDescriptor()
        size_t width
        size_t height
        size_t depth
        CUarray_format format
        unsigned int num_channels
        bool surface_load_store

    cdef cppclass ArrayRef:
        CUarray handle()
        const ArrayDescriptor& descriptor()
        void copy_from_host(const void* src, size_t bytes, StreamRef stream) except +translate
        void copy_from(CUdeviceptr src, size_t bytes, StreamRef stream) except +translate
        void copy_to_host(void* dst, size_t bytes, StreamRef stream) except +translate
        void copy_to(CUdeviceptr dst, size_t bytes, StreamRef stream) except +translate

    cdef cppclass MipmappedArray:
        CUmipmappedArray handle()
        unsigned int num_levels()

    cdef cppclass TextureOptions:
        TextureOptions()
        CUfilter_mode filter_mode
        bool normalized_coords
        bool srgb
        bool disable_trilinear_optimization
        bool seamless_cubemap
        unsigned int max_anisotropy
        CUfilter_mode mipmap_filter_mode
        float mipmap_level_bias
        float min_mipmap_level_clamp
        float max_mipmap_level_clamp

    cdef cppclass TextureObject:
        CUtexObject handle()

    cdef cppclass SurfaceObject:
        CUsurfObject handle()

cdef extern from "_owners.hpp" namespace "cubind_core" nogil:
    shared_ptr[ArrayRef] opaque_array_new(int ordinal, const ArrayDescriptor& descriptor) except +translate
    shared_ptr[ArrayRef] array_adopt(uintptr_t handle, bool owning) except +translate
    shared_ptr[MipmappedArray] mipmapped_array_new(int ordinal, const ArrayDescriptor& descriptor,
                                                  unsigned int num_levels) except +translate
    shared_ptr[ArrayRef] mipmapped_array_level(const shared_ptr[MipmappedArray]& mipmap,
                                               unsigned int level) except +translate
    TextureObject* texture_object_of_array(int ordinal, const shared_ptr[ArrayRef]& array,
                                           const TextureOptions& options) except +translate
    TextureObject* texture_object_of_mipmap(int ordinal, const shared_ptr[MipmappedArray]& mipmap,
                                            const TextureOptions& options) except +translate
    TextureObject* texture_object_of_linear(int ordinal, CUdeviceptr ptr, CUarray_format format,
                                            unsigned int num_channels, size_t bytes,
                                            const TextureOptions& options) except +translate
    TextureObject* texture_object_of_pitch2d(int ordinal, CUdeviceptr ptr, CUarray_format format,
                                             unsigned int num_channels, size_t width, size_t height,
                                             size_t pitch_bytes, const TextureOptions& options) except +translate
    SurfaceObject* surface_object_new(int ordinal, const shared_ptr[ArrayRef]& array) except +translate
    void texture_options_set_address_mode(TextureOptions& options, int axis, CUaddress_mode mode)
    void texture_options_set_border(TextureOptions& options, int channel, float value)
    void texture_options_set_normalized_float(TextureOptions& options, bool normalized)

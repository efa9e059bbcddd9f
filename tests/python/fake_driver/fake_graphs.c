/* The graph-building part of the stand-in libcuda.so.1 (fake_libcuda.c
 * looks its entry points up here): graphs with real node and edge lists,
 * node parameters kept as CUgraphNodeParams and read back by the typed
 * getters, user objects owned by graphs, clones, and instantiations that
 * snapshot their graph. Launching an instantiation "runs" it in node order:
 * a kernel node records its arguments as cuLaunchKernel does, a host node
 * runs on a thread of its own, a child graph runs its nodes; conditional
 * nodes run nothing (no device code sets their condition). */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

/* From fake_libcuda.c. */
void fake_record_launch(unsigned count, void** params);
int fake_spawn_host(void (*fn)(void*), void* stream, void* data);
CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t* offset, size_t* size);

#define MAX_NODES 256
#define MAX_EDGES 1024
#define MAX_OBJECTS 256
#define MAX_BODIES 8

struct fobject { void* ptr; CUhostFn destroy; int refs; };
struct fgraph;
struct fnode {
    struct fgraph* graph;
    struct fnode* origin;          /* the node this one was cloned from */
    CUgraphNodeParams params;
    unsigned char args[16][16];    /* a kernel node's argument values */
    void* arg_pointers[16];
    unsigned nargs;
    CUmemAccessDesc access[8];
    struct fgraph* bodies[MAX_BODIES]; /* a child graph node's graph, a conditional node's bodies */
    CUgraph body_handles[MAX_BODIES];
    unsigned nbodies;
    int enabled;
};
struct fgraph {
    int magic;
    struct fnode* nodes[MAX_NODES];
    unsigned nnodes;
    struct fnode* from[MAX_EDGES];
    struct fnode* to[MAX_EDGES];
    unsigned nedges;
    struct fobject* objects[MAX_OBJECTS];
    unsigned nobjects;
};
struct fexec { int magic; struct fgraph* graph; };

#define GRAPH_MAGIC 0x6a6a
#define EXEC_MAGIC 0xe6e6
static unsigned long long next_alloc = 0xa1100000ull;

int fake_live_graphs;
int fake_live_user_objects;

/* The stand-in graph of every stream capture (fake_libcuda.c's 0x6a): no
 * nodes, but it owns user objects (a captured host function's data) until
 * it is destroyed. */
static struct fgraph capture_graph = {.magic = GRAPH_MAGIC};
#define CAPTURE_GRAPH ((void*)0x6a)

static struct fgraph* as_graph(void* p) { struct fgraph* g = p; return (g && (uintptr_t)g > 0x10000 && g->magic == GRAPH_MAGIC) ? g : NULL; }
int fake_graph_known(void* p) { return as_graph(p) != NULL; }

static struct fgraph* new_graph(void) { struct fgraph* g = calloc(1, sizeof *g); g->magic = GRAPH_MAGIC; ++fake_live_graphs; return g; }

extern __thread int fake_in_callback;

static void release_object(struct fobject* o, int count)
{
    o->refs -= count;
    if (o->refs <= 0) {
        /* The destructor may run on any thread; CUDA calls from it are refused. */
        int outer = fake_in_callback;
        fake_in_callback = 1;
        o->destroy(o->ptr);
        fake_in_callback = outer;
        free(o);
        --fake_live_user_objects;
    }
}

static void free_graph(struct fgraph* g);
static void free_node(struct fnode* n)
{
    for (unsigned i = 0; i < n->nbodies; ++i) free_graph(n->bodies[i]);
    free(n);
}
static void free_graph(struct fgraph* g)
{
    for (unsigned i = 0; i < g->nnodes; ++i) free_node(g->nodes[i]);
    for (unsigned i = 0; i < g->nobjects; ++i) release_object(g->objects[i], 1);
    g->magic = 0;
    free(g);
    --fake_live_graphs;
}
/* cuGraphDestroy of fake_libcuda.c: 1 when the graph was one of these. */
int fake_graph_destroy(void* p)
{
    if (p == CAPTURE_GRAPH) {
        for (unsigned i = 0; i < capture_graph.nobjects; ++i) release_object(capture_graph.objects[i], 1);
        capture_graph.nobjects = 0;
        return 1;
    }
    struct fgraph* g = as_graph(p);
    if (!g) return 0;
    free_graph(g);
    return 1;
}

static void copy_kernel_args(struct fnode* n)
{
    CUDA_KERNEL_NODE_PARAMS_v3* k = &n->params.kernel;
    CUkernel kern = k->kern ? k->kern : (CUkernel)k->func;
    void** given = k->kernelParams;
    size_t offset, size;
    n->nargs = 0;
    memset(n->args, 0, sizeof n->args);
    while (n->nargs < 16 && kern && cuKernelGetParamInfo(kern, n->nargs, &offset, &size) == 0) {
        if (given) memcpy(n->args[n->nargs], given[n->nargs], size < 16 ? size : 16);
        n->arg_pointers[n->nargs] = n->args[n->nargs];
        ++n->nargs;
    }
    k->kernelParams = n->arg_pointers;
}

static void copy_alloc_access(struct fnode* n)
{
    size_t count = n->params.alloc.accessDescCount < 8 ? n->params.alloc.accessDescCount : 8;
    if (count) memcpy(n->access, n->params.alloc.accessDescs, count * sizeof(CUmemAccessDesc));
    n->params.alloc.accessDescs = n->access;
    n->params.alloc.accessDescCount = count;
}

static struct fgraph* clone_graph(struct fgraph* g);

static void add_edge(struct fgraph* g, struct fnode* from, struct fnode* to)
{
    if (g->nedges < MAX_EDGES) { g->from[g->nedges] = from; g->to[g->nedges] = to; ++g->nedges; }
}

static CUresult fg_cuGraphCreate(CUgraph* graph, unsigned flags) { (void)flags; *graph = (CUgraph)new_graph(); return CUDA_SUCCESS; }

static CUresult fg_cuGraphAddNode(CUgraphNode* out, CUgraph graph, const CUgraphNode* deps, const CUgraphEdgeData* data,
                                  size_t ndeps, CUgraphNodeParams* params)
{
    (void)data;
    struct fgraph* g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    if (g->nnodes >= MAX_NODES) return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < ndeps; ++i) if (((struct fnode*)deps[i])->graph != g) return CUDA_ERROR_INVALID_VALUE;
    struct fnode* n = calloc(1, sizeof *n);
    n->graph = g;
    n->enabled = 1;
    n->params = *params;
    switch (params->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: copy_kernel_args(n); break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        copy_alloc_access(n);
        params->alloc.dptr = n->params.alloc.dptr = next_alloc;
        next_alloc += (params->alloc.bytesize + 0xfff) & ~(size_t)0xfff;
        break;
    case CU_GRAPH_NODE_TYPE_GRAPH: {
        struct fgraph* child = as_graph(params->graph.graph);
        if (!child) { free(n); return CUDA_ERROR_INVALID_VALUE; }
        n->bodies[0] = clone_graph(child);
        n->nbodies = 1;
        n->params.graph.graph = (CUgraph)n->bodies[0];
        break;
    }
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        if (params->conditional.size == 0 || params->conditional.size > MAX_BODIES) { free(n); return CUDA_ERROR_INVALID_VALUE; }
        n->nbodies = params->conditional.size;
        for (unsigned i = 0; i < n->nbodies; ++i) {
            n->bodies[i] = new_graph();
            n->body_handles[i] = (CUgraph)n->bodies[i];
        }
        params->conditional.phGraph_out = n->params.conditional.phGraph_out = n->body_handles;
        break;
    default: break;
    }
    g->nodes[g->nnodes++] = n;
    for (size_t i = 0; i < ndeps; ++i) add_edge(g, (struct fnode*)deps[i], n);
    *out = (CUgraphNode)n;
    return CUDA_SUCCESS;
}

static struct fgraph* clone_graph(struct fgraph* g)
{
    struct fgraph* c = new_graph();
    for (unsigned i = 0; i < g->nnodes; ++i) {
        struct fnode* n = malloc(sizeof *n);
        *n = *g->nodes[i];
        n->graph = c;
        n->origin = g->nodes[i];
        if (n->params.type == CU_GRAPH_NODE_TYPE_KERNEL)
            for (unsigned a = 0; a < n->nargs; ++a) n->arg_pointers[a] = n->args[a];
        n->params.kernel.kernelParams = n->params.type == CU_GRAPH_NODE_TYPE_KERNEL ? n->arg_pointers : n->params.kernel.kernelParams;
        if (n->params.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) n->params.alloc.accessDescs = n->access;
        for (unsigned b = 0; b < n->nbodies; ++b) {
            n->bodies[b] = clone_graph(g->nodes[i]->bodies[b]);
            n->body_handles[b] = (CUgraph)n->bodies[b];
        }
        if (n->params.type == CU_GRAPH_NODE_TYPE_GRAPH) n->params.graph.graph = (CUgraph)n->bodies[0];
        c->nodes[c->nnodes++] = n;
    }
    for (unsigned e = 0; e < g->nedges; ++e) {
        struct fnode *from = NULL, *to = NULL;
        for (unsigned i = 0; i < g->nnodes; ++i) {
            if (g->nodes[i] == g->from[e]) from = c->nodes[i];
            if (g->nodes[i] == g->to[e]) to = c->nodes[i];
        }
        add_edge(c, from, to);
    }
    for (unsigned i = 0; i < g->nobjects; ++i) { g->objects[i]->refs += 1; c->objects[c->nobjects++] = g->objects[i]; }
    return c;
}

static CUresult fg_cuGraphClone(CUgraph* out, CUgraph graph)
{
    struct fgraph* g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    *out = (CUgraph)clone_graph(g);
    return CUDA_SUCCESS;
}

static CUresult fg_cuGraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count)
{
    struct fgraph* g = as_graph(graph);
    if (!g) { *count = 0; return CUDA_SUCCESS; }   /* the capture's stand-in graph is empty */
    if (nodes) for (size_t i = 0; i < *count && i < g->nnodes; ++i) nodes[i] = (CUgraphNode)g->nodes[i];
    *count = g->nnodes;
    return CUDA_SUCCESS;
}

static CUresult fg_cuGraphGetEdges(CUgraph graph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* data, size_t* count)
{
    (void)data;
    struct fgraph* g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    if (from && to) for (size_t i = 0; i < *count && i < g->nedges; ++i) { from[i] = (CUgraphNode)g->from[i]; to[i] = (CUgraphNode)g->to[i]; }
    *count = g->nedges;
    return CUDA_SUCCESS;
}

static CUresult neighbours(CUgraphNode node, CUgraphNode* out, size_t* count, int successors)
{
    struct fnode* n = (struct fnode*)node;
    struct fgraph* g = n->graph;
    size_t found = 0;
    for (unsigned e = 0; e < g->nedges; ++e) {
        struct fnode* mine = successors ? g->from[e] : g->to[e];
        struct fnode* other = successors ? g->to[e] : g->from[e];
        if (mine != n) continue;
        if (out && found < *count) out[found] = (CUgraphNode)other;
        ++found;
    }
    *count = found;
    return CUDA_SUCCESS;
}
static CUresult fg_cuGraphNodeGetDependencies(CUgraphNode node, CUgraphNode* deps, CUgraphEdgeData* data, size_t* count)
{ (void)data; return neighbours(node, deps, count, 0); }
static CUresult fg_cuGraphNodeGetDependentNodes(CUgraphNode node, CUgraphNode* deps, CUgraphEdgeData* data, size_t* count)
{ (void)data; return neighbours(node, deps, count, 1); }

static CUresult fg_cuGraphAddDependencies(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                                          const CUgraphEdgeData* data, size_t count)
{
    (void)data;
    struct fgraph* g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        for (unsigned e = 0; e < g->nedges; ++e)
            if (g->from[e] == (struct fnode*)from[i] && g->to[e] == (struct fnode*)to[i]) return CUDA_ERROR_INVALID_VALUE;
        add_edge(g, (struct fnode*)from[i], (struct fnode*)to[i]);
    }
    return CUDA_SUCCESS;
}

static CUresult fg_cuGraphRemoveDependencies(CUgraph graph, const CUgraphNode* from, const CUgraphNode* to,
                                             const CUgraphEdgeData* data, size_t count)
{
    (void)data;
    struct fgraph* g = as_graph(graph);
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        unsigned e = 0;
        while (e < g->nedges && !(g->from[e] == (struct fnode*)from[i] && g->to[e] == (struct fnode*)to[i])) ++e;
        if (e == g->nedges) return CUDA_ERROR_INVALID_VALUE;
        for (; e + 1 < g->nedges; ++e) { g->from[e] = g->from[e + 1]; g->to[e] = g->to[e + 1]; }
        --g->nedges;
    }
    return CUDA_SUCCESS;
}

static CUresult fg_cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType* type) { *type = ((struct fnode*)node)->params.type; return CUDA_SUCCESS; }

static CUresult fg_cuGraphDestroyNode(CUgraphNode node)
{
    struct fnode* n = (struct fnode*)node;
    struct fgraph* g = n->graph;
    unsigned kept = 0;
    for (unsigned e = 0; e < g->nedges; ++e) {
        if (g->from[e] == n || g->to[e] == n) continue;
        g->from[kept] = g->from[e]; g->to[kept] = g->to[e]; ++kept;
    }
    g->nedges = kept;
    kept = 0;
    for (unsigned i = 0; i < g->nnodes; ++i) if (g->nodes[i] != n) g->nodes[kept++] = g->nodes[i];
    g->nnodes = kept;
    free_node(n);
    return CUDA_SUCCESS;
}

static CUresult fg_cuGraphKernelNodeGetParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* p)
{ memcpy(p, &((struct fnode*)node)->params.kernel, sizeof *p); return CUDA_SUCCESS; }
static CUresult fg_cuGraphMemsetNodeGetParams(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS* p)
{ memcpy(p, &((struct fnode*)node)->params.memset, sizeof *p); return CUDA_SUCCESS; }
static CUresult fg_cuGraphMemcpyNodeGetParams(CUgraphNode node, CUDA_MEMCPY3D* p)
{ *p = ((struct fnode*)node)->params.memcpy.copyParams; return CUDA_SUCCESS; }
static CUresult fg_cuGraphMemAllocNodeGetParams(CUgraphNode node, CUDA_MEM_ALLOC_NODE_PARAMS* p)
{
    const CUDA_MEM_ALLOC_NODE_PARAMS_v2* a = &((struct fnode*)node)->params.alloc;
    p->poolProps = a->poolProps; p->accessDescs = a->accessDescs; p->accessDescCount = a->accessDescCount;
    p->bytesize = a->bytesize; p->dptr = a->dptr;
    return CUDA_SUCCESS;
}
static CUresult fg_cuGraphMemFreeNodeGetParams(CUgraphNode node, CUdeviceptr* p) { *p = ((struct fnode*)node)->params.free.dptr; return CUDA_SUCCESS; }
static CUresult fg_cuGraphEventRecordNodeGetEvent(CUgraphNode node, CUevent* e) { *e = ((struct fnode*)node)->params.eventRecord.event; return CUDA_SUCCESS; }
static CUresult fg_cuGraphEventWaitNodeGetEvent(CUgraphNode node, CUevent* e) { *e = ((struct fnode*)node)->params.eventWait.event; return CUDA_SUCCESS; }
static CUresult fg_cuGraphChildGraphNodeGetGraph(CUgraphNode node, CUgraph* g) { *g = ((struct fnode*)node)->params.graph.graph; return CUDA_SUCCESS; }
static CUresult fg_cuGraphHostNodeGetParams(CUgraphNode node, CUDA_HOST_NODE_PARAMS* p)
{ p->fn = ((struct fnode*)node)->params.host.fn; p->userData = ((struct fnode*)node)->params.host.userData; return CUDA_SUCCESS; }

/* New parameters for a node of the same type; a child graph's are copied
 * into the graph the node owns (its topology must match). */
static CUresult set_params(struct fnode* n, CUgraphNodeParams* params)
{
    if (params->type != n->params.type) return CUDA_ERROR_INVALID_VALUE;
    switch (params->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: n->params = *params; copy_kernel_args(n); break;
    case CU_GRAPH_NODE_TYPE_GRAPH: {
        struct fgraph* child = as_graph(params->graph.graph);
        if (!child || child->nnodes != n->bodies[0]->nnodes) return CUDA_ERROR_INVALID_VALUE;
        struct fgraph* copy = clone_graph(child);
        free_graph(n->bodies[0]);
        n->bodies[0] = copy;
        n->params.graph.graph = (CUgraph)copy;
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: case CU_GRAPH_NODE_TYPE_MEM_FREE: case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return CUDA_ERROR_INVALID_VALUE;
    default: n->params = *params; break;
    }
    return CUDA_SUCCESS;
}
static CUresult fg_cuGraphNodeSetParams(CUgraphNode node, CUgraphNodeParams* params) { return set_params((struct fnode*)node, params); }

static struct fexec* as_exec(void* p) { struct fexec* x = p; return (x && (uintptr_t)x > 0x10000 && x->magic == EXEC_MAGIC) ? x : NULL; }

static struct fnode* instance_of(struct fexec* x, CUgraphNode node)
{
    for (unsigned i = 0; i < x->graph->nnodes; ++i) if (x->graph->nodes[i]->origin == (struct fnode*)node) return x->graph->nodes[i];
    return NULL;
}
static CUresult fg_cuGraphExecNodeSetParams(CUgraphExec exec, CUgraphNode node, CUgraphNodeParams* params)
{
    struct fexec* x = as_exec(exec);
    struct fnode* n = x ? instance_of(x, node) : NULL;
    return n ? set_params(n, params) : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fg_cuGraphNodeSetEnabled(CUgraphExec exec, CUgraphNode node, unsigned enabled)
{
    struct fexec* x = as_exec(exec);
    struct fnode* n = x ? instance_of(x, node) : NULL;
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    n->enabled = enabled != 0;
    return CUDA_SUCCESS;
}
static CUresult fg_cuGraphNodeGetEnabled(CUgraphExec exec, CUgraphNode node, unsigned* enabled)
{
    struct fexec* x = as_exec(exec);
    struct fnode* n = x ? instance_of(x, node) : NULL;
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *enabled = (unsigned)n->enabled;
    return CUDA_SUCCESS;
}

/* Called by fake_libcuda.c's instantiate, launch and destroy for graphs
 * built here; 0 / -1 for any other graph. */
void* fake_graph_instantiate(void* graph)
{
    struct fgraph* g = as_graph(graph);
    if (!g) return NULL;
    struct fexec* x = calloc(1, sizeof *x);
    x->magic = EXEC_MAGIC;
    x->graph = clone_graph(g);
    return x;
}
static void run_graph(struct fgraph* g, void* stream)
{
    for (unsigned i = 0; i < g->nnodes; ++i) {
        struct fnode* n = g->nodes[i];
        if (!n->enabled) continue;
        if (n->params.type == CU_GRAPH_NODE_TYPE_KERNEL) fake_record_launch(n->nargs, n->arg_pointers);
        else if (n->params.type == CU_GRAPH_NODE_TYPE_HOST) fake_spawn_host(n->params.host.fn, stream, n->params.host.userData);
        else if (n->params.type == CU_GRAPH_NODE_TYPE_GRAPH) run_graph(n->bodies[0], stream);
    }
}
int fake_graph_launch(void* exec, void* stream)
{
    struct fexec* x = as_exec(exec);
    if (!x) return -1;
    run_graph(x->graph, stream);
    return 0;
}
int fake_exec_destroy(void* exec)
{
    struct fexec* x = as_exec(exec);
    if (!x) return 0;
    free_graph(x->graph);
    x->magic = 0;
    free(x);
    return 1;
}

static CUresult fg_cuUserObjectCreate(CUuserObject* out, void* ptr, CUhostFn destroy, unsigned count, unsigned flags)
{
    (void)flags;
    struct fobject* o = malloc(sizeof *o);
    o->ptr = ptr; o->destroy = destroy; o->refs = (int)count;
    ++fake_live_user_objects;
    *out = (CUuserObject)o;
    return CUDA_SUCCESS;
}
static CUresult fg_cuUserObjectRelease(CUuserObject object, unsigned count) { release_object((struct fobject*)object, (int)count); return CUDA_SUCCESS; }
static CUresult fg_cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned count, unsigned flags)
{
    struct fgraph* g = graph == CAPTURE_GRAPH ? &capture_graph : as_graph(graph);
    struct fobject* o = (struct fobject*)object;
    if (!g || g->nobjects + count > MAX_OBJECTS) return CUDA_ERROR_INVALID_VALUE;
    /* CU_GRAPH_USER_OBJECT_MOVE hands the caller's references over. */
    if (!(flags & CU_GRAPH_USER_OBJECT_MOVE)) o->refs += (int)count;
    for (unsigned i = 0; i < count; ++i) g->objects[g->nobjects++] = o;
    return CUDA_SUCCESS;
}

struct fentry { const char* name; void* fn; };
static const struct fentry graph_table[] = {
    {"cuGraphCreate", (void*)fg_cuGraphCreate},
    {"cuGraphClone", (void*)fg_cuGraphClone},
    {"cuGraphAddNode", (void*)fg_cuGraphAddNode},
    {"cuGraphGetNodes", (void*)fg_cuGraphGetNodes},
    {"cuGraphGetEdges", (void*)fg_cuGraphGetEdges},
    {"cuGraphNodeGetDependencies", (void*)fg_cuGraphNodeGetDependencies},
    {"cuGraphNodeGetDependentNodes", (void*)fg_cuGraphNodeGetDependentNodes},
    {"cuGraphAddDependencies", (void*)fg_cuGraphAddDependencies},
    {"cuGraphRemoveDependencies", (void*)fg_cuGraphRemoveDependencies},
    {"cuGraphNodeGetType", (void*)fg_cuGraphNodeGetType},
    {"cuGraphDestroyNode", (void*)fg_cuGraphDestroyNode},
    {"cuGraphKernelNodeGetParams", (void*)fg_cuGraphKernelNodeGetParams},
    {"cuGraphMemsetNodeGetParams", (void*)fg_cuGraphMemsetNodeGetParams},
    {"cuGraphMemcpyNodeGetParams", (void*)fg_cuGraphMemcpyNodeGetParams},
    {"cuGraphMemAllocNodeGetParams", (void*)fg_cuGraphMemAllocNodeGetParams},
    {"cuGraphMemFreeNodeGetParams", (void*)fg_cuGraphMemFreeNodeGetParams},
    {"cuGraphEventRecordNodeGetEvent", (void*)fg_cuGraphEventRecordNodeGetEvent},
    {"cuGraphEventWaitNodeGetEvent", (void*)fg_cuGraphEventWaitNodeGetEvent},
    {"cuGraphChildGraphNodeGetGraph", (void*)fg_cuGraphChildGraphNodeGetGraph},
    {"cuGraphHostNodeGetParams", (void*)fg_cuGraphHostNodeGetParams},
    {"cuGraphNodeSetParams", (void*)fg_cuGraphNodeSetParams},
    {"cuGraphExecNodeSetParams", (void*)fg_cuGraphExecNodeSetParams},
    {"cuGraphNodeSetEnabled", (void*)fg_cuGraphNodeSetEnabled},
    {"cuGraphNodeGetEnabled", (void*)fg_cuGraphNodeGetEnabled},
    {"cuUserObjectCreate", (void*)fg_cuUserObjectCreate},
    {"cuUserObjectRelease", (void*)fg_cuUserObjectRelease},
    {"cuGraphRetainUserObject", (void*)fg_cuGraphRetainUserObject},
};

void* fake_graph_entry(const char* name)
{
    for (size_t i = 0; i < sizeof graph_table / sizeof graph_table[0]; ++i)
        if (strcmp(name, graph_table[i].name) == 0) return graph_table[i].fn;
    return NULL;
}

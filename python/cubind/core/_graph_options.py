"""The option dataclasses of cubind.core's graphs, with cuda.core 1.2's fields
and defaults: GraphCompleteOptions (instantiation, cuGraphInstantiateWithParams)
and GraphDebugPrintOptions (cuGraphDebugDotPrint's flags)."""

from __future__ import annotations

from dataclasses import dataclass, fields

TYPE_CHECKING = False  # typing is not imported at run time: the annotations are strings
if TYPE_CHECKING:
    from typing import Any

__all__ = ["GraphCompleteOptions", "GraphDebugPrintOptions"]


@dataclass
class GraphCompleteOptions:
    """How GraphBuilder.complete instantiates a graph: auto_free_on_launch
    (memory the graph allocated and did not free is freed at its next launch),
    upload_stream (a Stream to upload the instantiation on right away),
    device_launch (launchable from device code; not with auto_free_on_launch),
    use_node_priority (nodes run at their own priority, not the stream's)."""

    auto_free_on_launch: bool = False
    upload_stream: Any = None
    device_launch: bool = False
    use_node_priority: bool = False


# Each field's CU_GRAPH_DEBUG_DOT_FLAGS_* bit, in the order of cuda.h.
_DOT_FLAGS = {
    "verbose": 1 << 0,
    "runtime_types": 1 << 1,
    "kernel_node_params": 1 << 2,
    "memcpy_node_params": 1 << 3,
    "memset_node_params": 1 << 4,
    "host_node_params": 1 << 5,
    "event_node_params": 1 << 6,
    "ext_semas_signal_node_params": 1 << 7,
    "ext_semas_wait_node_params": 1 << 8,
    "kernel_node_attributes": 1 << 9,
    "handles": 1 << 10,
    "mem_alloc_node_params": 1 << 11,
    "mem_free_node_params": 1 << 12,
    "batch_mem_op_node_params": 1 << 13,
    "extra_topo_info": 1 << 14,
    "conditional_node_params": 1 << 15,
}


@dataclass
class GraphDebugPrintOptions:
    """What debug_dot_print writes beside the graph's shape: one switch per
    CU_GRAPH_DEBUG_DOT_FLAGS_* flag (verbose turns them all on)."""

    verbose: bool = False
    runtime_types: bool = False
    kernel_node_params: bool = False
    memcpy_node_params: bool = False
    memset_node_params: bool = False
    host_node_params: bool = False
    event_node_params: bool = False
    ext_semas_signal_node_params: bool = False
    ext_semas_wait_node_params: bool = False
    kernel_node_attributes: bool = False
    handles: bool = False
    mem_alloc_node_params: bool = False
    mem_free_node_params: bool = False
    batch_mem_op_node_params: bool = False
    extra_topo_info: bool = False
    conditional_node_params: bool = False

    def _to_flags(self) -> int:
        """The CU_GRAPH_DEBUG_DOT_FLAGS_* bits of the fields that are set."""
        flags = 0
        for field in fields(self):
            if getattr(self, field.name):
                flags |= _DOT_FLAGS[field.name]
        return flags

"""cubind.core.utils: cuda.core.utils' array views, batched memory operations and program caches.

StridedMemoryView and args_viewable_as_strided_memory, for functions that
take any library's arrays; copy_batch (cuMemcpyBatchAsync) with CopyOptions, MemcpyOverlapMode and
MemcpySrcAccessOrder; prefetch_batch, discard_batch and
discard_prefetch_batch over managed memory; ProgramCacheResource,
InMemoryProgramCache, FileStreamProgramCache and make_program_cache_key,
which Program.compile(..., cache=) uses. Importing this module loads no
CUDA library.
"""

from cubind.core._memory_options import CopyOptions, MemcpyOverlapMode, MemcpySrcAccessOrder
from cubind.core.utils._batch import copy_batch, discard_batch, discard_prefetch_batch, prefetch_batch
from cubind.core._memoryview import StridedMemoryView, args_viewable_as_strided_memory
from cubind.core.utils._program_cache import (
    FileStreamProgramCache,
    InMemoryProgramCache,
    ProgramCacheResource,
    make_program_cache_key,
)

__all__ = [
    "CopyOptions",
    "FileStreamProgramCache",
    "InMemoryProgramCache",
    "MemcpyOverlapMode",
    "MemcpySrcAccessOrder",
    "ProgramCacheResource",
    "StridedMemoryView",
    "args_viewable_as_strided_memory",
    "copy_batch",
    "discard_batch",
    "discard_prefetch_batch",
    "make_program_cache_key",
    "prefetch_batch",
]

"""cubind.core.utils: the program caches and array views of cuda.core.utils.

ProgramCacheResource, InMemoryProgramCache, FileStreamProgramCache and
make_program_cache_key (Program.compile(..., cache=) uses them);
StridedMemoryView and args_viewable_as_strided_memory, for functions that
take any library's arrays. Importing this module loads no CUDA library.
"""

from cubind.core._core import StridedMemoryView, args_viewable_as_strided_memory
from cubind.core.utils._program_cache import (
    FileStreamProgramCache,
    InMemoryProgramCache,
    ProgramCacheResource,
    make_program_cache_key,
)

__all__ = [
    "FileStreamProgramCache",
    "InMemoryProgramCache",
    "ProgramCacheResource",
    "StridedMemoryView",
    "args_viewable_as_strided_memory",
    "make_program_cache_key",
]

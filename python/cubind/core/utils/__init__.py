"""cubind.core.utils: the program caches of cuda.core.utils.

ProgramCacheResource, InMemoryProgramCache, FileStreamProgramCache and
make_program_cache_key; Program.compile(..., cache=) uses them. Importing
this module loads no CUDA library.
"""

from cubind.core.utils._program_cache import (
    FileStreamProgramCache,
    InMemoryProgramCache,
    ProgramCacheResource,
    make_program_cache_key,
)

__all__ = ["FileStreamProgramCache", "InMemoryProgramCache", "ProgramCacheResource", "make_program_cache_key"]

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# copy_batch of cubind.core.utils: several copies in one cuMemcpyBatchAsync.

from libc.stdint cimport uintptr_t
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport Buffer
from cubind.core._memory._managed cimport _location_arg
from cubind.core._stream cimport _legacy_default_stream as LEGACY_DEFAULT_STREAM, _stream_handle

import collections.abc
from cubind.core._memory_options import CopyOptions, _OVERLAP_MODE, _SRC_ACCESS_ORDER


cdef int _copy_hint(object hint, int* kind, int* ident, str where) except -1:
    if hint is None:
        kind[0] = 0
        ident[0] = 0
        return 0
    kind[0], ident[0] = _location_arg(hint, where)
    return 0


cdef cpp.CopyAttributes _copy_attributes(options, str where) except *:
    cdef cpp.CopyAttributes out
    out.src_access_order = _SRC_ACCESS_ORDER[options.src_access_order.value]
    out.flags = _OVERLAP_MODE[options.overlap_mode.value]
    _copy_hint(options.src_location_hint, &out.src_type, &out.src_id, where)
    _copy_hint(options.dst_location_hint, &out.dst_type, &out.dst_id, where)
    return out


def _copy_batch(stream, srcs, dsts, *, options=None):
    cdef cpp.CUstream handle
    cdef vector[uintptr_t] dst_ptrs
    cdef vector[uintptr_t] src_ptrs
    cdef vector[size_t] sizes
    cdef vector[cpp.CopyAttributes] attributes
    cdef Buffer src
    cdef Buffer dst
    if stream is LEGACY_DEFAULT_STREAM:
        raise TypeError("copy_batch: LEGACY_DEFAULT_STREAM cannot take a batched copy (cuMemcpyBatchAsync "
                        "refuses it); use a stream of your own or PER_THREAD_DEFAULT_STREAM")
    handle = _stream_handle(stream)
    if handle == NULL or handle == cpp.CU_STREAM_LEGACY:
        raise TypeError("copy_batch: the legacy default stream cannot take a batched copy; use another stream")
    if getattr(stream, "is_capturing", False) is True:
        raise TypeError("copy_batch: the stream is capturing a graph, and cuMemcpyBatchAsync has no graph node; "
                        "use Buffer.copy_to per buffer")
    for name, seq in (("srcs", srcs), ("dsts", dsts)):
        if isinstance(seq, Buffer) or not isinstance(seq, collections.abc.Sequence):
            raise TypeError(f"copy_batch: {name} must be a sequence of Buffers, not {type(seq).__name__}")
    if len(srcs) != len(dsts):
        raise ValueError(f"copy_batch: {len(srcs)} sources for {len(dsts)} destinations; the counts must match")
    if len(srcs) == 0:
        raise ValueError("copy_batch: srcs and dsts are empty")
    if options is None or isinstance(options, CopyOptions):
        per_copy = [CopyOptions() if options is None else options]
    elif isinstance(options, collections.abc.Sequence) and not isinstance(options, (str, bytes)):
        per_copy = list(options)
        if len(per_copy) != len(srcs):
            raise ValueError(f"copy_batch: {len(per_copy)} options for {len(srcs)} copies; "
                             "give one CopyOptions for all or one per copy")
        for i, item in enumerate(per_copy):
            if not isinstance(item, CopyOptions):
                raise TypeError(f"copy_batch: options[{i}] must be a CopyOptions, not {type(item).__name__}")
    else:
        raise TypeError(f"copy_batch: options must be a CopyOptions, a sequence of them or None, "
                        f"not {type(options).__name__}")
    for i in range(len(srcs)):
        if not isinstance(srcs[i], Buffer):
            raise TypeError(f"copy_batch: srcs[{i}] must be a Buffer, not {type(srcs[i]).__name__}")
        if not isinstance(dsts[i], Buffer):
            raise TypeError(f"copy_batch: dsts[{i}] must be a Buffer, not {type(dsts[i]).__name__}")
        src = <Buffer>srcs[i]
        dst = <Buffer>dsts[i]
        if src.is_closed or dst.is_closed:
            raise RuntimeError(f"copy_batch: the buffers of copy {i} include a closed one")
        if src._size != dst._size:
            raise ValueError(f"copy_batch: copy {i}: the source has {src._size} bytes, the destination {dst._size}")
        src_ptrs.push_back(src._ptr)
        dst_ptrs.push_back(dst._ptr)
        sizes.push_back(src._size)
    for item in per_copy:
        attributes.push_back(_copy_attributes(item, "copy_batch"))
    with nogil:
        cpp.copy_batch(dst_ptrs, src_ptrs, sizes, attributes, handle)

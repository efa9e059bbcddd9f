# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# copy_batch of cubind.core.utils: several copies in one cuMemcpyBatchAsync.

from libc.stdint cimport uintptr_t
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport Buffer
from cubind.core._memory._managed cimport _memory_location
from cubind.core._stream cimport _legacy_default_stream as LEGACY_DEFAULT_STREAM, _stream_handle

import collections.abc
from cubind.core._memory_options import CopyOptions


_SRC_ACCESS_ORDER = {
    "stream": cpp.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
    "during_api_call": cpp.CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
    "any": cpp.CU_MEMCPY_SRC_ACCESS_ORDER_ANY,
}
_OVERLAP_MODE = {
    "default": cpp.CU_MEMCPY_FLAG_DEFAULT,
    "prefer_overlap_with_compute": cpp.CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE,
}


cdef cpp.CUmemcpyAttributes _copy_attributes(options, str where) except *:
    # The one conversion of a CopyOptions to the driver's CUmemcpyAttributes.
    cdef cpp.CUmemcpyAttributes out = cpp.default_copy_attributes()
    out.srcAccessOrder = <cpp.CUmemcpySrcAccessOrder><int>_SRC_ACCESS_ORDER[options.src_access_order.value]
    out.flags = <unsigned int><int>_OVERLAP_MODE[options.overlap_mode.value]
    out.srcLocHint = _memory_location(options.src_location_hint, where, False)
    out.dstLocHint = _memory_location(options.dst_location_hint, where, False)
    return out


def _copy_batch(stream, srcs, dsts, *, options=None):
    cdef cpp.CUstream handle
    cdef vector[cpp.BatchCopy] copies
    cdef cpp.BatchCopy copy
    cdef vector[cpp.CUmemcpyAttributes] attributes
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
        copy.dst = dst._ptr
        copy.src = src._ptr
        copy.size = src._size
        copies.push_back(copy)
    for item in per_copy:
        attributes.push_back(_copy_attributes(item, "copy_batch"))
    with nogil:
        cpp.copy_batch(copies, attributes, cpp.StreamRef(handle))

"""The batched memory operations of cubind.core.utils, over the compiled modules."""

from __future__ import annotations

from cubind.core._memory import _copy_batch, _managed


def copy_batch(stream, srcs, dsts, *, options=None):
    """Copies each of srcs into the dst of the same index, in one call
    ordered on stream (cuMemcpyBatchAsync). Sizes must match pairwise;
    options is one CopyOptions for all, one per copy, or None. The driver
    may run the copies in any order and at once, so no source may overlap
    another copy's destination. Not on the legacy default stream, nor on a
    stream capturing a graph."""
    _copy_batch._copy_batch(stream, srcs, dsts, options=options)


def prefetch_batch(stream, buffers, locations):
    """Migrates each managed buffer to its location (a Device or Host; one
    for all or one per buffer), in one call ordered on stream
    (cuMemPrefetchBatchAsync). For one buffer, ManagedBuffer.prefetch."""
    _managed._prefetch_batch(stream, buffers, locations)


def discard_batch(stream, buffers):
    """Drops the contents of the managed buffers, ordered on stream
    (cuMemDiscardBatchAsync). For one buffer, ManagedBuffer.discard."""
    _managed._discard_batch(stream, buffers)


def discard_prefetch_batch(stream, buffers, locations):
    """Drops the contents of the managed buffers and places fresh pages at
    the locations, ordered on stream (cuMemDiscardAndPrefetchBatchAsync).
    For one buffer, ManagedBuffer.discard_prefetch."""
    _managed._discard_prefetch_batch(stream, buffers, locations)

"""_StridedLayout: shape, strides (in elements) and itemsize of a strided
array, as StridedMemoryView._layout reports it and view(layout=...) takes it.
Strides of None mean C-contiguous."""

from __future__ import annotations


def _ints(name, values):
    if not isinstance(values, tuple):
        values = tuple(values)
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"_StridedLayout: {name} must hold ints, got {type(v).__name__} {v!r}")
    return values


def _dense_strides(shape, order):
    # order: the axes from the slowest-moving to the one of stride 1.
    strides = [0] * len(shape)
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= max(shape[axis], 1)
    return tuple(strides)


class _StridedLayout:
    """_StridedLayout(shape, strides, itemsize, divide_strides=False)"""

    __slots__ = ("_shape", "_strides", "itemsize", "slice_offset")

    def __init__(self, shape, strides, itemsize, divide_strides=False):
        self._shape = _ints("shape", shape)
        if any(s < 0 for s in self._shape):
            raise ValueError(f"_StridedLayout: shape {self._shape} has a negative extent")
        if not isinstance(itemsize, int) or itemsize <= 0:
            raise ValueError(f"_StridedLayout: itemsize must be a positive int, got {itemsize!r}")
        self.itemsize = itemsize
        self.slice_offset = 0
        if strides is None:
            self._strides = None
            return
        strides = _ints("strides", strides)
        if len(strides) != len(self._shape):
            raise ValueError(f"_StridedLayout: strides {strides} and shape {self._shape} differ in length")
        if divide_strides:
            for s in strides:
                if s % itemsize:
                    raise ValueError(f"_StridedLayout: stride {s} bytes is not a multiple of the itemsize {itemsize}")
            strides = tuple(s // itemsize for s in strides)
        self._strides = strides

    @classmethod
    def dense(cls, shape, itemsize, stride_order="C"):
        shape = _ints("shape", shape)
        n = len(shape)
        if stride_order == "C":
            order = tuple(range(n))
        elif stride_order == "F":
            order = tuple(reversed(range(n)))
        else:
            order = tuple(stride_order)
            if sorted(order) != list(range(n)):
                raise ValueError(f"_StridedLayout.dense: stride_order {stride_order!r} is not a permutation of "
                                 f"{tuple(range(n))}")
        return cls(shape, _dense_strides(shape, order), itemsize)

    @classmethod
    def dense_like(cls, other, stride_order="K"):
        return cls.dense(other.shape, other.itemsize, other.stride_order if stride_order == "K" else stride_order)

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def shape(self):
        return self._shape

    @property
    def strides(self):
        return self._strides

    def _effective_strides(self):
        if self._strides is not None:
            return self._strides
        return _dense_strides(self._shape, tuple(range(len(self._shape))))

    @property
    def strides_in_bytes(self):
        return None if self._strides is None else tuple(s * self.itemsize for s in self._strides)

    @property
    def stride_order(self):
        strides = self._effective_strides()
        return tuple(sorted(range(self.ndim), key=lambda a: (-abs(strides[a]), a)))

    @property
    def volume(self):
        n = 1
        for e in self._shape:
            n *= e
        return n

    def _is_dense_in(self, order):
        if self.volume == 0:
            return True
        strides = self._effective_strides()
        step = 1
        for axis in reversed(order):
            if self._shape[axis] != 1 and strides[axis] != step:
                return False
            step *= self._shape[axis]
        return True

    @property
    def is_contiguous_c(self):
        return self._is_dense_in(tuple(range(self.ndim)))

    @property
    def is_contiguous_f(self):
        return self._is_dense_in(tuple(reversed(range(self.ndim))))

    @property
    def is_contiguous_any(self):
        return self._is_dense_in(self.stride_order)

    @property
    def is_dense(self):
        return self.is_contiguous_any and self.slice_offset == 0

    @property
    def offset_bounds(self):
        if self.volume == 0:
            return (0, -1)
        low = high = self.slice_offset
        for e, s in zip(self._shape, self._effective_strides()):
            if s < 0:
                low += (e - 1) * s
            else:
                high += (e - 1) * s
        return (low, high)

    @property
    def min_offset(self):
        return self.offset_bounds[0]

    @property
    def max_offset(self):
        return self.offset_bounds[1]

    @property
    def slice_offset_in_bytes(self):
        return self.slice_offset * self.itemsize

    @property
    def required_size_in_bytes(self):
        low, high = self.offset_bounds
        if low < 0:
            raise ValueError("_StridedLayout: the layout reaches before its first element (negative offsets)")
        return (high + 1) * self.itemsize

    def permuted(self, axis_order):
        axis_order = tuple(axis_order)
        if sorted(axis_order) != list(range(self.ndim)):
            raise ValueError(f"_StridedLayout.permuted: {axis_order} is not a permutation of {tuple(range(self.ndim))}")
        strides = self._effective_strides()
        out = _StridedLayout(tuple(self._shape[a] for a in axis_order), tuple(strides[a] for a in axis_order),
                             self.itemsize)
        out.slice_offset = self.slice_offset
        return out

    def __eq__(self, other):
        if not isinstance(other, _StridedLayout):
            return NotImplemented
        return (self._shape == other._shape and self.itemsize == other.itemsize
                and self._effective_strides() == other._effective_strides()
                and self.slice_offset == other.slice_offset)

    def __hash__(self):
        return hash((self._shape, self._effective_strides(), self.itemsize, self.slice_offset))

    def __repr__(self):
        return f"_StridedLayout(shape={self._shape}, strides={self._strides}, itemsize={self.itemsize})"

"""The options of a TMA tensor map (TensorMapDescriptorOptions and its
enums), and the checks made before cuTensorMapEncodeTiled sees a value.
The enums' values are the driver's (CUtensorMapDataType, CUtensorMapInterleave,
...). TensorMapDescriptor itself is compiled (_tensor_map.pyx): launch passes
its 128 bytes by value."""

from __future__ import annotations

import dataclasses
import enum


class TensorMapDataType(enum.IntEnum):
    """CUtensorMapDataType: the element type a tensor map moves."""

    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12


class TensorMapInterleave(enum.IntEnum):
    """CUtensorMapInterleave."""

    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2


class TensorMapSwizzle(enum.IntEnum):
    """CUtensorMapSwizzle: how a tile is laid out in shared memory."""

    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3


class TensorMapL2Promotion(enum.IntEnum):
    """CUtensorMapL2promotion."""

    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class TensorMapOOBFill(enum.IntEnum):
    """CUtensorMapFloatOOBfill: what a load outside the tensor reads."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


class TensorMapIm2ColWideMode(enum.IntEnum):
    """CUtensorMapIm2ColWideMode (CUDA 13, compute capability 10.0+)."""

    W = 0
    W128 = 1


# Bytes per element of each data type.
_DATA_TYPE_SIZE = {
    TensorMapDataType.UINT8: 1, TensorMapDataType.UINT16: 2, TensorMapDataType.UINT32: 4,
    TensorMapDataType.INT32: 4, TensorMapDataType.UINT64: 8, TensorMapDataType.INT64: 8,
    TensorMapDataType.FLOAT16: 2, TensorMapDataType.FLOAT32: 4, TensorMapDataType.FLOAT64: 8,
    TensorMapDataType.BFLOAT16: 2, TensorMapDataType.FLOAT32_FTZ: 4, TensorMapDataType.TFLOAT32: 4,
    TensorMapDataType.TFLOAT32_FTZ: 4,
}

# NumPy dtype names a tensor map takes as they are (bfloat16 comes from ml_dtypes).
_DTYPE_NAMES = {
    "uint8": TensorMapDataType.UINT8, "uint16": TensorMapDataType.UINT16, "uint32": TensorMapDataType.UINT32,
    "int32": TensorMapDataType.INT32, "uint64": TensorMapDataType.UINT64, "int64": TensorMapDataType.INT64,
    "float16": TensorMapDataType.FLOAT16, "float32": TensorMapDataType.FLOAT32, "float64": TensorMapDataType.FLOAT64,
    "bfloat16": TensorMapDataType.BFLOAT16,
}


def _int_tuple(name, values):
    if isinstance(values, list):
        values = tuple(values)
    if not isinstance(values, tuple):
        raise TypeError(f"{name} must be a tuple of ints, got {type(values)}")
    for i, v in enumerate(values):
        if not isinstance(v, int):
            raise TypeError(f"{name}[{i}] must be an int, got {type(v)}")
    return values


def _require_enum(name, value, enum_type):
    if not isinstance(value, enum_type):
        raise TypeError(f"{name} must be a {enum_type.__name__}, got {type(value)}")
    return value


@dataclasses.dataclass
class TensorMapDescriptorOptions:
    """The options of StridedMemoryView.as_tensor_map, bundled: box_dim
    (the tile, in elements, one per dimension in the tensor's order),
    element_strides, data_type (a NumPy dtype or a TensorMapDataType; None
    takes the view's), interleave, swizzle, l2_promotion and oob_fill."""

    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...] | None = None
    data_type: object = None
    interleave: TensorMapInterleave = TensorMapInterleave.NONE
    swizzle: TensorMapSwizzle = TensorMapSwizzle.NONE
    l2_promotion: TensorMapL2Promotion = TensorMapL2Promotion.NONE
    oob_fill: TensorMapOOBFill = TensorMapOOBFill.NONE

    def __post_init__(self):
        self.box_dim = _int_tuple("box_dim", self.box_dim)
        if self.element_strides is not None:
            self.element_strides = _int_tuple("element_strides", self.element_strides)
        if self.data_type is not None and not isinstance(self.data_type, TensorMapDataType):
            _check_dtype(self.data_type)
        _require_enum("interleave", self.interleave, TensorMapInterleave)
        _require_enum("swizzle", self.swizzle, TensorMapSwizzle)
        _require_enum("l2_promotion", self.l2_promotion, TensorMapL2Promotion)
        _require_enum("oob_fill", self.oob_fill, TensorMapOOBFill)


def _check_dtype(data_type):
    # data_type is a TensorMapDataType or what NumPy takes as a dtype (a dtype,
    # a scalar type, "float32"); checked when the options are made, as in
    # cuda.core. NumPy is imported only here, for a data_type of this kind.
    try:
        import numpy
    except ImportError:
        return
    try:
        numpy.dtype(data_type)
    except (TypeError, ValueError):
        raise TypeError(f"data_type must be a TensorMapDataType or a numpy/ml_dtypes dtype, got {type(data_type)} "
                        f"(TensorMapDescriptorOptions.data_type is {data_type!r:.60})") from None


def _coerce_options(box_dim, options, *, element_strides, data_type, interleave, swizzle, l2_promotion, oob_fill):
    """One TensorMapDescriptorOptions from as_tensor_map's arguments: either
    options (an instance or a mapping of its fields) or the rest."""
    if options is None:
        if box_dim is None:
            raise TypeError("box_dim is required unless options is provided")
        if not isinstance(box_dim, tuple):
            raise TypeError(f"Argument 'box_dim' has incorrect type (expected tuple, got {type(box_dim).__name__})")
        return TensorMapDescriptorOptions(box_dim, element_strides, data_type, interleave, swizzle, l2_promotion,
                                          oob_fill)
    if (box_dim is not None or element_strides is not None or data_type is not None
            or interleave is not TensorMapInterleave.NONE or swizzle is not TensorMapSwizzle.NONE
            or l2_promotion is not TensorMapL2Promotion.NONE or oob_fill is not TensorMapOOBFill.NONE):
        raise TypeError("Specify either options or the individual tensor map arguments, not both")
    if isinstance(options, TensorMapDescriptorOptions):
        return options
    if isinstance(options, dict):
        return TensorMapDescriptorOptions(**options)
    raise TypeError(f"options must be a TensorMapDescriptorOptions or a mapping, got {type(options)}")


def _data_type_of(view_dtype, data_type):
    """The TensorMapDataType for data_type (None: the view's dtype)."""
    if isinstance(data_type, TensorMapDataType):
        return data_type
    explicit = data_type is not None
    dtype = data_type if explicit else view_dtype
    if dtype is None:
        raise ValueError("The view has no dtype; pass data_type")
    import numpy

    dtype = numpy.dtype(dtype)
    found = _DTYPE_NAMES.get(dtype.name) if dtype.isnative or dtype.itemsize == 1 else None
    if found is None:
        supported = [numpy.dtype(n) for n in _DTYPE_NAMES if n != "bfloat16"]
        hint = "" if explicit else " You may also specify data_type explicitly."
        raise ValueError(f"Unsupported dtype {dtype} for TMA; supported dtypes: {supported}.{hint}")
    return found


def _check_tiled(rank, box_dim, element_strides, interleave, swizzle, elem_size):
    """Checks of cuTensorMapEncodeTiled's rules the caller can fix; returns
    element_strides (all 1 by default)."""
    if len(box_dim) != rank:
        raise ValueError(f"box_dim must have {rank} elements (same as tensor rank), got {len(box_dim)}")
    for i, b in enumerate(box_dim):
        if not 1 <= b <= 256:
            raise ValueError(f"box_dim[{i}] must be in [1, 256], got {b}")
    if element_strides is None:
        element_strides = (1,) * rank
    if len(element_strides) != rank:
        raise ValueError(f"element_strides must have {rank} elements, got {len(element_strides)}")
    for i, s in enumerate(element_strides):
        if not 1 <= s <= 8:
            raise ValueError(f"element_strides[{i}] must be in [1, 8], got {s}")
    if interleave == TensorMapInterleave.NONE:
        inner = box_dim[-1] * elem_size
        if inner % 16:
            raise ValueError(f"box_dim[{rank - 1}] * element size ({inner} bytes) must be a multiple of 16 bytes")
        limit = {TensorMapSwizzle.SWIZZLE_32B: 32, TensorMapSwizzle.SWIZZLE_64B: 64,
                 TensorMapSwizzle.SWIZZLE_128B: 128}.get(swizzle)
        if limit is not None and inner > limit:
            raise ValueError(f"box_dim[{rank - 1}] * element size ({inner} bytes) must be at most the swizzle "
                             f"span ({limit} bytes)")
    return element_strides

"""The options of cubind.core.texture and the checks they share.

OpaqueArrayOptions, MipmappedArrayOptions and TextureObjectOptions, as
cuda.core 1.2 has them: each checks and normalizes its fields when made
(a format given as a string or a NumPy dtype becomes an ArrayFormatType, a
shape a tuple of ints), and the same exception types come for the same bad
values. Plain Python: importing it loads no CUDA library and no NumPy (a
format given as a dtype imports NumPy to read it).
"""

from __future__ import annotations

from dataclasses import dataclass

from cubind.core.typing import AddressModeType, ArrayFormatType, FilterModeType, ReadModeType

# Bytes of one channel of each format.
_FORMAT_BYTES = {
    ArrayFormatType.UINT8: 1,
    ArrayFormatType.INT8: 1,
    ArrayFormatType.UINT16: 2,
    ArrayFormatType.INT16: 2,
    ArrayFormatType.FLOAT16: 2,
    ArrayFormatType.UINT32: 4,
    ArrayFormatType.INT32: 4,
    ArrayFormatType.FLOAT32: 4,
}


def _choices(enum_type):
    return "{" + ", ".join(repr(member.value) for member in enum_type) + "}"


def _article(name):
    return "an" if name[0] in "AEIOU" else "a"


def _normalize_array_format(format):
    """An ArrayFormatType from an ArrayFormatType, its value as a string
    ("float32"), or a NumPy dtype (or what numpy.dtype takes) of the same
    type. ValueError for anything else."""
    if isinstance(format, ArrayFormatType):
        return format
    if isinstance(format, str):
        try:
            return ArrayFormatType(format)
        except ValueError:
            raise ValueError(
                f"format must be an ArrayFormatType or one of {_choices(ArrayFormatType)}, got {format!r}"
            ) from None
    try:
        import numpy
    except ImportError:
        raise ValueError(
            f"format must be an ArrayFormatType or one of {_choices(ArrayFormatType)}, got {format!r} "
            "(NumPy, which would read it as a dtype, is not installed)"
        ) from None
    try:
        dtype = numpy.dtype(format)
    except TypeError:
        raise ValueError(f"format must be an ArrayFormatType, str, or NumPy dtype, got {format!r}") from None
    for member in ArrayFormatType:
        if dtype == numpy.dtype(member.value):
            return member
    raise ValueError(
        f"NumPy dtype {dtype!r} has no ArrayFormatType equivalent; supported formats: {_choices(ArrayFormatType)}"
    )


def _validate_format_channels(format, num_channels):
    """The format, normalized, once the (format, num_channels) pair is valid."""
    normalized = _normalize_array_format(format)
    if isinstance(num_channels, bool) or num_channels not in (1, 2, 4):
        raise ValueError(f"num_channels must be 1, 2, or 4, got {num_channels!r}")
    return normalized


def _validate_array_shape(shape):
    """shape as a tuple of 1 to 3 ints, each at least 1."""
    try:
        items = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be a tuple of ints, got {type(shape).__name__}") from None
    extents = []
    for i, item in enumerate(items):
        try:
            extents.append(int(item))
        except TypeError:
            raise TypeError(
                f"shape must be a tuple of ints, got {type(shape).__name__} with shape[{i}] = {item!r}"
            ) from None
        except ValueError:
            raise ValueError(f"shape[{i}] must be an int, got {item!r}") from None
    if not 1 <= len(extents) <= 3:
        raise ValueError(f"shape rank must be 1, 2, or 3, got {len(extents)} (shape {tuple(items)!r})")
    for i, extent in enumerate(extents):
        if extent < 1:
            raise ValueError(f"shape[{i}] must be >= 1, got {extent}")
    return tuple(extents)


def _normalize_enum(name, value, enum_type):
    """value as an enum_type (a StrEnum), taking its members' strings too."""
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except ValueError:
        raise ValueError(
            f"{name} must be {_article(enum_type.__name__)} {enum_type.__name__} or one of {_choices(enum_type)}, "
            f"got {value!r}"
        ) from None


def _normalize_address_modes(address_mode):
    """Three AddressModeTypes (x, y, z) from one mode or a tuple of 1 to 3,
    the last repeated for the dimensions not given."""
    if isinstance(address_mode, (AddressModeType, str)):
        mode = _normalize_enum("address_mode", address_mode, AddressModeType)
        return (mode, mode, mode)
    try:
        modes = tuple(address_mode)
    except TypeError:
        raise TypeError(
            f"address_mode must be an AddressModeType or a tuple of AddressModeType, got {address_mode!r}"
        ) from None
    if not 1 <= len(modes) <= 3:
        raise ValueError(f"address_mode tuple must have 1-3 entries, got {len(modes)}")
    modes = tuple(_normalize_enum(f"address_mode[{i}]", m, AddressModeType) for i, m in enumerate(modes))
    return modes + (modes[-1],) * (3 - len(modes))


def _checked_options(options, cls, what):
    """options as a cls: a cls, or a dict of its fields."""
    if isinstance(options, cls):
        return options
    if isinstance(options, dict):
        return cls(**options)
    raise TypeError(
        f"The {what} must be provided as an object of type {cls.__name__} or as a dict with valid {what}. "
        f"The provided object is '{options}' (of type {type(options).__name__})."
    )


@dataclass
class OpaqueArrayOptions:
    """What Device.create_opaque_array allocates.

    shape: (width,), (width, height) or (width, height, depth), in elements.
    format: an ArrayFormatType, its value ("float32") or a NumPy dtype.
    num_channels: 1, 2 or 4 channels per element.
    is_surface_load_store: allocate with CUDA_ARRAY3D_SURFACE_LDST, so that
    the array can back a SurfaceObject.
    """

    shape: tuple[int, ...]
    format: object
    num_channels: int
    is_surface_load_store: bool = False

    def __post_init__(self):
        self.format = _validate_format_channels(self.format, self.num_channels)
        self.shape = _validate_array_shape(self.shape)


@dataclass
class MipmappedArrayOptions:
    """What Device.create_mipmapped_array allocates: OpaqueArrayOptions'
    fields for level 0, and num_levels (at least 1; the driver refuses more
    than the largest extent halves to)."""

    shape: tuple[int, ...]
    format: object
    num_channels: int
    num_levels: int
    is_surface_load_store: bool = False

    def __post_init__(self):
        self.format = _validate_format_channels(self.format, self.num_channels)
        self.shape = _validate_array_shape(self.shape)
        try:
            self.num_levels = int(self.num_levels)
        except TypeError:
            raise TypeError(f"num_levels must be an int, got {self.num_levels!r}") from None
        except ValueError:
            raise ValueError(f"num_levels must be an int, got {self.num_levels!r}") from None
        if self.num_levels < 1:
            raise ValueError(f"num_levels must be >= 1, got {self.num_levels}")


@dataclass
class TextureObjectOptions:
    """The sampling state of a TextureObject (CUDA_TEXTURE_DESC).

    address_mode: one AddressModeType for every dimension, or a tuple of 1
    to 3 (the last repeats). filter_mode, mipmap_filter_mode: FilterModeType.
    read_mode: ReadModeType (ELEMENT_TYPE reads integers as they are).
    normalized_coords: coordinates in [0, 1) rather than in texels.
    border_color: 4 floats read outside a BORDER texture (None: zeros).
    Strings of the enums' values are taken wherever an enum is.
    """

    address_mode: AddressModeType | str | tuple[AddressModeType | str, ...] = AddressModeType.CLAMP
    filter_mode: FilterModeType | str = FilterModeType.POINT
    read_mode: ReadModeType | str = ReadModeType.ELEMENT_TYPE
    normalized_coords: bool = False
    srgb: bool = False
    disable_trilinear_optimization: bool = False
    seamless_cubemap: bool = False
    max_anisotropy: int = 0
    mipmap_filter_mode: FilterModeType | str = FilterModeType.POINT
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0
    border_color: tuple[float, ...] | None = None

    def __post_init__(self):
        self.filter_mode = _normalize_enum("filter_mode", self.filter_mode, FilterModeType)
        self.read_mode = _normalize_enum("read_mode", self.read_mode, ReadModeType)
        self.mipmap_filter_mode = _normalize_enum("mipmap_filter_mode", self.mipmap_filter_mode, FilterModeType)


# The driver's CUarray_format of each format.
_FORMAT_CODES = {
    ArrayFormatType.UINT8: 0x01,
    ArrayFormatType.UINT16: 0x02,
    ArrayFormatType.UINT32: 0x03,
    ArrayFormatType.INT8: 0x08,
    ArrayFormatType.INT16: 0x09,
    ArrayFormatType.INT32: 0x0A,
    ArrayFormatType.FLOAT16: 0x10,
    ArrayFormatType.FLOAT32: 0x20,
}
_FORMAT_OF_CODE = {code: member for member, code in _FORMAT_CODES.items()}

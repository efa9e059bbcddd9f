# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# ResourceDescriptor (what a texture reads) and TextureObject
# (cubind::TextureObject, cuTexObjectCreate). A texture over an array holds a
# share of it in the core; one over a Buffer keeps the Buffer object, through
# its ResourceDescriptor, until it is closed.

from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject
from cubind.core._device cimport _Device as Device
from cubind.core._memory._buffer cimport Buffer
from cubind.core.texture._array cimport OpaqueArray
from cubind.core.texture._mipmapped_array cimport MipmappedArray

from cubind.core.texture._options import (  # noqa: F401
    _FORMAT_BYTES,
    _FORMAT_CODES,
    TextureObjectOptions,
    _checked_options,
    _normalize_address_modes,
    _normalize_enum,
    _validate_format_channels,
)
from cubind.core.typing import AddressModeType, FilterModeType, ReadModeType

_ADDRESS_MODES = {
    AddressModeType.WRAP: cpp.CU_TR_ADDRESS_MODE_WRAP,
    AddressModeType.CLAMP: cpp.CU_TR_ADDRESS_MODE_CLAMP,
    AddressModeType.MIRROR: cpp.CU_TR_ADDRESS_MODE_MIRROR,
    AddressModeType.BORDER: cpp.CU_TR_ADDRESS_MODE_BORDER,
}
_FILTER_MODES = {
    FilterModeType.POINT: cpp.CU_TR_FILTER_MODE_POINT,
    FilterModeType.LINEAR: cpp.CU_TR_FILTER_MODE_LINEAR,
}


def _whole(value, str name):
    # An int from what int() takes, with the parameter named when it fails.
    try:
        return int(value)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name} must be an int, got {value!r}") from None


class ResourceDescriptor:
    """What a TextureObject (or SurfaceObject) reads, made by one of:
    from_opaque_array (an OpaqueArray: textures and surfaces),
    from_mipmapped_array (a MipmappedArray: textures sampled across levels),
    from_linear (a Buffer as a typed 1-D range, read without filtering or
    addressing) and from_pitch2d (a Buffer as rows of a 2-D image)."""

    __slots__ = ("_kind", "_source", "_format", "_num_channels", "_size_bytes", "_width", "_height", "_pitch_bytes")

    def __init__(self):
        raise RuntimeError(
            "ResourceDescriptor cannot be instantiated directly. Use ResourceDescriptor.from_* factories."
        )

    @classmethod
    def _make(cls, kind, source, format=None, num_channels=None, size_bytes=None, width=None, height=None,
              pitch_bytes=None):
        self = cls.__new__(cls)
        self._kind = kind
        self._source = source
        self._format = format
        self._num_channels = num_channels
        self._size_bytes = size_bytes
        self._width = width
        self._height = height
        self._pitch_bytes = pitch_bytes
        return self

    @classmethod
    def from_opaque_array(cls, array):
        """A resource over an OpaqueArray."""
        if not isinstance(array, OpaqueArray):
            raise TypeError(f"array must be an OpaqueArray, got {type(array).__name__}")
        return cls._make("array", array)

    @classmethod
    def from_mipmapped_array(cls, mipmapped_array):
        """A resource over a MipmappedArray, for textures sampled across its
        levels (a surface takes one level: MipmappedArray.get_level)."""
        if not isinstance(mipmapped_array, MipmappedArray):
            raise TypeError(f"mipmapped_array must be a MipmappedArray, got {type(mipmapped_array).__name__}")
        return cls._make("mipmapped_array", mipmapped_array)

    @classmethod
    def from_linear(cls, buffer, *, format, num_channels, size_bytes=None):
        """A resource over size_bytes (default: all) of buffer, read as a
        typed 1-D range of elements of format with num_channels channels."""
        if not isinstance(buffer, Buffer):
            raise TypeError(f"buffer must be a Buffer, got {type(buffer).__name__}")
        (<Buffer>buffer)._require_open()
        fmt = _validate_format_channels(format, num_channels)
        buffer_size = int(buffer.size)
        element = _FORMAT_BYTES[fmt] * int(num_channels)
        if size_bytes is None:
            size = buffer_size
        else:
            size = _whole(size_bytes, "size_bytes")
            if size > buffer_size:
                raise ValueError(f"size_bytes ({size}) exceeds buffer.size ({buffer_size})")
        if size < element:
            raise ValueError(f"size_bytes ({size}) must be at least one element ({element} bytes)")
        if size % element:
            raise ValueError(
                f"size_bytes ({size}) must be a multiple of element size ({element} bytes for {fmt.name} x "
                f"{num_channels})"
            )
        return cls._make("linear", buffer, fmt, int(num_channels), size_bytes=size)

    @classmethod
    def from_pitch2d(cls, buffer, *, format, num_channels, width, height, pitch_bytes):
        """A resource over buffer read as height rows of width elements,
        pitch_bytes apart (at least a row, and a multiple of the device's
        texture_pitch_alignment for the driver to take it)."""
        if not isinstance(buffer, Buffer):
            raise TypeError(f"buffer must be a Buffer, got {type(buffer).__name__}")
        (<Buffer>buffer)._require_open()
        fmt = _validate_format_channels(format, num_channels)
        w = _whole(width, "width")
        h = _whole(height, "height")
        p = _whole(pitch_bytes, "pitch_bytes")
        if w < 1:
            raise ValueError(f"width must be >= 1, got {w}")
        if h < 1:
            raise ValueError(f"height must be >= 1, got {h}")
        row = w * _FORMAT_BYTES[fmt] * int(num_channels)
        if p < row:
            raise ValueError(f"pitch_bytes ({p}) must be >= width * element_bytes ({row})")
        if p * h > int(buffer.size):
            raise ValueError(f"pitch_bytes * height ({p * h}) exceeds buffer.size ({int(buffer.size)})")
        return cls._make("pitch2d", buffer, fmt, int(num_channels), width=w, height=h, pitch_bytes=p)

    @property
    def kind(self):
        """"array", "mipmapped_array", "linear" or "pitch2d"."""
        return self._kind

    @property
    def source(self):
        """The OpaqueArray, MipmappedArray or Buffer read."""
        return self._source

    @property
    def format(self):
        """The element's ArrayFormatType of a linear or pitch2d resource; None for arrays."""
        return self._format

    @property
    def num_channels(self):
        """Channels per element of a linear or pitch2d resource; None for arrays."""
        return self._num_channels

    @property
    def size_bytes(self):
        """Bytes of a linear resource; None for the other kinds."""
        return self._size_bytes

    @property
    def width(self):
        """Elements per row of a pitch2d resource; None for the other kinds."""
        return self._width

    @property
    def height(self):
        """Rows of a pitch2d resource; None for the other kinds."""
        return self._height

    @property
    def pitch_bytes(self):
        """Bytes from a row to the next of a pitch2d resource; None for the other kinds."""
        return self._pitch_bytes

    def __repr__(self):
        if self._kind == "linear":
            return (f"ResourceDescriptor(kind='linear', format={self._format.name}, "
                    f"num_channels={self._num_channels}, size_bytes={self._size_bytes})")
        if self._kind == "pitch2d":
            return (f"ResourceDescriptor(kind='pitch2d', format={self._format.name}, "
                    f"num_channels={self._num_channels}, width={self._width}, height={self._height}, "
                    f"pitch_bytes={self._pitch_bytes})")
        return f"ResourceDescriptor(kind={self._kind!r})"


cdef float _real(value, str name) except? -1:
    try:
        return value
    except TypeError:
        raise TypeError(f"{name} must be a float, got {value!r}") from None


cdef int _texture_options_fill(options, cpp.TextureOptions* out) except -1:
    # The one conversion of a TextureObjectOptions to the core's TextureOptions.
    modes = _normalize_address_modes(options.address_mode)
    for axis in range(3):
        cpp.texture_options_set_address_mode(out[0], axis, _ADDRESS_MODES[modes[axis]])
    out.filter_mode = _FILTER_MODES[_normalize_enum("filter_mode", options.filter_mode, FilterModeType)]
    read_mode = _normalize_enum("read_mode", options.read_mode, ReadModeType)
    cpp.texture_options_set_normalized_float(out[0], read_mode == ReadModeType.NORMALIZED_FLOAT)
    out.normalized_coords = bool(options.normalized_coords)
    out.srgb = bool(options.srgb)
    out.disable_trilinear_optimization = bool(options.disable_trilinear_optimization)
    out.seamless_cubemap = bool(options.seamless_cubemap)
    anisotropy = options.max_anisotropy
    if not hasattr(anisotropy, "__index__"):
        raise TypeError(f"max_anisotropy must be an int, got {anisotropy!r}")
    if anisotropy < 0:
        raise ValueError(f"max_anisotropy must be >= 0, got {anisotropy}")
    out.max_anisotropy = anisotropy
    out.mipmap_filter_mode = _FILTER_MODES[
        _normalize_enum("mipmap_filter_mode", options.mipmap_filter_mode, FilterModeType)]
    out.mipmap_level_bias = _real(options.mipmap_level_bias, "mipmap_level_bias")
    out.min_mipmap_level_clamp = _real(options.min_mipmap_level_clamp, "min_mipmap_level_clamp")
    out.max_mipmap_level_clamp = _real(options.max_mipmap_level_clamp, "max_mipmap_level_clamp")
    if options.border_color is not None:
        try:
            border = tuple(options.border_color)
        except TypeError:
            raise TypeError(
                f"border_color must be a tuple of 4 floats or None, got {options.border_color!r}") from None
        if len(border) != 4:
            raise ValueError(f"border_color must have 4 elements, got {len(border)} ({options.border_color!r})")
        for channel in range(4):
            cpp.texture_options_set_border(out[0], channel, _real(border[channel], f"border_color[{channel}]"))
    return 0


def _create_texture_object(resource, options=None, device_id=None):
    """A new TextureObject on device device_id (the current device when
    None) reading resource with options (a TextureObjectOptions, a dict of
    its fields, or None for the defaults): backs Device.create_texture_object
    (cuTexObjectCreate)."""
    cdef cpp.TextureOptions native
    cdef int ordinal
    cdef cpp.TextureObject* made
    cdef shared_ptr[cpp.ArrayRef] array
    cdef shared_ptr[cpp.MipmappedArray] mipmap
    cdef uintptr_t ptr
    cdef cpp.CUarray_format format
    cdef unsigned int channels
    cdef size_t size, width, height, pitch
    cdef TextureObject self
    if not isinstance(resource, ResourceDescriptor):
        raise TypeError(f"resource must be a ResourceDescriptor, got {type(resource).__name__}")
    options = TextureObjectOptions() if options is None else _checked_options(
        options, TextureObjectOptions, "Texture object options")
    _texture_options_fill(options, &native)
    ordinal = Device().device_id if device_id is None else device_id
    kind = resource.kind
    source = resource.source
    if kind == "array":
        (<OpaqueArray>source)._require_open()
        array = (<OpaqueArray>source)._cpp
        with nogil:
            made = cpp.texture_object_of_array(ordinal, array, native)
    elif kind == "mipmapped_array":
        (<MipmappedArray>source)._require_open()
        mipmap = (<MipmappedArray>source)._cpp
        with nogil:
            made = cpp.texture_object_of_mipmap(ordinal, mipmap, native)
    else:
        (<Buffer>source)._require_open()
        ptr = (<Buffer>source)._ptr
        format = <cpp.CUarray_format><int>_FORMAT_CODES[resource.format]
        channels = resource.num_channels
        if kind == "linear":
            size = resource.size_bytes
            with nogil:
                made = cpp.texture_object_of_linear(ordinal, <cpp.CUdeviceptr>ptr, format, channels, size, native)
        else:
            width = resource.width
            height = resource.height
            pitch = resource.pitch_bytes
            with nogil:
                made = cpp.texture_object_of_pitch2d(ordinal, <cpp.CUdeviceptr>ptr, format, channels, width,
                                                     height, pitch, native)
    self = TextureObject.__new__(TextureObject)
    self._cpp.reset(made)
    self._resource = resource
    self._options = options
    self._device_id = ordinal
    return self


cdef class TextureObject(_HandleObject):
    """A bindless texture: sampled reads of a ResourceDescriptor's memory
    with the filtering, addressing and read mode of a TextureObjectOptions.
    A kernel takes its handle (a 64-bit cudaTextureObject_t). It keeps what
    it reads alive until it is closed. Made by Device.create_texture_object."""

    _maker = "create_texture_object"

    cdef bint _open(self):
        return self._cpp.get() != NULL

    cdef unsigned long long _raw_handle(self):
        return self._cpp.get().handle()

    @property
    def resource(self):
        """The ResourceDescriptor read; None once closed."""
        return self._resource

    @property
    def options(self):
        """The TextureObjectOptions the texture was made with."""
        return self._options

    cpdef close(self):
        """Destroys the texture (cuTexObjectDestroy) and lets go of what it
        read. Closing twice does nothing."""
        self._cpp.reset()
        self._resource = None

    def __repr__(self):
        return f"TextureObject(handle={self.handle:#x})"

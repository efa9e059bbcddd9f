"""Texture and surface memory: cuda.core 1.2's ``cuda.core.texture``.

CUDA arrays (OpaqueArray, MipmappedArray), storage laid out by the hardware
that kernels reach through bindless texture objects (sampled reads, with
filtering and addressing) and surface objects (typed loads and stores); the
ResourceDescriptor that says what a texture reads; and the options of each.
Make them with Device.create_opaque_array, create_mipmapped_array,
create_texture_object and create_surface_object. The enums they take
(ArrayFormatType, AddressModeType, FilterModeType, ReadModeType) are in
cubind.core.typing.

``import cubind.core`` does not load this subpackage: it loads at its first
use (``cubind.core.texture``, an import of it, or a Device.create_* call).
"""

from cubind.core.texture._array import OpaqueArray
from cubind.core.texture._mipmapped_array import MipmappedArray
from cubind.core.texture._options import MipmappedArrayOptions, OpaqueArrayOptions, TextureObjectOptions
from cubind.core.texture._surface import SurfaceObject
from cubind.core.texture._texture import ResourceDescriptor, TextureObject

__all__ = [
    "MipmappedArray",
    "MipmappedArrayOptions",
    "OpaqueArray",
    "OpaqueArrayOptions",
    "ResourceDescriptor",
    "SurfaceObject",
    "TextureObject",
    "TextureObjectOptions",
]

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# MipmappedArray: a chain of CUDA arrays, each half the one before
# (cubind::MipmappedArray). A level is an OpaqueArray holding a share of the
# whole chain, so it stays valid after the MipmappedArray is closed.

from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject
from cubind.core._device cimport _Device as Device
from cubind.core.texture._array cimport _array_of, _fill_descriptor

from cubind.core.texture._options import MipmappedArrayOptions, _checked_options  # noqa: F401


def _create_mipmapped_array(options, device_id=None):
    """A new MipmappedArray on device device_id (the current device when
    None): backs Device.create_mipmapped_array (cuMipmappedArrayCreate)."""
    cdef cpp.ArrayDescriptor descriptor
    cdef int ordinal
    cdef unsigned int levels
    cdef shared_ptr[cpp.MipmappedArray] mipmap
    cdef MipmappedArray self
    options = _checked_options(options, MipmappedArrayOptions, "Mipmapped array options")
    _fill_descriptor(options.shape, options.format, options.num_channels, options.is_surface_load_store,
                     &descriptor)
    levels = options.num_levels
    ordinal = Device().device_id if device_id is None else device_id
    with nogil:
        mipmap = cpp.mipmapped_array_new(ordinal, descriptor, levels)
    self = MipmappedArray.__new__(MipmappedArray)
    self._cpp = mipmap
    self._shape = options.shape
    self._format = options.format
    self._num_channels = int(options.num_channels)
    self._num_levels = levels
    self._surface_load_store = bool(options.is_surface_load_store)
    self._device_id = ordinal
    return self


cdef class MipmappedArray(_HandleObject):
    """A mipmapped CUDA array: num_levels arrays, each half the size of the
    one before in every dimension (at least 1). A TextureObject samples it
    across levels; get_level gives one level as an OpaqueArray (to fill it,
    or to bind it to a SurfaceObject). Made by Device.create_mipmapped_array."""

    _maker = "create_mipmapped_array"

    cdef bint _open(self):
        return self._cpp.get() != NULL

    cdef unsigned long long _raw_handle(self):
        return <uintptr_t>self._cpp.get().handle()

    cdef int _require_open(self) except -1:
        if not self._cpp:
            raise RuntimeError("MipmappedArray has been closed")
        return 0

    def get_level(self, level):
        """Level level (0 is the largest) as an OpaqueArray
        (cuMipmappedArrayGetLevel). It holds a share of this mipmapped
        array, which lives while the level does; closing the level destroys
        nothing."""
        cdef unsigned int index
        cdef shared_ptr[cpp.ArrayRef] array
        cdef shared_ptr[cpp.MipmappedArray] share = self._cpp
        self._require_open()
        try:
            lvl = int(level)
        except (TypeError, ValueError) as error:
            raise type(error)(f"MipmappedArray.get_level: level must be an int, got {level!r}") from None
        if lvl < 0:
            raise ValueError(f"level must be >= 0, got {lvl}")
        if lvl >= self._num_levels:
            raise ValueError(f"level ({lvl}) must be < num_levels ({self._num_levels})")
        index = lvl
        with nogil:
            array = cpp.mipmapped_array_level(share, index)
        return _array_of(array, self._device_id)

    @property
    def shape(self):
        """Level 0's shape, in elements."""
        return self._shape

    @property
    def format(self):
        """The element's ArrayFormatType."""
        return self._format

    @property
    def num_channels(self):
        """Channels per element: 1, 2 or 4."""
        return self._num_channels

    @property
    def num_levels(self):
        """How many levels the array has."""
        return self._num_levels

    @property
    def is_surface_load_store(self):
        """Whether every level may back a SurfaceObject (CUDA_ARRAY3D_SURFACE_LDST)."""
        return self._surface_load_store

    cpdef close(self):
        """Lets go of this object's share; the arrays are destroyed
        (cuMipmappedArrayDestroy) once no level, texture object or surface
        object holds them either. Closing twice does nothing."""
        self._cpp.reset()

    def __repr__(self):
        return (f"MipmappedArray(shape={self._shape}, format={self._format.name}, "
                f"num_channels={self._num_channels}, num_levels={self._num_levels})")

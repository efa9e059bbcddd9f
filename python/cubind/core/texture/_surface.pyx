# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# SurfaceObject (cubind::SurfaceObject, cuSurfObjectCreate): typed loads and
# stores of one OpaqueArray made with is_surface_load_store, a share of which
# it holds in the core.

from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject
from cubind.core._device cimport _Device as Device
from cubind.core.texture._array cimport OpaqueArray

from cubind.core.texture._texture import ResourceDescriptor


def _create_surface_object(resource, device_id=None):
    """A new SurfaceObject on device device_id (the current device when
    None) over resource, a ResourceDescriptor of an OpaqueArray made with
    is_surface_load_store=True: backs Device.create_surface_object."""
    cdef shared_ptr[cpp.ArrayRef] array
    cdef cpp.SurfaceObject* made
    cdef int ordinal
    cdef SurfaceObject self
    cdef OpaqueArray source
    if not isinstance(resource, ResourceDescriptor):
        raise TypeError(f"resource must be a ResourceDescriptor, got {type(resource).__name__}")
    if resource.kind != "array":
        raise ValueError(
            f"SurfaceObject requires an array-backed ResourceDescriptor, got kind={resource.kind!r} "
            "(a surface reads one OpaqueArray; for a mipmapped array, bind one of its levels: "
            "ResourceDescriptor.from_opaque_array(mipmapped.get_level(i)))"
        )
    source = resource.source
    source._require_open()
    if not source.is_surface_load_store:
        raise ValueError(
            f"OpaqueArray must be created with is_surface_load_store=True to be bound as a SurfaceObject "
            f"({source!r} was not)"
        )
    array = source._cpp
    ordinal = Device().device_id if device_id is None else device_id
    with nogil:
        made = cpp.surface_object_new(ordinal, array)
    self = SurfaceObject.__new__(SurfaceObject)
    self._cpp.reset(made)
    self._resource = resource
    self._device_id = ordinal
    return self


cdef class SurfaceObject(_HandleObject):
    """A bindless surface: a kernel loads and stores the elements of one
    OpaqueArray by integer coordinates (surf2Dread, surf2Dwrite), with no
    filtering or addressing. A kernel takes its handle (a 64-bit
    cudaSurfaceObject_t). It keeps its array alive until it is closed. Made by
    Device.create_surface_object."""

    _maker = "create_surface_object"

    cdef bint _open(self):
        return self._cpp.get() != NULL

    cdef unsigned long long _raw_handle(self):
        return self._cpp.get().handle()

    @property
    def resource(self):
        """The ResourceDescriptor of the array; None once closed."""
        return self._resource

    cpdef close(self):
        """Destroys the surface (cuSurfObjectDestroy) and lets go of its
        array. Closing twice does nothing."""
        self._cpp.reset()
        self._resource = None

    def __repr__(self):
        return f"SurfaceObject(handle={self.handle:#x})"

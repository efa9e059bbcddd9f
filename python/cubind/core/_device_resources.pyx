# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Device resources: DeviceResources, SMResource, WorkqueueResource
# (cubind::SmResource; the workqueue resources need the CUDA 13.1 headers).

from libc.stdint cimport uintptr_t
from libcpp cimport bool as cbool
from libcpp.memory cimport shared_ptr
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp

from cubind.core._options import _sm_split_request, SMResourceOptions, WorkqueueResourceOptions


_WORKQUEUE_NEEDS_13_1 = (
    "WorkqueueResource needs the workqueue resources of CUDA 13.1 "
    "(CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG); cubind is built for CUDA 13.0"
)


cdef object _checked_options(options, cls, str where):
    # An instance of cls, or a dict of its fields, as cuda.core takes options.
    if isinstance(options, cls):
        return options
    if isinstance(options, dict):
        return cls(**options)
    raise TypeError(f"{where}: options must be a {cls.__name__} or a dict of its fields, not {type(options).__name__}")


cdef int _sm_split_options(options, cpp.SmSplitOptions* out) except -1:
    # The one conversion of SMResourceOptions to the core's SmSplitOptions,
    # through _sm_split_request's checks.
    cdef unsigned int count
    group_count, sm_count = _sm_split_request(options)
    out.groups = group_count
    if sm_count is not None:
        count = sm_count
        out.sm_count = count
    return 0


cdef class SMResource:
    """A set of streaming multiprocessors: all of a device's
    (Device.resources.sm), a context's, or one group of SMResource.split.
    A green context is made of such groups (Device.create_context)."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError("SMResource cannot be instantiated directly. Use dev.resources.sm or SMResource.split().")

    def __dealloc__(self):
        with nogil:
            del self._cpp

    @staticmethod
    cdef SMResource _take(cpp.SmResource* resource, bint usable):
        cdef SMResource self = SMResource.__new__(SMResource)
        self._cpp = resource
        self._usable = usable
        return self

    @property
    def handle(self):
        """The address of the CUdevResource struct."""
        return cpp.sm_resource_address(self._cpp[0])

    @property
    def sm_count(self):
        """The SMs in this resource."""
        return self._cpp.sm_count()

    @property
    def min_partition_size(self):
        """The fewest SMs a group of a split may have."""
        return self._cpp.min_partition_size()

    @property
    def coscheduled_alignment(self):
        """A group's SM count is a multiple of this: SMs guaranteed to be co-scheduled."""
        return self._cpp.coscheduled_alignment()

    @property
    def flags(self):
        """The SM resource's flags: always 0, as CUDA 13.0's CUdevSmResource has none."""
        return 0

    def split(self, options, *, dry_run=False):
        """Splits these SMs into groups of SMResourceOptions.count SMs each
        (cuDevSmResourceSplitByCount): returns (groups, remainder). The driver
        makes fewer groups than asked where the SMs' layout allows no more.
        With dry_run=True the results only describe the split and cannot make
        a context."""
        cdef cpp.SmSplitOptions split_options
        cdef vector[cpp.SmResource] parts
        cdef size_t i
        if options is None:
            raise TypeError("SMResource.split: options is None; pass SMResourceOptions(count=...)")
        options = _checked_options(options, SMResourceOptions, "SMResource.split")
        _sm_split_options(options, &split_options)
        try:
            with nogil:
                parts = cpp.sm_resource_split(self._cpp[0], split_options)
        except ValueError as error:
            raise ValueError(f"SMResource.split: SMResourceOptions(count={options.count!r}): {error}") from None
        usable = not dry_run
        made = [SMResource._take(cpp.sm_resource_copy(parts[i]), usable) for i in range(parts.size() - 1)]
        return made, SMResource._take(cpp.sm_resource_copy(parts[parts.size() - 1]), usable)

    def __repr__(self):
        return (f"<SMResource sm_count={self.sm_count} min_partition_size={self.min_partition_size} "
                f"coscheduled_alignment={self.coscheduled_alignment}{'' if self._usable else ' dry_run'}>")


cdef class WorkqueueResource:
    """A device's or a green context's workqueue configuration. It needs the
    workqueue resources of CUDA 13.1; cubind is built for CUDA 13.0, so
    DeviceResources.workqueue raises NotImplementedError and no instance
    exists (as in cuda.core over cuda.bindings 13.0)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("WorkqueueResource cannot be instantiated directly. Use dev.resources.workqueue.")

    @property
    def handle(self):
        """The address of the workqueue configuration's CUdevResource struct."""
        raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)

    @property
    def sharing_scope(self):
        """The sharing scope: "device_ctx" or "green_ctx_balanced"."""
        raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)

    @property
    def concurrency_limit(self):
        """The expected most stream-ordered workloads running at once."""
        raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)

    @property
    def device(self):
        """The Device this workqueue resource is on."""
        raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)

    def configure(self, options):
        """Sets the sharing scope and concurrency limit of WorkqueueResourceOptions."""
        _checked_options(options, WorkqueueResourceOptions, "WorkqueueResource.configure")
        raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)


cdef class DeviceResources:
    """The hardware resources of a device (Device.resources) or of a context
    (Context.resources, Stream.resources): a green context's are those it was
    made with, a primary context's the whole device's. Each query asks the
    driver afresh."""

    # The context asked about; 0 for the device itself.
    # Keeps a green context cubind made alive while its resources are asked for.

    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._green.reset()

    def __init__(self, *args, **kwargs):
        raise RuntimeError("DeviceResources cannot be instantiated directly. Use dev.resources.")

    @staticmethod
    cdef DeviceResources _of(int device_id, uintptr_t context, shared_ptr[cpp.GreenContext] green):
        cdef DeviceResources self = DeviceResources.__new__(DeviceResources)
        self._device_id = device_id
        self._context = context
        self._green = green
        return self

    @property
    def sm(self):
        """The SMResource of this device or context (cuDeviceGetDevResource,
        cuGreenCtxGetDevResource or cuCtxGetDevResource)."""
        cdef cpp.SmResource* resource
        cdef int ordinal = self._device_id
        cdef cpp.CUcontext context = <cpp.CUcontext>self._context
        with nogil:
            if self._green.get() != NULL:
                resource = cpp.sm_resource_of_green(self._green.get()[0])
            elif context != NULL:
                resource = cpp.sm_resource_of_context(context)
            else:
                resource = cpp.sm_resource_of_device(ordinal)
        return SMResource._take(resource, True)

    @property
    def workqueue(self):
        """The WorkqueueResource: needs CUDA 13.1, raises NotImplementedError."""
        raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)

    def __repr__(self):
        owner = f"device {self._device_id}" if self._context == 0 else f"context {self._context:#x}"
        return f"<DeviceResources of {owner}>"

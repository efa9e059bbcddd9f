# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Context: a device's primary context (cubind::Context, a view), or a green
# context made by Device.create_context (it holds the cubind::GreenContext).

cimport cython
from libc.stdint cimport uintptr_t
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._device cimport _Device as Device
from cubind.core._device_resources cimport DeviceResources, SMResource, WorkqueueResource
from cubind.core._errors cimport _raw_handle
from cubind.core._stream cimport Stream

import collections.abc
import weakref
from cubind.core._device_resources import _WORKQUEUE_NEEDS_13_1


# The green contexts alive in this process, by CUcontext address: a stream or
# a current context of one is given back as the Context that made it.
_green_contexts = weakref.WeakValueDictionary()


cdef Context _context_of(uintptr_t handle, int device_id):
    cdef Context green = _green_contexts.get(handle)
    if green is not None:
        return green
    return Context._wrap(handle, device_id)


cdef class Context:
    """A CUDA context: a device's primary context (Device.context), or a green
    context running on a part of the device's SMs (Device.create_context)."""

    # Set for a green context; streams made by create_stream share it, so the
    # green context lives until the last of them and this object are gone.

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Context objects cannot be instantiated directly. Please use Device or Stream APIs.")

    def __dealloc__(self):
        with nogil:
            self._green.reset()

    @staticmethod
    cdef Context _wrap(uintptr_t handle, int device_id):
        cdef Context self = Context.__new__(Context)
        self._handle = handle
        self._device_id = device_id
        return self

    @staticmethod
    cdef Context _create_green(int device_id, resources):
        # Device.create_context: resources checked here, then cuGreenCtxCreate.
        cdef vector[cpp.SmResource*] natives
        cdef cpp.GreenContext* green
        cdef cpp.CUcontext handle
        cdef Context self
        if isinstance(resources, (SMResource, WorkqueueResource)):
            raise TypeError(
                f"ContextOptions.resources is one {type(resources).__name__}; pass a sequence of them: [resource]"
            )
        if isinstance(resources, (str, bytes)) or not isinstance(resources, collections.abc.Sequence):
            raise TypeError(
                f"ContextOptions.resources must be a sequence of SMResource, not {type(resources).__name__}"
            )
        if len(resources) == 0:
            raise ValueError("ContextOptions.resources is empty; give the SMResource groups of a split")
        for i, resource in enumerate(resources):
            if isinstance(resource, WorkqueueResource):
                raise NotImplementedError(_WORKQUEUE_NEEDS_13_1)
            if not isinstance(resource, SMResource):
                raise TypeError(
                    f"ContextOptions.resources[{i}] is a {type(resource).__name__}; expected an SMResource"
                )
            if not (<SMResource>resource)._usable:
                raise ValueError(
                    f"ContextOptions.resources[{i}] is a dry-run SMResource (from SMResource.split(..., "
                    "dry_run=True)), which only "
                    "describes a split; split again without dry_run to make a context"
                )
            natives.push_back((<SMResource>resource)._cpp)
        try:
            with nogil:
                green = cpp.green_context_new(device_id, natives)
        except ValueError as error:
            raise ValueError(f"Device.create_context: {error}") from None
        self = Context.__new__(Context)
        self._green.reset(green)
        with nogil:
            handle = cpp.green_context_context(green[0])
        self._handle = <uintptr_t>handle
        self._device_id = device_id
        _green_contexts[self._handle] = self
        return self

    cdef int _require_open(self) except -1:
        if self._closed:
            raise RuntimeError("Context has been closed")
        return 0

    @property
    def handle(self):
        """The CUcontext (cubind.bindings.driver.CUcontext); None once closed.
        For a green context, the context it converts to (cuCtxFromGreenCtx)."""
        if self._closed:
            return None
        return _raw_handle("driver", "CUcontext", self._handle)

    @property
    def is_closed(self):
        return self._closed

    @property
    def is_green(self):
        """True for a context made from device resources (Device.create_context)."""
        return self._green.get() != NULL

    @property
    def resources(self):
        """The resources this context has: a green context's SMs, or the whole
        device's for a primary context. RuntimeError once closed."""
        self._require_open()
        return DeviceResources._of(self._device_id, self._handle, self._green)

    def create_stream(self, options=None):
        """A new stream of this green context (cuGreenCtxStreamCreate). On a
        primary context it raises RuntimeError: use Device.create_stream."""
        self._require_open()
        if self._green.get() == NULL:
            raise RuntimeError(
                "Context.create_stream() is only supported on green contexts. "
                "Use Device.create_stream() for primary contexts."
            )
        return Stream._init_green(self, options)

    def close(self):
        """Lets go of the context: a green context is destroyed once the
        streams made from it are too (a primary context lives as long as the
        process). RuntimeError while it is current on this thread: make another
        context current first."""
        cdef cpp.CUcontext current
        if self._closed:
            return
        with nogil:
            current = _current_context()
        if <uintptr_t>current == self._handle:
            raise RuntimeError(
                "Cannot close a CUDA context while it is current. "
                "Restore a previous context before closing this context."
            )
        if self._green.get() != NULL:
            _green_contexts.pop(self._handle, None)
            with nogil:
                self._green.reset()
        self._closed = True

    @property
    def device(self):
        return Device(self._device_id)

    def __eq__(self, other):
        return isinstance(other, Context) and (<Context>other)._handle == self._handle

    def __hash__(self):
        return hash(("Context", self._handle))

    def __repr__(self):
        kind = " green" if self._green.get() != NULL else ""
        return f"<Context handle={self._handle:#x} device={self._device_id}{kind}>"


# cubind::Context has no default constructor: cpp_locals lets Cython hold
# the temporaries.
@cython.cpp_locals(True)
cdef int _make_current(cpp.CUcontext context) except -1 nogil:
    # cuCtxSetCurrent; NULL leaves none current.
    if context == NULL:
        cpp.Context.clear_current()
    else:
        cpp.Context.from_native_handle(context).set_current()
    return 0


@cython.cpp_locals(True)
cdef int _context_device(cpp.CUcontext context) except -1 nogil:
    return cpp.Context.from_native_handle(context).device().ordinal()

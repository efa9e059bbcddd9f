# cython: language_level=3
"""The members the texture module's four classes share: the handle, whether
the object is closed, its device, use as a context manager, and the refusal
of direct construction. Each class says how it holds its driver object
(_open, _raw_handle) and what close() lets go of."""
from cubind.core._device cimport _Device as Device


cdef class _HandleObject:
    # Which Device method makes each class, for the refusal below.
    _maker = None

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            f"{type(self).__name__} cannot be instantiated directly. Use Device.{type(self)._maker}()."
        )

    cdef bint _open(self):
        return False

    cdef unsigned long long _raw_handle(self):
        return 0

    cpdef close(self):
        pass

    @property
    def handle(self):
        """The driver's handle, as an int (CUarray, CUmipmappedArray, or the
        CUtexObject or CUsurfObject a kernel takes); 0 once closed."""
        if not self._open():
            return 0
        return self._raw_handle()

    @property
    def is_closed(self):
        """Whether close() was called."""
        return not self._open()

    @property
    def device(self):
        """The Device the object was made on."""
        return Device(self._device_id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# OpenGL interop (cubind::GraphicsResource): a GL buffer object, texture or
# renderbuffer registered for CUDA; mapping a buffer object gives a Buffer
# whose close unmaps it, as in cuda.core.

from libc.stdint cimport uintptr_t

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport Buffer
from cubind.core._stream cimport _stream_handle

__all__ = ["GraphicsResource"]

# cuda.core's names of CU_GRAPHICS_REGISTER_FLAGS_*.
_REGISTER_FLAGS = {
    "none": 0x00,
    "read_only": 0x01,
    "write_discard": 0x02,
    "surface_load_store": 0x04,
    "texture_gather": 0x08,
}
# CU_GRAPHICS_MAP_RESOURCE_FLAGS_*, for set_map_flags.
_MAP_FLAGS = {
    "none": cpp.GraphicsMapFlags.none,
    "read_only": cpp.GraphicsMapFlags.read_only,
    "write_discard": cpp.GraphicsMapFlags.write_discard,
}


def _parse_register_flags(flags):
    """The CU_GRAPHICS_REGISTER_FLAGS_* value of flags: None, one name or a
    sequence of names of _REGISTER_FLAGS."""
    if flags is None:
        return 0
    if isinstance(flags, str):
        flags = (flags,)
    elif not isinstance(flags, (tuple, list)) and not hasattr(flags, "__iter__"):
        raise TypeError(f"GraphicsResource: flags must be a str or a sequence of str, not {type(flags).__name__}")
    value = 0
    for flag in flags:
        bits = _REGISTER_FLAGS.get(flag) if isinstance(flag, str) else None
        if bits is None:
            raise ValueError(f"Unknown register flag {flag!r}. Valid flags: {', '.join(sorted(_REGISTER_FLAGS))}")
        value |= bits
    return value


cdef unsigned int _gl_name(object value, str method, str param) except? 0:
    # A GLuint or GLenum: an int of 0 to 2**32 - 1.
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"GraphicsResource.{method}: {param} must be an int (a GL name), not {type(value).__name__}")
    value = value.__index__()
    if value < 0 or value > 0xFFFFFFFF:
        raise OverflowError(f"GraphicsResource.{method}: {param} is {value}; a GL name is 0 to 2**32 - 1")
    return value


cdef class GraphicsResource:
    """GraphicsResource()
--

An OpenGL buffer object, texture or renderbuffer registered for CUDA
    (cuGraphicsGLRegisterBuffer, cuGraphicsGLRegisterImage), made by
    from_gl_buffer or from_gl_image with a CUDA context and a GL context
    current. map(stream=...) maps a buffer object and returns a Buffer over its
    memory; closing that Buffer (or unmap()) hands it back to GL. close()
    unregisters it; so does leaving a `with` block, or garbage collection.

    Beyond cuda.core: map_array for textures and renderbuffers (a CUarray
    handle), and set_map_flags."""

    def __init__(self):
        raise RuntimeError(
            "GraphicsResource objects cannot be instantiated directly. "
            "Use GraphicsResource.from_gl_buffer() or GraphicsResource.from_gl_image()."
        )

    def __dealloc__(self):
        # The mapped Buffer, if still open, holds this object (its owner), so
        # here it is closed or gone: close() unregisters.
        if self._cpp:
            with nogil:
                self._cpp.reset()

    @classmethod
    def from_gl_buffer(cls, gl_buffer, *, flags=None, stream=None):
        """Registers GL buffer object gl_buffer (a GLuint) for CUDA
        (cuGraphicsGLRegisterBuffer). flags: None, or one or more of "none",
        "read_only", "write_discard", "surface_load_store", "texture_gather".
        With stream, `with GraphicsResource.from_gl_buffer(vbo, stream=s) as
        buf:` maps it on entry and yields the Buffer; without, the `with`
        block yields the resource. Either way, leaving it closes the resource."""
        cdef unsigned int name = _gl_name(gl_buffer, "from_gl_buffer", "gl_buffer")
        cdef unsigned int bits = _parse_register_flags(flags)
        cdef GraphicsResource self = GraphicsResource.__new__(GraphicsResource)
        if stream is not None:
            _stream_handle(stream)
        with nogil:
            self._cpp.reset(cpp.graphics_register_gl_buffer(name, bits))
        self._context_manager_stream = stream
        return self

    @classmethod
    def from_gl_image(cls, image, target, *, flags=None):
        """Registers GL texture or renderbuffer image (a GLuint) of target (a
        GLenum: GL_TEXTURE_2D, GL_RENDERBUFFER, ...) for CUDA
        (cuGraphicsGLRegisterImage). flags as for from_gl_buffer;
        "surface_load_store" to write it through a surface."""
        cdef unsigned int name = _gl_name(image, "from_gl_image", "image")
        cdef unsigned int gl_target = _gl_name(target, "from_gl_image", "target")
        cdef unsigned int bits = _parse_register_flags(flags)
        cdef GraphicsResource self = GraphicsResource.__new__(GraphicsResource)
        with nogil:
            self._cpp.reset(cpp.graphics_register_gl_image(name, gl_target, bits))
        return self

    cdef int _require_open(self, str method) except -1:
        if self._cpp.get() == NULL or self._cpp.get().handle() == NULL:
            raise RuntimeError(f"GraphicsResource has been closed (GraphicsResource.{method})")
        return 0

    def _get_mapped_buffer(self):
        # The Buffer map() returned, while it is open: closing it unmaps.
        if self._mapped_buffer is not None and (<Buffer>self._mapped_buffer).is_closed:
            self._mapped_buffer = None
        return self._mapped_buffer

    def map(self, *, stream):
        """Maps the buffer object for CUDA, ordered on stream
        (cuGraphicsMapResources), and returns a Buffer over its memory
        (cuGraphicsResourceGetMappedPointer). Closing the Buffer, leaving its
        `with` block or unmap() hands the memory back to GL. Textures and
        renderbuffers have no pointer: map them with map_array."""
        cdef cpp.CUstream handle
        cdef Buffer buffer
        self._require_open("map")
        if self._get_mapped_buffer() is not None or self._cpp.get().is_mapped():
            raise RuntimeError(
                "GraphicsResource is already mapped: unmap it (or close the Buffer map() returned) first")
        handle = _stream_handle(stream)
        buffer = Buffer.__new__(Buffer)
        with nogil:
            cpp.graphics_map_buffer(buffer._cpp, self._cpp.get()[0], handle)
        buffer._ptr = <uintptr_t>buffer._cpp.handle()
        buffer._size = buffer._cpp.size()
        buffer._stream = stream
        # The resource outlives its mapped memory, as the driver requires.
        buffer._owner = self
        self._mapped_buffer = buffer
        self._map_stream = stream
        return buffer

    def map_array(self, *, stream, array_index=0, mip_level=0):
        """Maps a texture or renderbuffer for CUDA, ordered on stream
        (cuGraphicsMapResources), and returns the CUarray handle (an int) of
        one layer and mip level (cuGraphicsSubResourceGetMappedArray). The
        array is GL's, valid until unmap(). If already mapped by map_array,
        returns another layer or level of the same mapping. Not in cuda.core."""
        cdef cpp.CUstream handle
        cdef void* array = NULL
        cdef unsigned int index = _gl_name(array_index, "map_array", "array_index")
        cdef unsigned int level = _gl_name(mip_level, "map_array", "mip_level")
        cdef bint mapped_here = False
        self._require_open("map_array")
        if self._get_mapped_buffer() is not None:
            raise RuntimeError("GraphicsResource is already mapped as a Buffer (map()); unmap it first")
        if not self._cpp.get().is_mapped():
            handle = _stream_handle(stream)
            with nogil:
                self._cpp.get().map(cpp.StreamRef(handle))
            self._map_stream = stream
            mapped_here = True
        try:
            with nogil:
                array = self._cpp.get().mapped_array(index, level)
        except BaseException:
            if mapped_here:
                self.unmap()
            raise
        return <uintptr_t>array

    def set_map_flags(self, flags):
        """How CUDA will use the next mappings (cuGraphicsResourceSetMapFlags):
        "none", "read_only" or "write_discard". Only while unmapped. Not in cuda.core."""
        cdef cpp.GraphicsMapFlags bits
        self._require_open("set_map_flags")
        value = _MAP_FLAGS.get(flags) if isinstance(flags, str) else None
        if value is None:
            raise ValueError(f"GraphicsResource.set_map_flags: flags is {flags!r}; it must be one of "
                             f"{', '.join(repr(k) for k in _MAP_FLAGS)}")
        if self.is_mapped:
            raise RuntimeError("GraphicsResource is mapped: set_map_flags applies to the next mapping; unmap it first")
        bits = value
        with nogil:
            self._cpp.get().set_map_flags(bits)

    def unmap(self, *, stream=None):
        """Hands the resource back to GL (cuGraphicsUnmapResources), ordered on
        stream, or on the stream it was mapped on. The Buffer map() returned
        must no longer be used."""
        cdef cpp.CUstream handle
        self._require_open("unmap")
        buffer = self._get_mapped_buffer()
        if buffer is not None:
            buffer.close(stream=stream)
            self._mapped_buffer = None
        elif not self._cpp.get().is_mapped():
            raise RuntimeError("GraphicsResource is not mapped (GraphicsResource.unmap)")
        elif stream is not None:
            handle = _stream_handle(stream)
            with nogil:
                self._cpp.get().unmap(cpp.StreamRef(handle))
        else:
            with nogil:
                self._cpp.get().unmap()
        self._map_stream = None

    def __enter__(self):
        if self._context_manager_stream is None:
            return self
        self._entered_buffer = self.map(stream=self._context_manager_stream)
        return self._entered_buffer

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
        return False

    cpdef close(self, stream=None):
        """Unmaps the resource if mapped (on stream, or on the stream it was
        mapped on), then unregisters it (cuGraphicsUnregisterResource).
        Closing a closed resource does nothing."""
        if self._cpp.get() == NULL or self._cpp.get().handle() == NULL:
            return
        if self._get_mapped_buffer() is not None or self._cpp.get().is_mapped():
            self.unmap(stream=stream)
        with nogil:
            self._cpp.get().close()
        self._cpp.reset()
        self._context_manager_stream = None
        self._entered_buffer = None
        self._map_stream = None

    @property
    def is_mapped(self):
        """Whether the resource is mapped for CUDA."""
        return self._cpp.get() != NULL and (self._get_mapped_buffer() is not None or self._cpp.get().is_mapped())

    @property
    def handle(self):
        """The CUgraphicsResource, as an int (0 once closed)."""
        return <uintptr_t>self._cpp.get().handle() if self._cpp.get() != NULL else 0

    @property
    def is_closed(self):
        """Whether close() has unregistered the resource."""
        return self._cpp.get() == NULL or self._cpp.get().handle() == NULL

    @property
    def resource_handle(self):
        """The same as handle."""
        return self.handle

    def __repr__(self):
        mapped = " mapped" if self.is_mapped else ""
        closed = " closed" if self.is_closed else ""
        return f"<GraphicsResource handle={self.handle:#x}{mapped}{closed}>"

# pyright: reportAttributeAccessIssue=false
# (the GL entry points are set on HeadlessGL by name, from eglGetProcAddress)
"""A headless OpenGL context through EGL, with ctypes alone: no window, no X
server. Shared by the GL interop example and its tests.

    gl = headless_gl(cuda_ordinal=0)   # raises GLUnavailable(reason) where it cannot
    buf = gl.gen_buffer()
    ...
    gl.close()

The display is the EGL device of the CUDA GPU (EGL_EXT_platform_device,
matched by EGL_CUDA_DEVICE_NV where the driver says it), else the first EGL
device that initializes, else EGL_DEFAULT_DISPLAY. The context is a desktop
OpenGL one (EGL_OPENGL_API), made current without a surface where the display
allows (EGL_KHR_surfaceless_context), else with a 1x1 pbuffer. GL functions
come from eglGetProcAddress.
"""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_int, c_uint, c_void_p

EGL_NONE = 0x3038
EGL_EXTENSIONS = 0x3055
EGL_PLATFORM_DEVICE_EXT = 0x313F
EGL_CUDA_DEVICE_NV = 0x323A
EGL_OPENGL_API = 0x30A2
EGL_SURFACE_TYPE = 0x3033
EGL_PBUFFER_BIT = 0x0001
EGL_RENDERABLE_TYPE = 0x3040
EGL_OPENGL_BIT = 0x0008
EGL_RED_SIZE, EGL_GREEN_SIZE, EGL_BLUE_SIZE, EGL_ALPHA_SIZE = 0x3024, 0x3023, 0x3022, 0x3021
EGL_WIDTH, EGL_HEIGHT = 0x3057, 0x3056
EGL_SUCCESS = 0x3000

GL_ARRAY_BUFFER = 0x8892
GL_STATIC_DRAW = 0x88E4
GL_DYNAMIC_DRAW = 0x88E8
GL_TEXTURE_2D = 0x0DE1
GL_RENDERBUFFER = 0x8D41
GL_RGBA8 = 0x8058
GL_RGBA = 0x1908
GL_UNSIGNED_BYTE = 0x1401
GL_TEXTURE_MIN_FILTER = 0x2801
GL_TEXTURE_MAG_FILTER = 0x2800
GL_NEAREST = 0x2600
GL_PACK_ALIGNMENT = 0x0D05
GL_UNPACK_ALIGNMENT = 0x0CF5
GL_VENDOR, GL_RENDERER, GL_VERSION = 0x1F00, 0x1F01, 0x1F02
GL_NO_ERROR = 0


class GLUnavailable(RuntimeError):
    """No headless GL context can be made here; the message says why."""


# The GL functions the interop example and tests call: name -> (restype, argtypes).
_GL_FUNCTIONS = {
    "glGetError": (c_uint, []),
    "glGetString": (c_char_p, [c_uint]),
    "glFinish": (None, []),
    "glPixelStorei": (None, [c_uint, c_int]),
    "glGenBuffers": (None, [c_int, POINTER(c_uint)]),
    "glDeleteBuffers": (None, [c_int, POINTER(c_uint)]),
    "glBindBuffer": (None, [c_uint, c_uint]),
    "glBufferData": (None, [c_uint, ctypes.c_ssize_t, c_void_p, c_uint]),
    "glGetBufferSubData": (None, [c_uint, ctypes.c_ssize_t, ctypes.c_ssize_t, c_void_p]),
    "glGenTextures": (None, [c_int, POINTER(c_uint)]),
    "glDeleteTextures": (None, [c_int, POINTER(c_uint)]),
    "glBindTexture": (None, [c_uint, c_uint]),
    "glTexParameteri": (None, [c_uint, c_uint, c_int]),
    "glTexImage2D": (None, [c_uint, c_int, c_int, c_int, c_int, c_int, c_uint, c_uint, c_void_p]),
    "glGetTexImage": (None, [c_uint, c_int, c_uint, c_uint, c_void_p]),
}


class HeadlessGL:
    """A current headless GL context; GL functions are its attributes
    (gl.glBufferData(...)). close() releases it."""

    def __init__(self, egl, display, context, surface, description):
        self._egl = egl
        self._display = display
        self._context = context
        self._surface = surface
        self.description = description
        get = egl.eglGetProcAddress
        missing = []
        for name, (restype, argtypes) in _GL_FUNCTIONS.items():
            address = get(name.encode())
            if not address:
                missing.append(name)
                continue
            setattr(self, name, ctypes.CFUNCTYPE(restype, *argtypes)(address))
        if missing:
            self.close()
            raise GLUnavailable(f"eglGetProcAddress found no {', '.join(missing)}")

    @property
    def renderer(self):
        """GL_VENDOR, GL_RENDERER and GL_VERSION, in one line."""
        return " / ".join((self.glGetString(n) or b"?").decode() for n in (GL_VENDOR, GL_RENDERER, GL_VERSION))

    def check(self, what):
        """Raises RuntimeError naming `what` if GL recorded an error."""
        error = self.glGetError()
        if error != GL_NO_ERROR:
            raise RuntimeError(f"{what}: GL error {error:#x}")

    def gen_buffer(self, data=None, size=None, usage=GL_DYNAMIC_DRAW):
        """A new buffer object (glGenBuffers, glBufferData) holding `data`
        (bytes-like), or `size` bytes of undefined contents."""
        name = c_uint(0)
        self.glGenBuffers(1, byref(name))
        self.glBindBuffer(GL_ARRAY_BUFFER, name.value)
        if data is not None:
            source = (ctypes.c_char * len(data)).from_buffer_copy(bytes(data))
            self.glBufferData(GL_ARRAY_BUFFER, len(data), ctypes.addressof(source), usage)
        else:
            self.glBufferData(GL_ARRAY_BUFFER, size, None, usage)
        self.glBindBuffer(GL_ARRAY_BUFFER, 0)
        self.check("glBufferData")
        return name.value

    def read_buffer(self, name, size):
        """The first `size` bytes of buffer object `name` (glGetBufferSubData)."""
        out = (ctypes.c_char * size)()
        self.glBindBuffer(GL_ARRAY_BUFFER, name)
        self.glGetBufferSubData(GL_ARRAY_BUFFER, 0, size, ctypes.addressof(out))
        self.glBindBuffer(GL_ARRAY_BUFFER, 0)
        self.check("glGetBufferSubData")
        return bytes(out)

    def delete_buffer(self, name):
        self.glDeleteBuffers(1, byref(c_uint(name)))

    def gen_texture_rgba8(self, width, height, pixels):
        """A new GL_TEXTURE_2D of GL_RGBA8 texels holding `pixels` (width *
        height * 4 bytes, rows packed)."""
        name = c_uint(0)
        self.glGenTextures(1, byref(name))
        self.glBindTexture(GL_TEXTURE_2D, name.value)
        self.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST)
        self.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST)
        self.glPixelStorei(GL_UNPACK_ALIGNMENT, 1)
        source = (ctypes.c_char * len(pixels)).from_buffer_copy(bytes(pixels))
        self.glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                          ctypes.addressof(source))
        self.glBindTexture(GL_TEXTURE_2D, 0)
        self.check("glTexImage2D")
        return name.value

    def read_texture_rgba8(self, name, width, height):
        """Texture `name`'s level 0 as width * height * 4 bytes (glGetTexImage)."""
        out = (ctypes.c_char * (width * height * 4))()
        self.glBindTexture(GL_TEXTURE_2D, name)
        self.glPixelStorei(GL_PACK_ALIGNMENT, 1)
        self.glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, ctypes.addressof(out))
        self.glBindTexture(GL_TEXTURE_2D, 0)
        self.check("glGetTexImage")
        return bytes(out)

    def delete_texture(self, name):
        self.glDeleteTextures(1, byref(c_uint(name)))

    def close(self):
        egl, self._egl = self._egl, None
        if egl is None:
            return
        egl.eglMakeCurrent(self._display, None, None, None)
        if self._surface:
            egl.eglDestroySurface(self._display, self._surface)
        egl.eglDestroyContext(self._display, self._context)
        egl.eglTerminate(self._display)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _load_egl():
    try:
        egl = ctypes.CDLL("libEGL.so.1")
    except OSError as error:
        raise GLUnavailable(f"libEGL.so.1 cannot be loaded ({error}); install libegl1 (glvnd) and the driver's EGL")
    egl.eglGetProcAddress.restype = c_void_p
    egl.eglGetProcAddress.argtypes = [c_char_p]
    egl.eglGetError.restype = c_int
    egl.eglQueryString.restype = c_char_p
    egl.eglQueryString.argtypes = [c_void_p, c_int]
    egl.eglGetDisplay.restype = c_void_p
    egl.eglGetDisplay.argtypes = [c_void_p]
    egl.eglInitialize.argtypes = [c_void_p, POINTER(c_int), POINTER(c_int)]
    egl.eglTerminate.argtypes = [c_void_p]
    egl.eglBindAPI.argtypes = [c_uint]
    egl.eglChooseConfig.argtypes = [c_void_p, POINTER(c_int), POINTER(c_void_p), c_int, POINTER(c_int)]
    egl.eglCreateContext.restype = c_void_p
    egl.eglCreateContext.argtypes = [c_void_p, c_void_p, c_void_p, POINTER(c_int)]
    egl.eglDestroyContext.argtypes = [c_void_p, c_void_p]
    egl.eglCreatePbufferSurface.restype = c_void_p
    egl.eglCreatePbufferSurface.argtypes = [c_void_p, c_void_p, POINTER(c_int)]
    egl.eglDestroySurface.argtypes = [c_void_p, c_void_p]
    egl.eglMakeCurrent.argtypes = [c_void_p, c_void_p, c_void_p, c_void_p]
    return egl


def _attribs(*values):
    return (c_int * (len(values) + 1))(*values, EGL_NONE)


def _device_displays(egl, cuda_ordinal, tried):
    """(display, description) of each EGL device, the CUDA GPU's first."""
    client = (egl.eglQueryString(None, EGL_EXTENSIONS) or b"").decode()
    if "EGL_EXT_platform_device" not in client or "EGL_EXT_device_enumeration" not in client:
        tried.append("no EGL_EXT_platform_device / EGL_EXT_device_enumeration")
        return []
    query_devices = ctypes.CFUNCTYPE(c_uint, c_int, POINTER(c_void_p), POINTER(c_int))(
        egl.eglGetProcAddress(b"eglQueryDevicesEXT"))
    platform_display = ctypes.CFUNCTYPE(c_void_p, c_uint, c_void_p, POINTER(c_int))(
        egl.eglGetProcAddress(b"eglGetPlatformDisplayEXT"))
    attribute_address = egl.eglGetProcAddress(b"eglQueryDeviceAttribEXT")
    query_attribute = (ctypes.CFUNCTYPE(c_uint, c_void_p, c_int, POINTER(ctypes.c_ssize_t))(attribute_address)
                       if attribute_address else None)
    devices = (c_void_p * 16)()
    count = c_int(0)
    if not query_devices(16, devices, byref(count)) or count.value == 0:
        tried.append("eglQueryDevicesEXT found no device")
        return []
    ranked = []
    for i in range(count.value):
        ordinal = ctypes.c_ssize_t(-1)
        is_cuda = query_attribute is not None and query_attribute(devices[i], EGL_CUDA_DEVICE_NV, byref(ordinal))
        rank = 0 if is_cuda and ordinal.value == cuda_ordinal else (1 if is_cuda else 2)
        ranked.append((rank, i, devices[i]))
    out = []
    for rank, i, device in sorted(ranked):
        display = platform_display(EGL_PLATFORM_DEVICE_EXT, device, None)
        if display:
            what = {0: f"CUDA device {cuda_ordinal}", 1: "another CUDA device", 2: "no CUDA device"}[rank]
            out.append((display, f"EGL device {i} of {count.value} ({what})"))
    return out


def headless_gl(cuda_ordinal: int = 0) -> "HeadlessGL":
    """A current headless GL context, on the EGL device of CUDA device
    cuda_ordinal where EGL can say which that is.
    @raises GLUnavailable with the reason where none can be made."""
    egl = _load_egl()
    tried = []
    candidates = _device_displays(egl, cuda_ordinal, tried)
    default = egl.eglGetDisplay(None)
    if default:
        candidates.append((default, "EGL_DEFAULT_DISPLAY"))
    major, minor = c_int(0), c_int(0)
    for display, description in candidates:
        if not egl.eglInitialize(display, byref(major), byref(minor)):
            tried.append(f"{description}: eglInitialize failed (EGL error {egl.eglGetError():#x})")
            continue
        made = _context_on(egl, display, f"{description}, EGL {major.value}.{minor.value}", tried)
        if made is not None:
            return made
        egl.eglTerminate(display)
    raise GLUnavailable("no headless OpenGL context: " + ("; ".join(tried) or "no EGL display"))


def _context_on(egl, display, description, tried):
    if not egl.eglBindAPI(EGL_OPENGL_API):
        tried.append(f"{description}: eglBindAPI(EGL_OPENGL_API) failed (EGL error {egl.eglGetError():#x})")
        return None
    config = c_void_p()
    found = c_int(0)
    wanted = _attribs(EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                      EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8)
    if not egl.eglChooseConfig(display, wanted, byref(config), 1, byref(found)) or found.value == 0:
        tried.append(f"{description}: no config for a desktop GL pbuffer (EGL error {egl.eglGetError():#x})")
        return None
    context = egl.eglCreateContext(display, config, None, _attribs())
    if not context:
        tried.append(f"{description}: eglCreateContext failed (EGL error {egl.eglGetError():#x})")
        return None
    extensions = (egl.eglQueryString(display, EGL_EXTENSIONS) or b"").decode()
    surface = None
    if "EGL_KHR_surfaceless_context" not in extensions:
        surface = egl.eglCreatePbufferSurface(display, config, _attribs(EGL_WIDTH, 1, EGL_HEIGHT, 1))
        if not surface:
            tried.append(f"{description}: eglCreatePbufferSurface failed (EGL error {egl.eglGetError():#x})")
            egl.eglDestroyContext(display, context)
            return None
    if not egl.eglMakeCurrent(display, surface, surface, context):
        tried.append(f"{description}: eglMakeCurrent failed (EGL error {egl.eglGetError():#x})")
        if surface:
            egl.eglDestroySurface(display, surface)
        egl.eglDestroyContext(display, context)
        return None
    return HeadlessGL(egl, display, context, surface, description + (", surfaceless" if surface is None else ""))

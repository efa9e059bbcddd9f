# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Linker (cubind::Linker over nvJitLink).

from libc.stdint cimport uintptr_t
from libcpp.string cimport string

cimport cubind.core._cpp as cpp
from cubind.core._errors cimport _raw_handle
from cubind.core._module cimport ObjectCode
from cubind.core._program cimport _code_bytes

from cubind.core._errors import NvJitLinkError
from cubind.core._options import LinkerOptions


cdef class Linker:
    """Linker(*object_codes, options=None)
--

Links ObjectCode (PTX, CUBIN, LTO-IR, fatbin, objects, libraries) into
    one CUBIN, or PTX with options.ptx (nvJitLink). options: a LinkerOptions
    (or None for the defaults, which need a current device for the arch)."""


    def __init__(self, *object_codes, options=None):
        cdef cpp.LinkerOptions cpp_options = cpp.LinkerOptions()
        cdef ObjectCode code
        if not object_codes:
            raise ValueError("At least one ObjectCode object must be provided")
        for i, c in enumerate(object_codes):
            if not isinstance(c, ObjectCode):
                raise TypeError(f"Expected type ObjectCode, but got {type(c).__name__}: Linker's object_codes[{i}] "
                                f"is {c!r:.60}")
        if options is None:
            options = LinkerOptions()
        elif isinstance(options, dict):
            options = LinkerOptions(**options)
        elif not isinstance(options, LinkerOptions):
            raise TypeError(
                "The Linker options must be provided as an object of type LinkerOptions or as a dict with valid "
                f"Linker options. The provided object is {options!r:.60} (a {type(options).__name__})."
            )
        self._options = options
        rendered = options._nvjitlink_options()
        cpp_options.arch = options.arch.encode()
        cpp_options.ptx = bool(options.ptx)
        for option in rendered[1:]:
            if option != "-ptx":
                cpp_options.extra.push_back(option.encode())
        with nogil:
            self._cpp = new cpp.Linker(cpp_options)
        for c in object_codes:
            code = <ObjectCode>c
            if not code._cpp:
                raise RuntimeError("Linker: an ObjectCode has no code")
            with nogil:
                self._cpp.add(code._cpp.get()[0])

    def __dealloc__(self):
        with nogil:
            del self._cpp

    cdef int _require_open(self) except -1:
        if self._cpp == NULL:
            raise RuntimeError("Linker has been closed")
        return 0

    @property
    def is_closed(self):
        return self._cpp == NULL

    def link(self, target_type):
        """Links the inputs into target_type: "cubin", or "ptx" (which needs
        LinkerOptions(ptx=True) and LTO-IR inputs). A failed link raises
        NvJitLinkError with nvJitLink's error log. A Linker links once."""
        cdef cpp.LinkResult result
        self._require_open()
        target_type = str(getattr(target_type, "value", target_type)).lower()
        if target_type not in ("cubin", "ptx"):
            raise ValueError(f"Unsupported target type: {target_type}")
        if (target_type == "ptx") != bool(self._options.ptx):
            raise ValueError(
                f"Linker.link: target_type {target_type!r} needs LinkerOptions(ptx={target_type == 'ptx'}); "
                f"this Linker has ptx={self._options.ptx!r}"
            )
        if self._linked:
            raise RuntimeError("Linker.link: this Linker has linked already; create a new one to link again")
        self._linked = True
        with nogil:
            result = self._cpp.link()
        if not result.ok:
            error_log = result.error_log.decode("utf-8", "replace")
            error = NvJitLinkError(f"nvJitLink could not link: nvJitLink error log: {error_log}")
            error.api_function = "nvJitLinkComplete"
            raise error
        code = ObjectCode._wrap(cpp.object_code_take(result.code), None, target_type, self._options.name, None)
        code._code = _code_bytes(code._cpp.get())
        return code

    def get_error_log(self):
        """nvJitLink's error log so far."""
        cdef string log
        self._require_open()
        with nogil:
            log = self._cpp.error_log()
        return log.decode("utf-8", "replace")

    def get_info_log(self):
        """nvJitLink's info log so far."""
        cdef string log
        self._require_open()
        with nogil:
            log = self._cpp.info_log()
        return log.decode("utf-8", "replace")

    def close(self):
        """Destroys the linker (nvJitLinkDestroy); later calls raise."""
        del self._cpp
        self._cpp = NULL

    @property
    def handle(self):
        """The nvJitLinkHandle (cubind.bindings.nvjitlink.nvJitLinkHandle)."""
        self._require_open()
        return _raw_handle("nvjitlink", "nvJitLinkHandle", <uintptr_t>self._cpp.handle())

    @classmethod
    def which_backend(cls):
        """CompilerBackendType.NVJITLINK (equal to "nvJitLink"): cubind.core
        links with nvJitLink only."""
        from cubind.core.typing import CompilerBackendType

        return CompilerBackendType("nvJitLink")

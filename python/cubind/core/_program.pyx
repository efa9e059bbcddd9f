# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# Program (cubind::Program over NVRTC; PTX sources through the Linker).

from libc.stdint cimport uintptr_t
from libcpp.string cimport string
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._errors cimport _raw_handle
from cubind.core._linker cimport Linker
from cubind.core._module cimport ObjectCode

from cubind.core._errors import NVRTCError, _text
from cubind.core._module import _CODE_KINDS
from cubind.core._options import LinkerOptions, ProgramOptions


_PROGRAM_TARGETS = ("ptx", "cubin", "ltoir")


def _short(value):
    # A value as an error message shows it: its repr, cut to a line.
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _name_expressions(name_expressions):
    # Program.compile's name_expressions: a sequence of str (or bytes), each
    # checked, as a list of str.
    if isinstance(name_expressions, (str, bytes)):
        raise TypeError(
            "Program.compile: name_expressions must be a sequence of str, not one string "
            f"({_short(name_expressions)}); pass [name]"
        )
    try:
        items = list(name_expressions)
    except TypeError:
        raise TypeError(
            f"Program.compile: name_expressions must be a sequence of str, not {type(name_expressions).__name__} "
            f"({_short(name_expressions)})"
        ) from None
    return [_text(n, f"Program.compile: name_expressions[{i}]") for i, n in enumerate(items)]


cdef class Program:
    """Program(code, code_type, options=None)
--

Source code compiled to ObjectCode: CUDA C++ by NVRTC (code_type "c++"),
    or PTX by nvJitLink (code_type "ptx"). options: a ProgramOptions (or None
    for the defaults, which need a current device for the arch)."""


    def __init__(self, code, code_type, options=None):
        cdef string source
        cdef string name
        code_type = str(getattr(code_type, "value", code_type)).lower()
        if code_type not in ("c++", "ptx", "nvvm"):
            raise RuntimeError(f"Unsupported code_type={code_type!r} (supported: 'c++', 'ptx', 'nvvm')")
        if code_type == "nvvm":
            raise NotImplementedError("Program: cubind.core has no NVVM backend (code_type 'nvvm'); use 'c++' or 'ptx'")
        if not isinstance(code, str):
            raise TypeError(
                f"Expected type str, but got {type(code).__name__}: Program's code takes the source as text, "
                f"not {_short(code)}"
            )
        if options is None:
            options = ProgramOptions()
        elif isinstance(options, dict):
            options = ProgramOptions(**options)
        elif not isinstance(options, ProgramOptions):
            raise TypeError(
                "The Program options must be provided as an object of type ProgramOptions or as a dict with valid "
                f"Program options. The provided object is {_short(options)} (a {type(options).__name__})."
            )
        self._options = options
        self._code_type = code_type
        self._source = code
        if code_type == "ptx":
            self._ptx = code
            return
        source = code.encode()
        name = options.name.encode()
        with nogil:
            self._cpp = new cpp.Program(source, name)

    def __dealloc__(self):
        with nogil:
            del self._cpp

    def close(self):
        """Destroys the program (nvrtcDestroyProgram); later calls raise."""
        del self._cpp
        self._cpp = NULL
        self._ptx = None
        self._closed = True

    @property
    def is_closed(self):
        return self._closed

    cdef int _require_open(self) except -1:
        if self._closed:
            raise RuntimeError("Program has been closed")
        return 0

    def compile(self, target_type, name_expressions=(), logs=None, *, cache=None):
        """Compiles to target_type: "ptx", "cubin" or "ltoir" (LTO-IR implies
        link_time_optimization). name_expressions (such as "scale<float>")
        instantiate templates; ObjectCode.get_kernel takes them by the same
        text. logs: an object with write(), which receives NVRTC's log when
        there is one. A failed compile raises NVRTCError with the log."""
        cdef cpp.ProgramOptions options = cpp.ProgramOptions()
        cdef vector[string] expressions
        cdef cpp.CompileResult result
        cdef cpp.CodeKind kind
        self._require_open()
        target_type = str(getattr(target_type, "value", target_type)).lower()
        names = _name_expressions(name_expressions)
        if cache is not None:
            return self._compile_cached(target_type, names, logs, cache)
        if self._code_type == "ptx":
            return self._compile_ptx(target_type, logs)
        if target_type not in _PROGRAM_TARGETS:
            raise ValueError(
                f'Unsupported target_type="{target_type}" for NVRTC (supported: \'ptx\', \'cubin\', \'ltoir\')'
            )
        for n in names:
            expressions.push_back(n.encode())
        rendered = self._options._nvrtc_options()
        options.arch = self._options.arch.encode()
        for option in rendered[1:]:
            # The core adds -dlto itself for LTO-IR.
            if target_type == "ltoir" and option == "--dlink-time-opt":
                continue
            options.extra.push_back(option.encode())
        kind = _CODE_KINDS[target_type]
        with nogil:
            result = self._cpp.compile(kind, options, expressions)
        log = result.log.decode("utf-8", "replace").rstrip("\x00")
        if logs is not None and log.strip():
            logs.write(log)
        if not result.ok:
            error = NVRTCError(f"6: NVRTC_ERROR_COMPILATION, compilation log:\n\n{log}")
            error.status = 6
            error.api_function = "nvrtcCompileProgram"
            error.error_name = "NVRTC_ERROR_COMPILATION"
            raise error
        mapping = {n: result.lowered_names[n.encode()] for n in names}
        code = ObjectCode._wrap(cpp.object_code_take(result.code), None, target_type, self._options.name, mapping)
        code._code = _code_bytes(code._cpp.get())
        return code

    def _compile_cached(self, target_type, name_expressions, logs, cache):
        # cache: a ProgramCacheResource. A hit is the cached bytes as a new
        # ObjectCode of target_type; a miss compiles and stores the bytes.
        from cubind.core.utils import ProgramCacheResource, make_program_cache_key
        if not isinstance(cache, ProgramCacheResource):
            raise TypeError(f"Program.compile: cache must be a ProgramCacheResource or None, not {type(cache).__name__}")
        if len(name_expressions):
            raise ValueError(
                "Program.compile: name_expressions cannot be used with cache=: the cache keeps the binary alone, "
                "so get_kernel(name_expression) would fail on a hit; compile without cache="
            )
        key = make_program_cache_key(code=self._source, code_type=self._code_type, options=self._options,
                                     target_type=target_type)
        data = cache.get(key)
        if data is not None:
            return ObjectCode._init(bytes(data), target_type, name=self._options.name or "")
        code = self.compile(target_type, (), logs)
        cache[key] = code
        return code

    def _compile_ptx(self, target_type, logs):
        if target_type not in ("cubin", "ptx"):
            raise ValueError(f"Unsupported target_type={target_type!r} for PTX sources (supported: 'cubin', 'ptx')")
        o = self._options
        linker_options = LinkerOptions(
            name=o.name, arch=o.arch, max_register_count=o.max_register_count, debug=o.debug,
            lineinfo=o.lineinfo, ftz=o.ftz, prec_div=o.prec_div, prec_sqrt=o.prec_sqrt, fma=o.fma,
            link_time_optimization=o.link_time_optimization, ptxas_options=o.ptxas_options,
            split_compile=o.split_compile, no_cache=o.no_cache, ptx=(target_type == "ptx") or None,
        )
        linker = Linker(ObjectCode.from_ptx(self._ptx.encode(), name=o.name), options=linker_options)
        try:
            code = linker.link(target_type)
        finally:
            if logs is not None:
                log = linker.get_info_log() + linker.get_error_log()
                if log.strip():
                    logs.write(log)
            linker.close()
        return code

    @property
    def pch_status(self):
        """None: cubind.core does not create precompiled headers yet."""
        return None

    @property
    def backend(self):
        """CompilerBackendType.NVRTC for C++ sources, .NVJITLINK for PTX (each
        equal to its text, "NVRTC" and "nvJitLink")."""
        from cubind.core.typing import CompilerBackendType

        return CompilerBackendType("NVRTC" if self._code_type == "c++" else "nvJitLink")

    @property
    def handle(self):
        """The nvrtcProgram (cubind.bindings.nvrtc.nvrtcProgram); None for PTX."""
        self._require_open()
        if self._cpp == NULL:
            return None
        return _raw_handle("nvrtc", "nvrtcProgram", <uintptr_t>self._cpp.handle())

    def __repr__(self):
        return f"<Program backend={self.backend.value!r}>"


cdef bytes _code_bytes(cpp.ObjectCode* code):
    cdef const vector[char]* data = &code.bytes()
    return (<const char*>data.data())[:data.size()]

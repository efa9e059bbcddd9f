# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# ObjectCode and Kernel (cubind::ObjectCode, cubind::Kernel).

from libc.stdint cimport uintptr_t
from libcpp.string cimport string
from libcpp.vector cimport vector

cimport cubind.core._cpp as cpp
from cubind.core._context cimport _context_device, _current_context
from cubind.core._device cimport _Device as Device
from cubind.core._errors cimport _handle_address, _raw_handle
from cubind.core._launch cimport _launch_config, LaunchConfig
from cubind.core._stream cimport _stream_handle

import os
from collections import namedtuple
from cubind.core._errors import _text


_CODE_KINDS = {
    "cubin": cpp.CodeKind.cubin,
    "ptx": cpp.CodeKind.ptx,
    "ltoir": cpp.CodeKind.ltoir,
    "fatbin": cpp.CodeKind.fatbin,
    "object": cpp.CodeKind.object,
    "library": cpp.CodeKind.library,
}


ParamInfo = namedtuple("ParamInfo", ["offset", "size"])


MaxPotentialBlockSizeOccupancyResult = namedtuple("MaxPotentialBlockSizeOccupancyResult", ["min_grid_size", "max_block_size"])


cdef class ObjectCode:
    """Device code (CUBIN, PTX, LTO-IR, fatbin, or a host object or library
    holding device code), made by Program.compile, Linker.link or one of the
    from_* constructors, from bytes or a file. Loaded into the driver
    (cuLibraryLoadData) at the first get_kernel."""


    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._cpp.reset()

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "ObjectCode objects cannot be instantiated directly. "
            "Please use ObjectCode APIs (from_cubin, from_ptx, ...) or Program APIs (compile)."
        )

    @staticmethod
    cdef ObjectCode _wrap(cpp.ObjectCode* code, object module, str code_type, str name, dict symbol_mapping):
        cdef ObjectCode self = ObjectCode.__new__(ObjectCode)
        self._cpp.reset(code)
        self._code = module
        self._code_type = code_type
        self._name = name
        self._symbol_mapping = symbol_mapping if symbol_mapping is not None else {}
        return self

    @staticmethod
    def _init(module, code_type, *, name="", symbol_mapping=None):
        cdef cpp.CodeKind kind
        cdef const unsigned char[::1] view
        cdef cpp.ObjectCode* code = NULL
        cdef string path
        cdef string cname
        if code_type not in _CODE_KINDS:
            raise ValueError(f"code_type is {code_type!r}: expected one of {', '.join(_CODE_KINDS)}")
        if not isinstance(name, str):
            raise TypeError(f"name must be str, not {type(name).__name__}")
        if symbol_mapping is not None and not isinstance(symbol_mapping, dict):
            raise TypeError(f"symbol_mapping must be a dict or None, not {type(symbol_mapping).__name__}")
        kind = _CODE_KINDS[code_type]
        cname = name.encode()
        if isinstance(module, (bytes, bytearray, memoryview)):
            view = memoryview(module).cast("B")
            if view.shape[0] == 0:
                raise ValueError(f"ObjectCode.from_{code_type}: the module is empty")
            code = cpp.object_code_from_bytes(kind, <const char*>&view[0], view.shape[0], cname)
            module = bytes(module) if not isinstance(module, bytes) else module
        elif isinstance(module, (str, os.PathLike)):
            module = os.fspath(module)
            path = os.fsencode(module)
            with nogil:
                code = cpp.object_code_from_file(path, kind)
        else:
            raise TypeError(
                f"Expected type str or bytes or bytearray, but got {type(module).__name__}: "
                f"ObjectCode.from_{code_type}'s module is the code's bytes or a path (str or os.PathLike)"
            )
        return ObjectCode._wrap(code, module, code_type, name, symbol_mapping)

    @staticmethod
    def from_cubin(module, *, name="", symbol_mapping=None):
        """A CUBIN, from bytes or a file path."""
        return ObjectCode._init(module, "cubin", name=name, symbol_mapping=symbol_mapping)

    @staticmethod
    def from_ptx(module, *, name="", symbol_mapping=None):
        """PTX, from bytes or a file path."""
        return ObjectCode._init(module, "ptx", name=name, symbol_mapping=symbol_mapping)

    @staticmethod
    def from_ltoir(module, *, name="", symbol_mapping=None):
        """LTO-IR (a Linker input), from bytes or a file path."""
        return ObjectCode._init(module, "ltoir", name=name, symbol_mapping=symbol_mapping)

    @staticmethod
    def from_fatbin(module, *, name="", symbol_mapping=None):
        """A fatbin, from bytes or a file path."""
        return ObjectCode._init(module, "fatbin", name=name, symbol_mapping=symbol_mapping)

    @staticmethod
    def from_object(module, *, name="", symbol_mapping=None):
        """A host object file holding device code (a Linker input), from bytes or a path."""
        return ObjectCode._init(module, "object", name=name, symbol_mapping=symbol_mapping)

    @staticmethod
    def from_library(module, *, name="", symbol_mapping=None):
        """A static library of such objects (a Linker input), from bytes or a path."""
        return ObjectCode._init(module, "library", name=name, symbol_mapping=symbol_mapping)

    cdef cpp.ObjectCode* _get(self) except NULL:
        if not self._cpp:
            raise RuntimeError("ObjectCode has no code")
        return self._cpp.get()

    def get_kernel(self, name):
        """The kernel `name` (a name expression given to Program.compile, or the
        kernel's mangled or extern "C" name); loads the code on first use
        (cuLibraryLoadData, cuLibraryGetKernel)."""
        cdef string cname
        cdef cpp.ObjectCode* code = self._get()
        cdef Kernel kernel = Kernel.__new__(Kernel)
        name = _text(name, "ObjectCode.get_kernel: name")
        if self._code_type not in ("cubin", "ptx", "fatbin"):
            raise RuntimeError(
                f"ObjectCode.get_kernel: {self._code_type} code has no kernels to load; link it first (Linker)"
            )
        mangled = self._symbol_mapping.get(name, name)
        cname = mangled if isinstance(mangled, bytes) else mangled.encode()
        with nogil:
            kernel._cpp = code.get_kernel(cname)
        kernel._module = self
        return kernel

    @property
    def code(self):
        """The code as given: bytes, or the path it was read from."""
        return self._code

    @property
    def name(self):
        return self._name

    @property
    def code_type(self):
        """"cubin", "ptx", "ltoir", "fatbin", "object" or "library"."""
        return self._code_type

    @property
    def symbol_mapping(self):
        """Name expressions to mangled kernel names (from Program.compile)."""
        return self._symbol_mapping

    @property
    def handle(self):
        """The CUlibrary (cubind.bindings.driver.CUlibrary), loading the code first."""
        cdef cpp.ObjectCode* code = self._get()
        cdef cpp.CUlibrary library
        with nogil:
            library = code.handle()
        return _raw_handle("driver", "CUlibrary", <uintptr_t>library)

    def __repr__(self):
        return f"<ObjectCode code_type={self._code_type!r} name={self._name!r}>"

    def __reduce__(self):
        # Pickled as its code, kind, name and mapping; loaded anew where unpickled.
        return _object_code_from, (self._code, self._code_type, self._name, self._symbol_mapping)


def _object_code_from(module, code_type, name, symbol_mapping):
    return ObjectCode._init(module, code_type, name=name, symbol_mapping=symbol_mapping)


cdef extern from "<cuda.h>":
    enum:
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
        CU_FUNC_ATTRIBUTE_NUM_REGS
        CU_FUNC_ATTRIBUTE_PTX_VERSION
        CU_FUNC_ATTRIBUTE_BINARY_VERSION
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
        CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
        CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE


cdef class KernelAttributes:
    """A kernel's attributes (cuKernelGetAttribute) on one device:
    kernel.attributes.num_regs is for the current device,
    kernel.attributes[device].num_regs for another."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError("KernelAttributes cannot be instantiated directly; use Kernel.attributes")

    def __getitem__(self, device):
        cdef KernelAttributes other = KernelAttributes.__new__(KernelAttributes)
        other._kernel = self._kernel
        other._device_id = int(device)
        return other

    cdef int _get(self, int attribute) except? -1:
        cdef int device_id = self._device_id
        cdef int value = 0
        cdef cpp.CUcontext current = NULL
        if device_id < 0:
            # The current context's device, read with the attribute under
            # one release of the GIL; with no context current, Device()'s.
            with nogil:
                current = _current_context()
                if current != NULL:
                    device_id = _context_device(current)
                    value = cpp.kernel_attribute(self._kernel._cpp, <cpp.CUfunction_attribute>attribute, device_id)
            if current != NULL:
                return value
            device_id = Device().device_id
        with nogil:
            value = cpp.kernel_attribute(self._kernel._cpp, <cpp.CUfunction_attribute>attribute, device_id)
        return value

    @property
    def max_threads_per_block(self):
        return self._get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)

    @property
    def shared_size_bytes(self):
        return self._get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)

    @property
    def const_size_bytes(self):
        return self._get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)

    @property
    def local_size_bytes(self):
        return self._get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)

    @property
    def num_regs(self):
        return self._get(CU_FUNC_ATTRIBUTE_NUM_REGS)

    @property
    def ptx_version(self):
        return self._get(CU_FUNC_ATTRIBUTE_PTX_VERSION)

    @property
    def binary_version(self):
        return self._get(CU_FUNC_ATTRIBUTE_BINARY_VERSION)

    @property
    def cache_mode_ca(self):
        return bool(self._get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA))

    @property
    def max_dynamic_shared_size_bytes(self):
        return self._get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)

    @property
    def preferred_shared_memory_carveout(self):
        return self._get(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)

    @property
    def cluster_size_must_be_set(self):
        return bool(self._get(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET))

    @property
    def required_cluster_width(self):
        return self._get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)

    @property
    def required_cluster_height(self):
        return self._get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT)

    @property
    def required_cluster_depth(self):
        return self._get(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)

    @property
    def non_portable_cluster_size_allowed(self):
        return bool(self._get(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED))

    @property
    def cluster_scheduling_policy_preference(self):
        return self._get(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)


cdef class KernelOccupancy:
    """Occupancy queries for a kernel on the current device (cuOccupancy*)."""


    def __init__(self, *args, **kwargs):
        raise RuntimeError("KernelOccupancy cannot be instantiated directly; use Kernel.occupancy")

    def max_active_blocks_per_multiprocessor(self, block_size, dynamic_shared_memory_size):
        cdef int block = block_size
        cdef size_t shared = dynamic_shared_memory_size
        cdef int value
        with nogil:
            value = self._kernel._cpp.max_active_blocks_per_multiprocessor(block, shared, 0)
        return value

    def max_potential_block_size(self, dynamic_shared_memory_needed, block_size_limit):
        cdef size_t shared
        cdef int limit = block_size_limit
        cdef cpp.BlockSizeSuggestion suggestion
        if callable(dynamic_shared_memory_needed):
            raise NotImplementedError(
                "KernelOccupancy.max_potential_block_size: a shared-memory size function is not supported; pass an int"
            )
        shared = dynamic_shared_memory_needed
        with nogil:
            suggestion = self._kernel._cpp.max_potential_block_size(shared, limit, 0)
        return MaxPotentialBlockSizeOccupancyResult(suggestion.min_grid_size, suggestion.block_size)

    def available_dynamic_shared_memory_per_block(self, num_blocks_per_multiprocessor, block_size):
        cdef int blocks = num_blocks_per_multiprocessor
        cdef int block = block_size
        cdef size_t value
        with nogil:
            value = self._kernel._cpp.available_dynamic_shared_memory_per_block(blocks, block)
        return value

    def max_potential_cluster_size(self, config, *, stream):
        cdef LaunchConfig c = _launch_config(config)
        cdef int value
        _stream_handle(stream)
        with nogil:
            value = self._kernel._cpp.max_potential_cluster_size(c._cpp)
        return value

    def max_active_clusters(self, config, *, stream):
        cdef LaunchConfig c = _launch_config(config)
        cdef int value
        _stream_handle(stream)
        with nogil:
            value = self._kernel._cpp.max_active_clusters(c._cpp)
        return value


cdef class Kernel:
    """One kernel of an ObjectCode (a CUkernel), from ObjectCode.get_kernel."""

    def __dealloc__(self):
        # The driver call of its destructor (an unload, a destroy) may wait
        # on queued work, such as a host callback that needs the GIL.
        with nogil:
            self._cpp = cpp.Kernel()

    def __cinit__(self):
        self._cpp = cpp.Kernel()
        self._plan_count = -1   # no argument plan yet

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Kernel objects cannot be instantiated directly; use ObjectCode.get_kernel")

    cdef int _load_sizes(self, cpp.CUstream stream=NULL) except -1:
        # At a launch, on that launch's stream: read in its context where the
        # thread has none current (cubind::parameters_for_launch).
        cdef vector[cpp.KernelParam] params
        with nogil:
            if stream != NULL:
                params = cpp.parameters_for_launch(self._cpp, cpp.StreamRef(stream))
            else:
                params = self._cpp.param_info()
        self._sizes.clear()
        self._slots = 0
        for p in params:
            self._sizes.push_back(p.size)
            self._slots += (p.size + 7) // 8
        self._have_sizes = True
        # _handle, which tells launch's usual way that the sizes are known,
        # is set by the general way's launch (_launch.pyx), after it has
        # looked at the arguments for a plan.
        return 0

    @property
    def attributes(self):
        cdef KernelAttributes attributes = KernelAttributes.__new__(KernelAttributes)
        attributes._kernel = self
        attributes._device_id = -1
        return attributes

    @property
    def num_arguments(self):
        if not self._have_sizes:
            self._load_sizes()
        return self._sizes.size()

    @property
    def arguments_info(self):
        cdef vector[cpp.KernelParam] params
        with nogil:
            params = self._cpp.param_info()
        return [ParamInfo(p.offset, p.size) for p in params]

    @property
    def occupancy(self):
        cdef KernelOccupancy occupancy = KernelOccupancy.__new__(KernelOccupancy)
        occupancy._kernel = self
        return occupancy

    @property
    def handle(self):
        """The CUkernel (cubind.bindings.driver.CUkernel)."""
        return _raw_handle("driver", "CUkernel", <uintptr_t>self._cpp.handle())

    @property
    def name(self):
        return self._cpp.name().decode()

    @staticmethod
    def from_handle(handle, mod=None):
        """A Kernel of a CUkernel loaded elsewhere (an int or a CUkernel); mod,
        an ObjectCode, is kept alive with it."""
        cdef Kernel kernel = Kernel.__new__(Kernel)
        cdef uintptr_t value
        if mod is not None and not isinstance(mod, ObjectCode):
            raise TypeError(f"Kernel.from_handle: mod must be an ObjectCode or None, not {type(mod).__name__}")
        value = _handle_address(handle, "Kernel", "from_handle", "handle")
        if value == 0:
            raise ValueError("Kernel.from_handle: handle is 0, which names no kernel")
        with nogil:
            kernel._cpp = cpp.Kernel.from_native_handle(<cpp.CUkernel>value)
        kernel._module = mod
        return kernel

    def __eq__(self, other):
        return isinstance(other, Kernel) and int(<uintptr_t>self._cpp.handle()) == int(<uintptr_t>(<Kernel>other)._cpp.handle())

    def __hash__(self):
        return hash(("Kernel", <uintptr_t>self._cpp.handle()))

    def __repr__(self):
        return f"<Kernel {self.name!r}>"

"""The option dataclasses of cubind.core, with cuda.core 1.2's fields and defaults.

ProgramOptions and LinkerOptions render to the option strings NVRTC and
nvJitLink take (as_bytes); the others are read by the classes they configure.
Unlike cuda.core, a field of the wrong type raises TypeError naming the field
when rendered, rather than reaching the compiler as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

TYPE_CHECKING = False  # typing is not imported at run time: the annotations are strings
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ContextOptions",
    "DeviceMemoryResourceOptions",
    "EventOptions",
    "LinkerOptions",
    "PinnedMemoryResourceOptions",
    "ProgramOptions",
    "SMResourceOptions",
    "StreamOptions",
    "WorkqueueResourceOptions",
]


def _current_arch(owner):
    # As in cuda.core: no arch means the current device's. Imported here, as
    # the device class lives in the compiled module.
    from cubind.core._device import Device

    try:
        return "sm_" + Device().arch
    except Exception as error:
        raise RuntimeError(
            f"{owner}: arch was not given and the current device's could not be read ({error}); "
            "pass arch='sm_NN' to compile without a GPU"
        ) from error


def _as_list(value, field, item_types):
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, item_types) or isinstance(item, bool):
            names = " or ".join(t.__name__ for t in item_types)
            raise TypeError(f"{field} holds {item!r}: expected {names} (or a list of them)")
    return items


def _check(value, field, types):
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        names = " or ".join(t.__name__ for t in types)
        raise TypeError(f"{field} is {value!r}: expected {names} or None")
    return value


def _typed(options, field, kind):
    # A field cuda.core's options type as bool or int, checked when made, with
    # cuda.core's words ("Expected bool, got str"), then the field and value.
    value = getattr(options, field)
    if value is None:
        return
    # cuda.core's int fields take any number (a float is truncated, a bool is
    # 0 or 1) and its bool fields a bool only.
    ok = isinstance(value, bool) if kind is bool else isinstance(value, (int, float))
    if not ok:
        raise TypeError(f"Expected {kind.__name__}, got {type(value).__name__}: "
                        f"{type(options).__name__}.{field} is {value!r:.60}")


def _true_false(value):
    return "true" if value else "false"


# ProgramOptions fields and the NVRTC option each becomes, in the order NVRTC
# receives them. Kinds: "flag" (present when true), "bool" (=true/false when
# set), "value" (=value), "list" (one option per item).
_NVRTC_RENDERING = (
    ("relocatable_device_code", "bool", "--relocatable-device-code"),
    ("extensible_whole_program", "flag", "--extensible-whole-program"),
    ("debug", "flag", "--device-debug"),
    ("lineinfo", "flag", "--generate-line-info"),
    ("device_code_optimize", "flag", "--dopt=on"),
    ("ptxas_options", "list", "--ptxas-options"),
    ("max_register_count", "int", "--maxrregcount"),
    ("ftz", "bool", "--ftz"),
    ("prec_sqrt", "bool", "--prec-sqrt"),
    ("prec_div", "bool", "--prec-div"),
    ("fma", "bool", "--fmad"),
    ("use_fast_math", "flag", "--use_fast_math"),
    ("extra_device_vectorization", "flag", "--extra-device-vectorization"),
    ("link_time_optimization", "flag", "--dlink-time-opt"),
    ("gen_opt_lto", "flag", "--gen-opt-lto"),
    ("define_macro", "macros", "--define-macro"),
    ("undefine_macro", "list", "--undefine-macro"),
    ("include_path", "list", "--include-path"),
    ("use_bundled_headers", "bundled", None),
    ("pre_include", "list", "--pre-include"),
    ("no_source_include", "flag", "--no-source-include"),
    ("std", "value", "--std"),
    ("builtin_move_forward", "bool", "--builtin-move-forward"),
    ("builtin_initializer_list", "bool", "--builtin-initializer-list"),
    ("disable_warnings", "flag", "--disable-warnings"),
    ("restrict", "flag", "--restrict"),
    ("device_as_default_execution_space", "flag", "--device-as-default-execution-space"),
    ("device_int128", "flag", "--device-int128"),
    ("optimization_info", "value", "--optimization-info"),
    ("no_display_error_number", "flag", "--no-display-error-number"),
    ("diag_error", "ints", "--diag-error"),
    ("diag_suppress", "ints", "--diag-suppress"),
    ("diag_warn", "ints", "--diag-warn"),
    ("brief_diagnostics", "bool", "--brief-diagnostics"),
    ("time", "value", "--time"),
    ("split_compile", "int", "--split-compile"),
    ("fdevice_syntax_only", "flag", "--fdevice-syntax-only"),
    ("minimal", "flag", "--minimal"),
    ("no_cache", "flag", "--no-cache"),
    ("fdevice_time_trace", "value", "--fdevice-time-trace"),
    ("device_float128", "flag", "--device-float128"),
    ("frandom_seed", "value", "--frandom-seed"),
    ("ofast_compile", "value", "--Ofast-compile"),
    ("pch", "flag", "--pch"),
    ("create_pch", "value", "--create-pch"),
    ("use_pch", "value", "--use-pch"),
    ("pch_dir", "value", "--pch-dir"),
    ("pch_verbose", "bool", "--pch-verbose"),
    ("pch_messages", "bool", "--pch-messages"),
    ("instantiate_templates_in_pch", "bool", "--instantiate-templates-in-pch"),
    ("extra_sources", "nvvm", None),
    ("use_libdevice", "nvvm", None),
    ("numba_debug", "flag", "--numba-debug"),
)


# The smallest value each integer field takes; the compilers take smaller
# ones without a word (NVRTC compiles with --maxrregcount=-1) or fail later
# with a message that names no field.
_MINIMUM = {
    "max_register_count": (1, "a register count of at least 1"),
    "split_compile": (0, "a thread count >= 0 (0: as many as there are CPUs)"),
    "split_compile_extended": (0, "a level >= 0"),
    "diag_error": (0, "a diagnostic number >= 0"),
    "diag_suppress": (0, "a diagnostic number >= 0"),
    "diag_warn": (0, "a diagnostic number >= 0"),
}


def _at_least(value, field, name):
    minimum = _MINIMUM.get(field)
    if minimum is not None and value < minimum[0]:
        raise ValueError(f"{name} is {value!r}: expected {minimum[1]}")
    return value


def _render(options, rendering, owner, prefix):
    out = []
    for field, kind, option in rendering:
        value = getattr(options, field)
        if value is None:
            continue
        name = f"{owner}.{field}"
        if kind == "flag":
            if _check(value, name, (bool,)):
                out.append(option)
        elif kind == "bool":
            out.append(f"{option}={_true_false(_check(value, name, (bool,)))}")
        elif kind == "value":
            out.append(f"{option}={_check(value, name, (str,))}")
        elif kind == "int":
            out.append(f"{option}={_at_least(_check(value, name, (int,)), field, name)}")
        elif kind == "list":
            out.extend(f"{option}={item}" for item in _as_list(value, name, (str,)))
        elif kind == "ints":
            out.extend(f"{option}={_at_least(item, field, name)}" for item in _as_list(value, name, (int,)))
        elif kind == "macros":
            if not isinstance(value, (str, tuple, list)):
                raise TypeError(f"{name} is {value!r}: expected a macro name, a (name, value) tuple, or a list of them")
            items = [value] if isinstance(value, (str, tuple)) and not _is_macro_list(value) else list(value)
            for item in items:
                if isinstance(item, str):
                    out.append(f"{option}={item}")
                elif isinstance(item, tuple) and len(item) == 2 and all(isinstance(v, str) for v in item):
                    out.append(f"{option}={item[0]}={item[1]}")
                else:
                    raise TypeError(
                        f"{name} holds {item!r}: expected a macro name or a (name, value) tuple of str"
                    )
        elif kind == "bundled":
            if _check(value, name, (bool,)):
                raise NotImplementedError(
                    f"{name}: bundled headers need NVRTC 13.3 or newer (--use-bundled-headers); "
                    "cubind is built for CUDA 13.0"
                )
        elif kind == "nvvm":
            if value:
                raise ValueError(f"{name} applies to the NVVM backend only, which cubind.core does not provide")
    return [prefix + o if prefix else o for o in out]


def _check_extra_sources(value):
    # ProgramOptions.extra_sources: a sequence of (name, source) 2-tuples, as
    # cuda.core checks it when made.
    if value is None:
        return
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        if isinstance(value, str):
            raise TypeError("ProgramOptions.extra_sources: Each extra module must be a 2-tuple (name, source), "
                            "got str at index 0")
        raise TypeError("ProgramOptions.extra_sources must be a sequence of 2-tuples: ((name1, source1), "
                        f"(name2, source2), ...), not {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"ProgramOptions.extra_sources: Each extra module must be a 2-tuple (name, source), "
                            f"got {type(item).__name__} at index {i}")


def _is_macro_list(value):
    # ("A", "1") is one macro with a value; ("A", ("B", "1")) is a list of two.
    return isinstance(value, tuple) and not (len(value) == 2 and all(isinstance(v, str) for v in value))


def _repr_set_fields(options):
    shown = ", ".join(f"{f.name}={getattr(options, f.name)!r}" for f in fields(options) if getattr(options, f.name) is not None)
    return f"{type(options).__name__}({shown})"


@dataclass
class ProgramOptions:
    """Options of Program (NVRTC), with cuda.core 1.2's fields and defaults.

    arch is "sm_NN" (CUBIN and PTX) or "compute_NN"; left out, the current
    device's architecture is used. Every other field left None is left out of
    the NVRTC command line; as_bytes("nvrtc") shows the options rendered.
    """

    name: str | None = "default_program"
    arch: str | None = None
    relocatable_device_code: bool | None = None
    extensible_whole_program: bool | None = None
    debug: bool | None = None
    lineinfo: bool | None = None
    device_code_optimize: bool | None = None
    ptxas_options: str | list[str] | tuple[str] | None = None
    max_register_count: int | None = None
    ftz: bool | None = None
    prec_sqrt: bool | None = None
    prec_div: bool | None = None
    fma: bool | None = None
    use_fast_math: bool | None = None
    extra_device_vectorization: bool | None = None
    link_time_optimization: bool | None = None
    gen_opt_lto: bool | None = None
    define_macro: str | tuple[str, str] | list[str | tuple[str, str]] | tuple[str | tuple[str, str], ...] | None = None
    undefine_macro: str | list[str] | tuple[str] | None = None
    include_path: str | list[str] | tuple[str] | None = None
    use_bundled_headers: bool | None = None
    pre_include: str | list[str] | tuple[str] | None = None
    no_source_include: bool | None = None
    std: str | None = None
    builtin_move_forward: bool | None = None
    builtin_initializer_list: bool | None = None
    disable_warnings: bool | None = None
    restrict: bool | None = None
    device_as_default_execution_space: bool | None = None
    device_int128: bool | None = None
    optimization_info: str | None = None
    no_display_error_number: bool | None = None
    diag_error: int | list[int] | tuple[int] | None = None
    diag_suppress: int | list[int] | tuple[int] | None = None
    diag_warn: int | list[int] | tuple[int] | None = None
    brief_diagnostics: bool | None = None
    time: str | None = None
    split_compile: int | None = None
    fdevice_syntax_only: bool | None = None
    minimal: bool | None = None
    no_cache: bool | None = None
    fdevice_time_trace: str | None = None
    device_float128: bool | None = None
    frandom_seed: str | None = None
    ofast_compile: str | None = None
    pch: bool | None = None
    create_pch: str | None = None
    use_pch: str | None = None
    pch_dir: str | None = None
    pch_verbose: bool | None = None
    pch_messages: bool | None = None
    instantiate_templates_in_pch: bool | None = None
    extra_sources: list[tuple[str, str | bytes | bytearray]] | tuple[tuple[str, str | bytes | bytearray], ...] | None = None
    use_libdevice: bool | None = None
    numba_debug: bool | None = None

    def __post_init__(self):
        if self.name is None:
            self.name = "default_program"
        if self.arch is None:
            self.arch = _current_arch("ProgramOptions")
        _check(self.arch, "ProgramOptions.arch", (str,))
        _check(self.name, "ProgramOptions.name", (str,))
        if self.use_bundled_headers:
            # cuda.core's type, when made: NVRTC 13.0 has no bundled headers.
            raise RuntimeError(
                "ProgramOptions.use_bundled_headers requires NVRTC >= 13.3 (--use-bundled-headers); "
                "cubind is built for CUDA 13.0"
            )
        _check_extra_sources(self.extra_sources)

    def _nvrtc_options(self):
        return [f"-arch={self.arch}"] + _render(self, _NVRTC_RENDERING, "ProgramOptions", "")

    def as_bytes(self, backend, target_type=None):
        """The options as NVRTC takes them, each as bytes: as_bytes("nvrtc").

        backend: "nvrtc" (cubind.core has no NVVM backend: "nvvm" raises
        NotImplementedError). target_type ("ptx", "cubin", "ltoir") changes
        nothing for NVRTC; it is accepted as cuda.core accepts it.
        """
        backend = str(getattr(backend, "value", backend)).lower()
        if backend == "nvrtc":
            return [o.encode() for o in self._nvrtc_options()]
        if backend == "nvvm":
            raise NotImplementedError("ProgramOptions.as_bytes: cubind.core has no NVVM backend; use 'nvrtc'")
        raise ValueError(f"Unknown backend {backend!r}. Must be one of: 'nvrtc', 'nvvm'")

    def __repr__(self):
        return _repr_set_fields(self)


_NVJITLINK_RENDERING = (
    ("max_register_count", "int", "-maxrregcount"),
    ("time", "flag", "-time"),
    ("verbose", "flag", "-verbose"),
    ("link_time_optimization", "flag", "-lto"),
    ("ptx", "flag", "-ptx"),
    ("optimization_level", "olevel", "-O"),
    ("debug", "flag", "-g"),
    ("lineinfo", "flag", "-lineinfo"),
    ("ftz", "bool", "-ftz"),
    ("prec_div", "bool", "-prec-div"),
    ("prec_sqrt", "bool", "-prec-sqrt"),
    ("fma", "bool", "-fma"),
    ("kernels_used", "list", "-kernels-used"),
    ("variables_used", "list", "-variables-used"),
    ("optimize_unused_variables", "flag", "-optimize-unused-variables"),
    ("ptxas_options", "list", "-Xptxas"),
    ("split_compile", "int", "-split-compile"),
    ("split_compile_extended", "int", "-split-compile-extended"),
    ("no_cache", "flag", "-no-cache"),
)


@dataclass
class LinkerOptions:
    """Options of Linker (nvJitLink), with cuda.core 1.2's fields and defaults.

    arch is "sm_NN"; left out, the current device's architecture is used.
    """

    name: str | None = "<default linker>"
    arch: str | None = None
    max_register_count: int | None = None
    time: bool | None = None
    verbose: bool | None = None
    link_time_optimization: bool | None = None
    ptx: bool | None = None
    optimization_level: int | None = None
    debug: bool | None = None
    lineinfo: bool | None = None
    ftz: bool | None = None
    prec_div: bool | None = None
    prec_sqrt: bool | None = None
    fma: bool | None = None
    kernels_used: str | tuple[str] | list[str] | None = None
    variables_used: str | tuple[str] | list[str] | None = None
    optimize_unused_variables: bool | None = None
    ptxas_options: str | tuple[str] | list[str] | None = None
    split_compile: int | None = None
    split_compile_extended: int | None = None
    no_cache: bool | None = None
    numba_debug: bool | None = None

    def __post_init__(self):
        if self.name is None:
            self.name = "<default linker>"
        if self.arch is None:
            self.arch = _current_arch("LinkerOptions")
        _check(self.arch, "LinkerOptions.arch", (str,))
        _check(self.name, "LinkerOptions.name", (str,))
        if self.numba_debug is not None:
            import warnings

            warnings.warn(
                "LinkerOptions.numba_debug has no effect on any linker and is ignored",
                DeprecationWarning,
                stacklevel=3,
            )

    def _nvjitlink_options(self):
        out = [f"-arch={self.arch}"]
        for field, kind, option in _NVJITLINK_RENDERING:
            value = getattr(self, field)
            if value is None:
                continue
            if kind == "olevel":
                level = _check(value, f"LinkerOptions.{field}", (int,))
                if not 0 <= level <= 3:
                    raise ValueError(f"LinkerOptions.optimization_level is {level}: expected 0, 1, 2 or 3")
                out.append(f"-O{level}")
            else:
                out.extend(_render(self, ((field, kind, option),), "LinkerOptions", ""))
        return out

    def as_bytes(self, backend="nvjitlink"):
        """The options as nvJitLink takes them, each as bytes."""
        backend = str(getattr(backend, "value", backend)).lower()
        if backend != "nvjitlink":
            raise ValueError(f"LinkerOptions.as_bytes: backend {backend!r}; cubind.core links with 'nvjitlink' only")
        return [o.encode() for o in self._nvjitlink_options()]


@dataclass
class StreamOptions:
    """Options of a new Stream: nonblocking (no synchronisation with the legacy
    default stream) and priority (lower runs first; None is the default)."""

    nonblocking: Any = True
    priority: int | None = None

    def __post_init__(self):
        _typed(self, "priority", int)


@dataclass
class EventOptions:
    """Options of a new Event: timing_enabled (Event subtraction), blocking_sync
    (Event.sync yields the CPU), ipc_enabled (shareable; not with timing)."""

    timing_enabled: bool | None = False
    blocking_sync: bool | None = False
    ipc_enabled: bool | None = False

    def __post_init__(self):
        for field in ("timing_enabled", "blocking_sync", "ipc_enabled"):
            _typed(self, field, bool)


@dataclass
class DeviceMemoryResourceOptions:
    """Options of a DeviceMemoryResource with a pool of its own: ipc_enabled
    (shareable with other processes) and max_size (0: the driver's limit)."""

    ipc_enabled: bool = False
    max_size: int = 0

    def __post_init__(self):
        _typed(self, "max_size", int)


@dataclass
class PinnedMemoryResourceOptions:
    """Options of a PinnedMemoryResource with a host pool of its own:
    ipc_enabled (shareable with other processes), max_size (0: the driver's
    limit) and numa_id (the host NUMA node; None places the memory where the
    system chooses, or, with ipc_enabled, on the current device's node)."""

    ipc_enabled: bool = False
    max_size: int = 0
    numa_id: int | None = None

    def __post_init__(self):
        _typed(self, "max_size", int)
        _typed(self, "numa_id", int)


@dataclass
class ContextOptions:
    """Options of Device.create_context: resources, a sequence of SMResource
    (groups of one SMResource.split) that the green context is made of."""

    resources: Any


@dataclass
class SMResourceOptions:
    """Options of SMResource.split. count is the SMs of each group: an int (or
    None, the smallest partition the device allows) for one group, a sequence
    for as many groups as it has. The other fields are a scalar or a sequence
    as long as count.

    cubind is built for CUDA 13.0, whose cuDevSmResourceSplitByCount splits
    into groups of one size: counts that differ, coscheduled_sm_count,
    preferred_coscheduled_sm_count and backfill need CUDA 13.1's
    cuDevSmResourceSplit and raise NotImplementedError, as cuda.core does over
    13.0 bindings."""

    count: int | Sequence[int] | None = None
    coscheduled_sm_count: int | Sequence[int] | None = None
    preferred_coscheduled_sm_count: int | Sequence[int] | None = None
    backfill: bool | Sequence[bool] = False


_SHARING_SCOPES = ("device_ctx", "green_ctx_balanced")


@dataclass
class WorkqueueResourceOptions:
    """Options of WorkqueueResource.configure: sharing_scope ("device_ctx" or
    "green_ctx_balanced") and concurrency_limit (at least 1), each None to
    leave it as it is. Checked when made."""

    sharing_scope: str | None = None
    concurrency_limit: int | None = None

    def __post_init__(self):
        scope = self.sharing_scope
        if scope is not None and (not isinstance(scope, str) or scope not in _SHARING_SCOPES):
            raise ValueError(
                f"WorkqueueResourceOptions.sharing_scope: {scope!r} is not a valid WorkqueueSharingScopeType. "
                "Must be None, 'device_ctx' or 'green_ctx_balanced'"
            )
        limit = self.concurrency_limit
        if limit is None:
            return
        if not isinstance(limit, int):
            raise TypeError(
                f"WorkqueueResourceOptions.concurrency_limit is {limit!r}: expected int or None, "
                f"not {type(limit).__name__}"
            )
        if limit < 1:
            raise ValueError(f"WorkqueueResourceOptions.concurrency_limit must be >= 1, got {limit}")


def _is_sequence(value):
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _sm_split_request(options):
    """(groups, count) for cuDevSmResourceSplitByCount from SMResourceOptions:
    count is None for the smallest partition. Raises TypeError or ValueError
    naming the field for a bad value, NotImplementedError for what needs the
    structured split of CUDA 13.1."""
    count = options.count
    if count is None or (isinstance(count, int) and not isinstance(count, bool)):
        counts, groups = [count], None
    elif _is_sequence(count):
        counts = list(count)
        groups = len(counts)
        if groups == 0:
            raise ValueError("SMResourceOptions.count is an empty sequence; give at least one group's count")
    else:
        raise TypeError(
            f"SMResourceOptions.count is {count!r}: expected an int, a sequence of ints or None, "
            f"not {type(count).__name__}"
        )
    for i, value in enumerate(counts):
        where = "SMResourceOptions.count" + ("" if groups is None else f"[{i}]")
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{where} is {value!r}: expected an int or None, not {type(value).__name__}")
        if value < 0:
            raise ValueError(f"SMResourceOptions.count must be non-negative: {where} is {value}")
    for name in ("coscheduled_sm_count", "preferred_coscheduled_sm_count", "backfill"):
        value = getattr(options, name)
        if not _is_sequence(value):
            continue
        if groups is None:
            raise ValueError(
                f"SMResourceOptions.{name} is a sequence ({value!r}) but count is scalar; "
                "count must be a sequence to give several groups"
            )
        if len(value) != groups:
            raise ValueError(
                f"SMResourceOptions.{name} has {len(value)} values, expected {groups} (one per group of count)"
            )
    for name in ("coscheduled_sm_count", "preferred_coscheduled_sm_count"):
        if getattr(options, name) is not None:
            raise NotImplementedError(
                f"SMResourceOptions.{name} needs the structured SM split of CUDA 13.1 (cuDevSmResourceSplit); "
                "cubind is built for CUDA 13.0"
            )
    backfill = options.backfill
    if any(backfill) if _is_sequence(backfill) else backfill:
        raise NotImplementedError(
            "SMResourceOptions.backfill needs the structured SM split of CUDA 13.1 (cuDevSmResourceSplit); "
            "cubind is built for CUDA 13.0"
        )
    if any(value != counts[0] for value in counts[1:]):
        raise NotImplementedError(
            f"SMResourceOptions.count is {count!r}: groups of different sizes need the structured SM split "
            "of CUDA 13.1 (cuDevSmResourceSplit); cubind is built for CUDA 13.0, whose split makes groups of one size"
        )
    return (1 if groups is None else groups), counts[0]

"""cubind.core.system against cuda.core 1.2's cuda.core.system, side by side.

Names and signatures are read from cuda.core's stubs (its .pyi files), which
list the whole API whatever cuda.bindings is installed: the same public
names, classes, members and parameters, the same enums with the same values,
the same exception classes by name. Behaviour needs cuda.core.system's Device,
which cuda.core imports only over cuda.bindings >= 13.1.2 (with its nvml): there,
both packages run over the same scripted NVML (_fake_nvml.py, each over its
own bindings' enums) and every call below, good input or bad, gives the same
result or an exception of the same type."""
import ast
import glob
import inspect
import os
import sys

import pytest

cc = pytest.importorskip("cuda.core", reason="cuda.core 1.2 is not installed (pip install 'cuda-core==1.2.*')")
import cuda.core.system as theirs  # noqa: E402

import cubind.core.system as ours  # noqa: E402
from cubind.bindings import nvml as our_nvml  # noqa: E402
from cubind.core.system import _nvml_context as our_context  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import _fake_nvml  # noqa: E402

STUB_DIR = os.path.dirname(theirs.__file__)


def _stub_modules():
    """{stub module name: ast} of cuda.core.system's .pyi files and exceptions.py."""
    found = {}
    for path in sorted(glob.glob(os.path.join(STUB_DIR, "*.pyi")) + [os.path.join(STUB_DIR, "exceptions.py")]):
        found[os.path.splitext(os.path.basename(path))[0]] = ast.parse(open(path).read())
    return found


STUBS = _stub_modules()


def _stub_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def _stub_classes():
    """{class name: {member: (ast args, is static) or "property"}} of the classes
    in the stubs, each with its stub bases' members."""
    classes, bases = {}, {}
    for module in ("_device", "_system_events"):
        for node in STUBS[module].body:
            if isinstance(node, ast.ClassDef):
                members = {}
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        decorators = [getattr(d, "id", getattr(d, "attr", None)) for d in item.decorator_list]
                        if "property" in decorators or "setter" in decorators:
                            members[item.name] = "property"
                        else:
                            members.setdefault(item.name, (item.args, "staticmethod" in decorators))
                classes[node.name] = members
                bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
    for name in classes:
        for base in bases[name]:
            for member, spec in classes.get(base, {}).items():
                classes[name].setdefault(member, spec)
    return {name: members for name, members in classes.items() if not name.startswith("_")}


def _params(args, drop_first):
    """[(name, kind, default as source text)] of a stub's ast arguments."""
    out = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(positional, defaults):
        out.append((arg.arg, "positional_or_keyword", "<required>" if default is None else ast.unparse(default)))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append((arg.arg, "keyword_only", "<required>" if default is None else ast.unparse(default)))
    return out[1:] if drop_first else out


def _our_params(obj, drop_self):
    import enum

    out = []
    for p in inspect.signature(obj).parameters.values():
        if p.default is p.empty:
            default = "<required>"
        elif isinstance(p.default, enum.Enum):
            default = f"{type(p.default).__name__}.{p.default.name}"
        else:
            default = repr(p.default)
        kind = "positional_or_keyword" if p.kind.name == "POSITIONAL_ONLY" else p.kind.name.lower()
        out.append((p.name, kind, default))
    return out[1:] if drop_self and out and out[0][0] in ("self", "cls") else out


STUB_CLASSES = _stub_classes()


def _stub_functions():
    found = {}
    for module in ("_device", "_system", "_system_events"):
        for node in STUBS[module].body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = node.args
    return found


STUB_FUNCTIONS = _stub_functions()


def test_the_same_names():
    expected = set(_stub_all(STUBS["_system"]) + _stub_all(STUBS["_device"]) + _stub_all(STUBS["_system_events"])
                   + _stub_all(STUBS["exceptions"]))
    assert set(ours.__all__) == expected
    for name in expected:
        assert hasattr(ours, name), name
    assert cc.system is theirs
    import cubind.core
    assert cubind.core.system is ours


@pytest.mark.parametrize("name", sorted(STUB_FUNCTIONS))
def test_functions_have_the_same_parameters(name):
    module = {n: m for m in ("_device", "_system", "_system_events")
              for n in [f.name for f in STUBS[m].body if isinstance(f, ast.FunctionDef)]}[name]
    ours_module = getattr(ours, module)
    assert hasattr(ours_module, name), f"cubind.core.system.{module} has no {name}"
    expected = _params(STUB_FUNCTIONS[name], drop_first=False)
    got = _our_params(getattr(ours_module, name), drop_self=False)
    assert got == expected


@pytest.mark.parametrize("name", sorted(STUB_CLASSES))
def test_classes_have_the_same_members_and_parameters(name):
    module = ours._system_events if hasattr(ours._system_events, name) and not hasattr(ours._device, name) \
        else ours._device
    cls = getattr(module, name)
    problems = []
    for member, spec in STUB_CLASSES[name].items():
        if member.startswith("__") and member not in ("__init__", "__len__", "__getitem__"):
            continue  # __dealloc__: a Cython destructor (cubind frees in __del__)
        if not hasattr(cls, member):
            problems.append(f"{name}.{member} is missing")
            continue
        static = inspect.getattr_static(cls, member)
        if spec == "property":
            if not isinstance(static, property):
                problems.append(f"{name}.{member}: a property in cuda.core, not in cubind")
            continue
        if isinstance(static, property):
            problems.append(f"{name}.{member}: a method in cuda.core, a property in cubind")
            continue
        args, is_static = spec
        expected = _params(args, drop_first=not is_static)
        got = _our_params(getattr(cls, member), drop_self=True)
        if got != expected:
            problems.append(f"{name}.{member}: cubind {got} != cuda.core {expected}")
    public = {m for m in dir(cls) if not m.startswith("_")}
    extra = public - set(STUB_CLASSES[name]) - {"max_links"}
    if extra:
        problems.append(f"{name} has members cuda.core does not: {sorted(extra)}")
    assert not problems, "\n".join(problems)


def test_nvlink_info_max_links_is_on_the_class():
    assert "max_links" in vars(type(ours.NvlinkInfo))


def test_typing_enums_agree():
    import cuda.core.system.typing as their_typing

    for name in their_typing.__all__:
        mine, their = getattr(ours.typing, name), getattr(their_typing, name)
        if name == "FieldId":
            # cubind.bindings.nvml's FieldId, from the nvml.h cubind is generated from: every
            # id NVIDIA's has, by the same names (aliases included), and the newer ids alone besides.
            mine_items = {n: int(v) for n, v in mine.__members__.items()}
            their_items = {n: int(v) for n, v in their.__members__.items()}
            assert their_items.items() <= mine_items.items()
            extra = {n: v for n, v in mine_items.items() if n not in their_items}
            assert extra and not set(extra.values()) & set(their_items.values()), extra
            continue
        assert [(m.name, m.value) for m in mine] == [(m.name, m.value) for m in their], name
    assert set(their_typing.__all__) - {"FieldId"} <= set(ours.typing.__all__)
    assert set(ours.typing.__all__) - set(their_typing.__all__) <= {"DeviceArch", "FieldId"}


def test_the_same_exception_classes():
    names = _stub_all(STUBS["exceptions"])
    assert sorted(names) == sorted(ours.exceptions.__all__)
    for name in names:
        assert issubclass(getattr(ours, name), ours.NvmlError)


# --- behaviour over the same scripted NVML -----------------------------------------

COMPATIBLE = getattr(theirs, "CUDA_BINDINGS_NVML_IS_COMPATIBLE", False)
needs_their_device = pytest.mark.skipif(
    not COMPATIBLE, reason="cuda.core.system.Device needs cuda.bindings >= 13.1.2 (its nvml) beside cuda.core")


def _nvml_loadable():
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


# cuda.core builds these NVML errors itself (NotSupportedError for the MIG ids of
# a process of a GPU that is no MIG device), and an NVML error asks the library
# for its text: they are compared where an NVML (the driver's, or a stand-in)
# can be loaded.
NEEDS_NVML_TEXT = {"processes instance id", "processes compute instance id"}


@pytest.fixture
def both(monkeypatch):
    from cuda.bindings import nvml as their_nvml
    from cuda.core.system import _device as their_device

    monkeypatch.setattr(our_context, "_state", our_context.UNINITIALIZED)
    mine = _fake_nvml.install(monkeypatch, "cubind.core.system", our_nvml)
    their = _fake_nvml.install(monkeypatch, their_device.__name__.rsplit(".", 1)[0], their_nvml)
    return {"ours": (ours, mine), "theirs": (theirs, their)}


def _plain(value):
    """A value both packages' results can be compared as."""
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if hasattr(value, "_handle"):
        return ("Device", int(value._handle))
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value


def _outcome(call, package):
    try:
        return ("value", _plain(call(package)))
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return ("raises", type(error).__name__)


D0 = lambda s: s.Device(index=0)  # noqa: E731
D1 = lambda s: s.Device(index=1)  # noqa: E731

# Field ids: NVML_FI_DEV_NVLINK_LINK_COUNT (91), NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 (84),
# NVML_FI_DEV_POWER_INSTANT (186).
CALLS = {
    "get_num_devices": lambda s: s.get_num_devices(),
    "kernel_mode_version": lambda s: s.get_kernel_mode_driver_version(),
    "user_mode_version": lambda s: s.get_user_mode_driver_version(),
    "nvml_version": lambda s: s.get_nvml_version(),
    "driver_branch": lambda s: s.get_driver_branch(),
    "process_name": lambda s: s.get_process_name(12),
    "process_name str": lambda s: s.get_process_name("12"),
    "process_name negative": lambda s: s.get_process_name(-1),
    "Device()": lambda s: s.Device(),
    "Device(two)": lambda s: s.Device(index=0, uuid="GPU-x"),
    "Device(index str)": lambda s: s.Device(index="0"),
    "Device(index -1)": lambda s: s.Device(index=-1),
    "Device(index 9)": lambda s: s.Device(index=9),
    "Device(positional)": lambda s: s.Device(0),
    "Device(uuid)": lambda s: s.Device(uuid=_fake_nvml.UUIDS[1]),
    "Device(uuid bytes)": lambda s: s.Device(uuid=_fake_nvml.UUIDS[1].encode()),
    "Device(uuid unknown)": lambda s: s.Device(uuid="GPU-0"),
    "Device(pci)": lambda s: s.Device(pci_bus_id=_fake_nvml.BUS_IDS[1]),
    "Device(uuid int)": lambda s: s.Device(uuid=5),
    "get_device_count": lambda s: s.Device.get_device_count(),
    "get_all_devices": lambda s: list(s.Device.get_all_devices()),
    "with_cpu_affinity": lambda s: list(s.Device.get_all_devices_with_cpu_affinity(40)),
    "with_cpu_affinity -1": lambda s: list(s.Device.get_all_devices_with_cpu_affinity(-1)),
    "p2p": lambda s: s.get_p2p_status(D0(s), D1(s), "read"),
    "p2p nvlink": lambda s: s.get_p2p_status(D0(s), D1(s), s.typing.GpuP2PCapsIndex.NVLINK),
    "p2p bad index": lambda s: s.get_p2p_status(D0(s), D1(s), "peer"),
    "p2p unhashable index": lambda s: s.get_p2p_status(D0(s), D1(s), ["read"]),
    "p2p int device": lambda s: s.get_p2p_status(D0(s), 1, "read"),
    "topology": lambda s: s.get_topology_common_ancestor(D0(s), D1(s)),
    "topology same": lambda s: s.get_topology_common_ancestor(D0(s), D0(s)),
    "topology str device": lambda s: s.get_topology_common_ancestor("0", D1(s)),
    "nearest": lambda s: list(D0(s).get_topology_nearest_gpus("system")),
    "nearest bad": lambda s: list(D0(s).get_topology_nearest_gpus("rack")),
    "register system events": lambda s: s.register_events(["bind"]).wait(5, 2)[0].event_type,
    "system event device": lambda s: s.register_events("bind").wait()[0].device,
    "system event gpu_id": lambda s: s.register_events("bind").wait()[0].gpu_id,
    "system events len": lambda s: len(s.register_events("unbind").wait()),
    "register system events bad": lambda s: s.register_events("rebind"),
    "register system events tuple": lambda s: s.register_events(("bind",)),
}

DEVICE_MEMBERS = [
    "index", "uuid", "uuid_without_prefix", "pci_bus_id", "numa_node_id", "arch", "name", "brand", "serial",
    "module_id", "minor_number", "is_c2c_enabled", "is_persistence_mode_enabled", "cuda_compute_capability",
    "addressing_mode", "is_auto_boosted_clocks_enabled", "current_clock_event_reasons",
    "supported_clock_event_reasons", "is_display_connected", "is_display_active", "num_fans", "performance_state",
    "supported_pstates",
]
for _member in DEVICE_MEMBERS:
    CALLS[f"Device.{_member}"] = (lambda m: lambda s: getattr(D0(s), m))(_member)

CALLS.update({
    "performance_state unknown": lambda s: D1(s).performance_state,
    "memory_info": lambda s: (lambda m: (m.total, m.free, m.used, m.reserved))(D0(s).memory_info),
    "bar1_memory_info": lambda s: (lambda m: (m.total, m.free, m.used))(D0(s).bar1_memory_info),
    "utilization": lambda s: (lambda u: (u.gpu, u.memory))(D0(s).utilization),
    "pci_info": lambda s: (lambda p: (p.bus, p.bus_id, p.device, p.domain, p.vendor_id, p.device_id, p.subsystem_id,
                                      p.base_class, p.sub_class, p.link_generation, p.max_link_generation,
                                      p.max_link_width, p.current_link_generation, p.current_link_width,
                                      p.rx_throughput, p.tx_throughput, p.replay_counter))(D0(s).pci_info),
    "pci_info of a MIG device": lambda s: D0(s).mig.get_device_by_index(0).pci_info,
    "attributes": lambda s: (lambda a: (a.multiprocessor_count, a.shared_copy_engine_count, a.shared_decoder_count,
                                        a.shared_encoder_count, a.shared_jpeg_count, a.shared_ofa_count,
                                        a.gpu_instance_slice_count, a.compute_instance_slice_count,
                                        a.memory_size_mb))(D0(s).attributes),
    "cooler": lambda s: (lambda c: (c.signal_type, c.target))(D0(s).cooler),
    "clock current": lambda s: D0(s).get_clock("sm").get_current_mhz(),
    "clock boost id": lambda s: D0(s).get_clock(s.typing.ClockType.GRAPHICS).get_current_mhz("customer_boost_max"),
    "clock bad id": lambda s: D0(s).get_clock("sm").get_current_mhz("target"),
    "clock bad type": lambda s: D0(s).get_clock("shader"),
    "clock unhashable type": lambda s: D0(s).get_clock(["sm"]),
    "clock max": lambda s: D0(s).get_clock("memory").get_max_mhz(),
    "clock boost max": lambda s: D0(s).get_clock("video").get_max_customer_boost_mhz(),
    "clock pstate range": lambda s: D0(s).get_clock("sm").get_min_max_clock_of_pstate_mhz(2),
    "clock pstate 16": lambda s: D0(s).get_clock("sm").get_min_max_clock_of_pstate_mhz(16),
    "clock pstate -1": lambda s: D0(s).get_clock("sm").get_offsets(-1),
    "clock offsets": lambda s: (lambda o: (o.clock_offset_mhz, o.min_offset_mhz, o.max_offset_mhz))(
        D0(s).get_clock("sm").get_offsets(3)),
    "fan": lambda s: (lambda f: (f.speed, f.speed_rpm, f.target_speed, f.min_max_speed, f.control_policy))(
        D0(s).get_fan(1)),
    "fan default": lambda s: D0(s).get_fan().control_policy,
    "fan out of range": lambda s: D0(s).get_fan(2),
    "fan negative": lambda s: D0(s).get_fan(-1),
    "fan set": lambda s: setattr(D0(s).get_fan(0), "speed", 50),
    "fan set default": lambda s: D0(s).get_fan(0).set_default_speed(),
    "affinity memory": lambda s: D0(s).get_memory_affinity(),
    "affinity cpu socket": lambda s: D0(s).get_cpu_affinity("socket"),
    "affinity bad scope": lambda s: D0(s).get_cpu_affinity("numa"),
    "affinity set": lambda s: D0(s).set_cpu_affinity(),
    "affinity clear": lambda s: D0(s).clear_cpu_affinity(),
    "events wait": lambda s: (lambda e: (e.event_type, e.device, e.event_data, e.gpu_instance_id,
                                         e.compute_instance_id))(D0(s).register_events(["xid_critical_error"]).wait(3)),
    "events str": lambda s: D0(s).register_events("pstate").wait().event_type,
    "events bad": lambda s: D0(s).register_events(["pstate", "thermal"]),
    "events tuple": lambda s: D0(s).register_events(("pstate",)),
    "events int": lambda s: D0(s).register_events(8),
    "supported events": lambda s: D0(s).get_supported_event_types(),
    "field values": lambda s: D0(s).get_field_values(
        [91, (84, 2)]).get_all_values(),
    "field value members": lambda s: (lambda f: (f.field_id, f.scope_id, f.timestamp, f.latency_usec, f.value))(
        D0(s).get_field_values([(84, 2)])[0]),
    "field values len": lambda s: len(D0(s).get_field_values([91] * 3)),
    "field values empty": lambda s: len(D0(s).get_field_values([])),
    "field value error": lambda s: D0(s).get_field_values([186])[0].value,
    "field values validate": lambda s: D0(s).get_field_values(
        [91, 186]).validate(),
    "field values clear": lambda s: D0(s).clear_field_values([91]),
    "inforom": lambda s: (lambda i: (i.get_version("ecc"), i.image_version, i.configuration_checksum,
                                     i.bbx_flush_time, i.board_part_number, i.validate()))(D0(s).inforom),
    "inforom bad": lambda s: D0(s).inforom.get_version("pwr"),
    "mig": lambda s: (lambda m: (m.is_mig_device, m.mode, m.pending_mode, m.device_count, list(m.get_all_devices())))(
        D0(s).mig),
    "mig parent": lambda s: D0(s).mig.get_device_by_index(0).mig.parent,
    "mig set": lambda s: setattr(D0(s).mig, "mode", True),
    "persistence set": lambda s: setattr(D0(s), "is_persistence_mode_enabled", False),
    "nvlink count": lambda s: D0(s).get_nvlink_count(),
    "nvlinks": lambda s: [(n.version, n.state) for n in D0(s).get_nvlinks()],
    "nvlink out of range": lambda s: D0(s).get_nvlink(4),
    "nvlink negative": lambda s: D0(s).get_nvlink(-1),
    "dynamic pstates": lambda s: (lambda i: [(u.is_present, u.percentage, u.inc_threshold, u.dec_threshold)
                                             for u in (i[k] for k in range(len(i)))])(D0(s).dynamic_pstates_info),
    "dynamic pstates out of range": lambda s: D0(s).dynamic_pstates_info[99],
    "processes": lambda s: [(p.pid, p.used_gpu_memory) for p in D0(s).compute_running_processes],
    "processes instance id": lambda s: D0(s).compute_running_processes[0].gpu_instance_id,
    "processes compute instance id": lambda s: D0(s).compute_running_processes[1].compute_instance_id,
    "mig processes": lambda s: [(p.gpu_instance_id, p.compute_instance_id)
                                for p in D0(s).mig.get_device_by_index(0).compute_running_processes],
    "repair": lambda s: (lambda r: (r.channel_repair_pending, r.tpc_repair_pending))(D0(s).repair_status),
    "temperature": lambda s: (lambda t: (t.get_sensor(), t.margin, t.get_threshold("acoustic_max")))(
        D0(s).temperature),
    "temperature bad threshold": lambda s: D0(s).temperature.get_threshold("hot"),
    "thermal settings": lambda s: (lambda ts: (len(ts), [(x.controller, x.default_min_temp, x.default_max_temp,
                                                          x.current_temp, x.target)
                                                         for x in (ts[k] for k in range(len(ts)))]))(
        D0(s).temperature.get_thermal_settings("all")),
    "thermal settings out of range": lambda s: D0(s).temperature.get_thermal_settings("gpu")[2],
    "thermal settings bad": lambda s: D0(s).temperature.get_thermal_settings("cpu"),
})


@needs_their_device
@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_same_behaviour(both, name):
    import warnings

    if name in NEEDS_NVML_TEXT and not _nvml_loadable():
        pytest.skip("cuda.core asks NVML for the text of the error it raises; no NVML here")

    call = CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = _outcome(call, both["theirs"][0])
        got = _outcome(call, both["ours"][0])
    assert got == expected


@needs_their_device
def test_the_same_nvml_calls(both):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for call in CALLS.values():
            _outcome(call, both["theirs"][0])
            _outcome(call, both["ours"][0])
    mine, their = both["ours"][1], both["theirs"][1]
    assert mine.calls == their.calls
    assert (mine.fan_speed_set, mine.persistence_set, mine.mig_set, mine.cleared) == (
        their.fan_speed_set, their.persistence_set, their.mig_set, their.cleared)


@needs_their_device
def test_the_same_deprecation_warnings(both):
    for package in (both["theirs"][0], both["ours"][0]):
        with pytest.warns(DeprecationWarning):
            package.Device(index=0).temperature.get_threshold("slowdown")
        with pytest.warns(DeprecationWarning):
            package.NvlinkInfo.max_links

"""A scripted NVML for CPU tests of cubind.core.system (and, side by side, of
cuda.core.system): a module-like object that answers every query the system
subpackage makes with fixed values of two GPUs, and takes everything else
(enums, constants, error classes, check_status) from the real bindings module
it wraps. Installed with install(), it replaces the ``nvml`` global of each
module of the subpackage, so no library is loaded and every member can be
driven and its answer checked.

The answers are what a two-GPU H100 machine reports, chosen so that each
conversion shows: bit masks with several bits, enum values that map to
distinct members, a P-state list padded with NVML's PSTATE_UNKNOWN.
"""

import ctypes
import types

from cubind.core.system import _nvml_values as V

HANDLES = (0x1000, 0x2000)
UUIDS = ("GPU-11111111-2222-3333-4444-555555555555", "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
BUS_IDS = ("00000000:3B:00.0", "00000000:86:00.0")
MIG_HANDLE = 0x3000


class _ThermalSensor(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in ("controller", "min", "max", "current", "target")]


class _Utilization(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint) for n in ("present", "percentage", "inc", "dec")]


class _Array(list):
    """Records as the bindings' struct arrays give them: an item is a
    one-element array, and a field name answers with the field of a
    one-element array, or the list of the fields of a longer one."""

    def __getitem__(self, index):
        item = list.__getitem__(self, index)
        return _Array(item) if isinstance(index, slice) else _Array([item])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        values = [getattr(list.__getitem__(self, i), name) for i in range(len(self))]
        return values[0] if len(values) == 1 else values


def _field(field_id, scope_id, kind, value, status=0):
    union = types.SimpleNamespace(d_val=[float(value)], ui_val=[int(value)], ul_val=[int(value)],
                                  ull_val=[int(value)], sll_val=[int(value)], si_val=[int(value)],
                                  us_val=[int(value)])
    return types.SimpleNamespace(field_id=field_id, scope_id=scope_id, timestamp=1_700_000_000_000_000,
                                 latency_usec=7, value_type=kind, value=union, nvml_return=status)


class FakeNvml:
    def __init__(self, real):
        self._real = real
        self.calls = []
        self.initialized = 0
        self.freed = []
        self.fan_speed_set = None
        self.persistence_set = None
        self.mig_set = None
        self.cpu_affinity = None
        self.cleared = None
        self.nvlink_count = 4
        self.threshold_arch = V.DEVICE_ARCH["HOPPER"]
        self._keep = []

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _error(self, name, status):
        cls = getattr(self._real, name)
        error = cls.__new__(cls)
        error.args = (status,)
        return error

    @staticmethod
    def _unsigned(value):
        # The bindings' typed parameters: an int, not negative.
        if not isinstance(value, int):
            raise TypeError(f"an integer is required, got {type(value).__name__}")
        if value < 0:
            raise OverflowError("can't convert negative value to unsigned int")
        return value

    @staticmethod
    def _str(value):
        if not isinstance(value, str):
            raise TypeError(f"expected str, got {type(value).__name__}")
        return value

    def _device(self, handle):
        if handle not in HANDLES and handle != MIG_HANDLE:
            raise self._error("InvalidArgumentError", int(self._real.Return.ERROR_INVALID_ARGUMENT))
        return HANDLES.index(handle) if handle in HANDLES else 0

    def check_status(self, status):
        status = int(status)
        if status:
            names = {int(self._real.Return.ERROR_NOT_SUPPORTED): "NotSupportedError",
                     int(self._real.Return.ERROR_NO_PERMISSION): "NoPermissionError",
                     int(self._real.Return.ERROR_UNINITIALIZED): "UninitializedError",
                     int(self._real.Return.ERROR_GPU_NOT_FOUND): "GpuNotFoundError"}
            raise self._error(names.get(status, "UnknownError"), status)
        return 0

    # system
    def init_v2(self):
        self.initialized += 1

    def system_get_cuda_driver_version_v2(self):
        return 13020

    system_get_cuda_driver_version = system_get_cuda_driver_version_v2

    def system_get_driver_version(self):
        return "580.65.06"

    def system_get_nvml_version(self):
        return "13.580.65.06"

    def system_get_driver_branch(self):
        return "r580_00"

    def system_get_process_name(self, pid):
        self._unsigned(pid)
        return f"python-{pid}"

    def device_get_count_v2(self):
        return len(HANDLES)

    def system_get_topology_gpu_set(self, cpu):
        self._unsigned(cpu)
        return [HANDLES[0]] if cpu < 32 else [HANDLES[1]]

    # handles
    def device_get_handle_by_index_v2(self, index):
        self._unsigned(index)
        if index >= len(HANDLES):
            raise self._error("InvalidArgumentError", int(self._real.Return.ERROR_INVALID_ARGUMENT))
        return HANDLES[index]

    def device_get_handle_by_uuid(self, uuid):
        self._str(uuid)
        for i, known in enumerate(UUIDS):
            if uuid in (known, known[4:]):
                return HANDLES[i]
        raise self._error("NotFoundError", int(self._real.Return.ERROR_NOT_FOUND))

    def device_get_handle_by_pci_bus_id_v2(self, bus_id):
        self._str(bus_id)
        for i, known in enumerate(BUS_IDS):
            if bus_id.upper() in (known, known[4:]):
                return HANDLES[i]
        raise self._error("NotFoundError", int(self._real.Return.ERROR_NOT_FOUND))

    # identity
    def device_get_index(self, h):
        return self._device(h)

    def device_get_uuid(self, h):
        return UUIDS[self._device(h)]

    def device_get_pci_info_ext(self, h):
        if h == MIG_HANDLE:
            raise self._error("InvalidArgumentError", int(self._real.Return.ERROR_INVALID_ARGUMENT))
        i = self._device(h)
        return types.SimpleNamespace(bus=(0x3B, 0x86)[i], bus_id=BUS_IDS[i], device_=0, domain=0,
                                     pci_device_id=0x233010DE, pci_sub_system_id=0x16C110DE,
                                     base_class=3, sub_class=2)

    def device_get_numa_node_id(self, h):
        return self._device(h)

    def device_get_architecture(self, h):
        self._device(h)
        return self.threshold_arch

    def device_get_name(self, h):
        self._device(h)
        return "NVIDIA H100 80GB HBM3"

    def device_get_brand(self, h):
        self._device(h)
        return 14

    def device_get_serial(self, h):
        return f"16523220{self._device(h):05d}"

    def device_get_module_id(self, h):
        return self._device(h) + 1

    def device_get_minor_number(self, h):
        return self._device(h)

    def device_get_c2c_mode_info_v(self, h):
        self._device(h)
        return types.SimpleNamespace(is_c2c_enabled=1)

    def device_get_persistence_mode(self, h):
        self._device(h)
        return V.FEATURE_ENABLED

    def device_set_persistence_mode(self, h, mode):
        self.persistence_set = (h, int(mode))

    def device_get_cuda_compute_capability(self, h):
        self._device(h)
        return (9, 0)

    def device_get_addressing_mode(self, h):
        self._device(h)
        return types.SimpleNamespace(value=V.ADDRESSING_MODE_HMM)

    # MIG
    def device_is_mig_device_handle(self, h):
        return 1 if h == MIG_HANDLE else 0

    def device_get_mig_mode(self, h):
        self._device(h)
        return (V.FEATURE_DISABLED, V.FEATURE_ENABLED)

    def device_set_mig_mode(self, h, mode):
        self.mig_set = (h, int(mode))
        return 0

    def device_get_max_mig_device_count(self, h):
        self._device(h)
        return 2

    def device_get_device_handle_from_mig_device_handle(self, h):
        return HANDLES[0]

    def device_get_mig_device_handle_by_index(self, h, index):
        self._unsigned(index)
        if index == 0:
            return MIG_HANDLE
        raise self._error("NotFoundError", int(self._real.Return.ERROR_NOT_FOUND))

    # affinity
    def device_get_memory_affinity(self, h, size, scope):
        self.calls.append(("memory_affinity", size, int(scope)))
        return [0b101] + [0] * (size - 1)

    def device_get_cpu_affinity_within_scope(self, h, size, scope):
        self.calls.append(("cpu_affinity", size, int(scope)))
        return [1 << 63] + [0b11] * (size - 1)

    def device_set_cpu_affinity(self, h):
        self.cpu_affinity = h

    def device_clear_cpu_affinity(self, h):
        self.cpu_affinity = None

    # clocks
    def device_get_clock(self, h, clock_type, clock_id):
        return 1000 + 10 * int(clock_type) + int(clock_id)

    def device_get_max_clock_info(self, h, clock_type):
        return 1980 + int(clock_type)

    def device_get_max_customer_boost_clock(self, h, clock_type):
        return 1755 + int(clock_type)

    def device_get_min_max_clock_of_p_state(self, h, clock_type, pstate):
        return (100 + int(pstate), 2000 - int(pstate))

    def device_get_clock_offsets(self, h, clock_type, pstate):
        return types.SimpleNamespace(clock_offset_m_hz=int(pstate), max_clock_offset_m_hz=200,
                                     min_clock_offset_m_hz=-200)

    def device_get_auto_boosted_clocks_enabled(self, h):
        return (V.FEATURE_ENABLED, V.FEATURE_DISABLED)

    def device_get_current_clocks_event_reasons(self, h):
        return V.CLOCKS_EVENT_REASONS["GPU_IDLE"] | V.CLOCKS_EVENT_REASONS["SW_POWER_CAP"]

    def device_get_supported_clocks_event_reasons(self, h):
        return 0x1FF

    def device_get_cooler_info(self, h):
        return types.SimpleNamespace(signal_type=V.COOLER_SIGNAL_VARIABLE,
                                     target=V.COOLER_TARGET_GPU
                                     | V.COOLER_TARGET_MEMORY)

    def device_get_attributes_v2(self, h):
        return types.SimpleNamespace(multiprocessor_count=132, shared_copy_engine_count=1, shared_decoder_count=7,
                                     shared_encoder_count=0, shared_jpeg_count=7, shared_ofa_count=1,
                                     gpu_instance_slice_count=7, compute_instance_slice_count=7,
                                     memory_size_mb=81559)

    def device_get_display_mode(self, h):
        return V.FEATURE_DISABLED

    def device_get_display_active(self, h):
        return V.FEATURE_ENABLED

    # events
    def event_set_create(self):
        return 0xE0

    def device_register_events(self, h, mask, event_set):
        self.calls.append(("register", h, int(mask), event_set))

    def event_set_wait_v2(self, event_set, timeout):
        self.calls.append(("wait", event_set, timeout))
        return types.SimpleNamespace(device_=HANDLES[1], device=HANDLES[1],
                                     event_type=V.EVENT_XID_CRITICAL_ERROR, event_data=79,
                                     gpu_instance_id=0xFFFFFFFF, compute_instance_id=0xFFFFFFFF)

    def event_set_free(self, event_set):
        self.freed.append(event_set)

    def device_get_supported_event_types(self, h):
        return V.EVENT_XID_CRITICAL_ERROR | V.EVENT_PSTATE

    def system_event_set_create(self):
        return 0xE1

    def system_register_events(self, mask, event_set):
        self.calls.append(("system_register", int(mask), event_set))

    def system_event_set_wait(self, event_set, timeout, size):
        self.calls.append(("system_wait", event_set, timeout, size))
        return _Array([types.SimpleNamespace(event_type=V.SYSTEM_EVENT_GPU_DRIVER_BIND,
                                             gpu_id=0x8600)])

    def system_event_set_free(self, event_set):
        self.freed.append(event_set)

    # fans
    def device_get_num_fans(self, h):
        return 2

    def device_get_fan_speed_v2(self, h, fan):
        return 30 + fan

    def device_set_fan_speed_v2(self, h, fan, speed):
        self.fan_speed_set = (h, fan, speed)

    def device_get_fan_speed_rpm(self, h, fan):
        return 1200 + fan

    def device_get_target_fan_speed(self, h, fan):
        return 40 + fan

    def device_get_min_max_fan_speed(self, h):
        return (20, 100)

    def device_get_fan_control_policy_v2(self, h, fan):
        return V.FAN_POLICY_MANUAL if fan else V.FAN_POLICY_TEMPERATURE_CONTINUOUS_SW

    def device_set_default_fan_speed_v2(self, h, fan):
        self.fan_speed_set = (h, fan, "default")

    # field values
    def FieldValue(self, n):
        return _Array()

    def device_get_field_values(self, h, ids):
        self.calls.append(("field_values", list(ids)))
        out = _Array()
        for item in ids:
            field, scope = item if isinstance(item, tuple) else (item, 0)
            if int(field) == V.FI_DEV_NVLINK_LINK_COUNT:
                out.append(_field(field, scope, int(self._real.ValueType.UNSIGNED_INT), self.nvlink_count))
            elif int(field) == 186:
                out.append(_field(field, scope, int(self._real.ValueType.UNSIGNED_INT), 0,
                                  status=int(self._real.Return.ERROR_NOT_SUPPORTED)))
            else:
                out.append(_field(field, scope, int(self._real.ValueType.DOUBLE), 1.5))
        return out

    def device_clear_field_values(self, h, ids):
        self.cleared = list(ids)

    # InfoROM
    def device_get_inforom_version(self, h, obj):
        return f"G001.0000.{int(obj):02d}.01"

    def device_get_inforom_image_version(self, h):
        return "G520.0200.00.05"

    def device_get_inforom_configuration_checksum(self, h):
        return 0xDEADBEEF

    def device_validate_inforom(self, h):
        self.calls.append(("validate_inforom", h))

    def device_get_last_bbx_flush_time(self, h):
        return (1_700_000_000, 250)

    def device_get_board_part_number(self, h):
        return "692-2G520-0200-000"

    # memory
    def device_get_bar1_memory_info(self, h):
        return types.SimpleNamespace(bar1_total=1 << 36, bar1_free=(1 << 36) - (1 << 25), bar1_used=1 << 25)

    def device_get_memory_info_v2(self, h):
        return types.SimpleNamespace(total=85520809984, free=84500000000, used=500000000, reserved=520809984)

    # NVLink
    def device_get_nvlink_version(self, h, link):
        return 6

    def device_get_nvlink_state(self, h, link):
        return V.FEATURE_ENABLED if link % 2 == 0 else V.FEATURE_DISABLED

    # PCI
    def device_get_max_pcie_link_generation(self, h):
        return 5

    def device_get_gpu_max_pcie_link_generation(self, h):
        return 5

    def device_get_max_pcie_link_width(self, h):
        return 16

    def device_get_curr_pcie_link_generation(self, h):
        return 4

    def device_get_curr_pcie_link_width(self, h):
        return 8

    def device_get_pcie_throughput(self, h, counter):
        return 111 if int(counter) == V.PCIE_UTIL_TX_BYTES else 222

    def device_get_pcie_replay_counter(self, h):
        return 3

    # performance
    def device_get_performance_state(self, h):
        return 0 if h == HANDLES[0] else V.PSTATE_UNKNOWN

    def device_get_dynamic_pstates_info(self, h):
        array = (_Utilization * int(self._real.MAX_GPU_UTILIZATIONS))()
        for i, item in enumerate(array):
            item.present, item.percentage, item.inc, item.dec = i % 2, 10 * i, 60 + i, 30 + i
        self._keep.append(array)
        return types.SimpleNamespace(flags_=0, utilization=types.SimpleNamespace(ptr=ctypes.addressof(array)),
                                     keep=array)

    def device_get_supported_performance_states(self, h):
        unknown = V.PSTATE_UNKNOWN
        return [0, 2, 8] + [unknown] * 13

    def device_get_compute_running_processes_v3(self, h):
        return _Array([types.SimpleNamespace(pid=4242, used_gpu_memory=1 << 30, gpu_instance_id=0xFFFFFFFF,
                                             compute_instance_id=0xFFFFFFFF),
                       types.SimpleNamespace(pid=4343, used_gpu_memory=1 << 29, gpu_instance_id=1,
                                             compute_instance_id=0)])

    def device_get_repair_status(self, h):
        return types.SimpleNamespace(b_channel_repair_pending=0, b_tpc_repair_pending=1)

    # temperature
    def device_get_temperature_v(self, h, sensor):
        return 34 + self._device(h)

    def device_get_temperature_threshold(self, h, threshold):
        return 80 + int(threshold)

    def device_get_margin_temperature(self, h):
        return 51

    def device_get_thermal_settings(self, h, index):
        sensors = (_ThermalSensor * 3)()
        sensors[0].controller, sensors[0].min, sensors[0].max, sensors[0].current = (
            1, 5, 90, 36)
        sensors[0].target = 1
        sensors[1].controller, sensors[1].target = 9999, 9999
        self._keep.append(sensors)
        return types.SimpleNamespace(count=2, sensor=types.SimpleNamespace(ptr=ctypes.addressof(sensors)),
                                     keep=sensors)

    # topology
    def device_get_topology_nearest_gpus(self, h, level):
        return [HANDLES[1]] if h == HANDLES[0] else [HANDLES[0]]

    def device_get_topology_common_ancestor(self, h1, h2):
        return 50 if h1 != h2 else 0

    def device_get_p2p_status(self, h1, h2, index):
        self.calls.append(("p2p", h1, h2, int(index)))
        if int(index) == 2:
            return 5
        return 0

    def device_get_utilization_rates(self, h):
        return types.SimpleNamespace(gpu=87, memory=42)


def install(monkeypatch, package, real):
    """Put a FakeNvml over ``real`` in place of ``nvml`` in every module of
    ``package`` (a system subpackage, already imported) and reset its NVML
    initialization state; returns the fake."""
    import sys

    fake = FakeNvml(real)
    for name, module in list(sys.modules.items()):
        if module is not None and (name == package or name.startswith(package + ".")):
            if getattr(module, "nvml", None) is real:
                monkeypatch.setattr(module, "nvml", fake)
    return fake

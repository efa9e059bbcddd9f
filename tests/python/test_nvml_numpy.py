"""cubind.bindings.nvml's NumPy layer, without a GPU: a <name>_dtype per struct
class equal to cuda.bindings.nvml's (13.5, from .cuda-bindings-new), ptr,
from_ptr, from_data and from_buffer, arrays of structs (FieldValue(3)), the
errors of bad input. (Without NumPy: test_nvml.py.)
"""
import pytest

np = pytest.importorskip("numpy")
from cubind.bindings import nvml  # noqa: E402


def reference_nvml():
    try:
        from cuda.bindings import nvml as theirs
    except ImportError:
        pytest.skip("no cuda.bindings.nvml (cuda-bindings 13.5 in .cuda-bindings-new; scripts/setup.sh)")
    return theirs


def public_dtypes(module):
    return sorted(n for n in dir(module) if n.endswith("_dtype") and not n.startswith("_"))


def struct_classes():
    out = []
    for name in dir(nvml):
        obj = getattr(nvml, name)
        if isinstance(obj, type) and hasattr(obj, "from_data"):
            out.append(obj)
    return out


def test_every_dtype_equals_the_references():
    theirs = reference_nvml()
    compared, different, missing = 0, [], []
    for name in public_dtypes(theirs):
        if name not in dir(nvml):
            missing.append(name)
            continue
        ours, ref = getattr(nvml, name), getattr(theirs, name)
        compared += 1
        if ours != ref or ours.itemsize != ref.itemsize or ours.names != ref.names:
            different.append(f"{name}:\n  ours   {ours}\n  theirs {ref}")
    assert not different, "\n".join(different)
    # The rest are classes cubind names otherwise (PciInfoExt for PciInfoExt_v1).
    assert compared >= 115 and len(missing) <= 30, (compared, missing)


def test_each_class_has_its_dtype_of_its_size():
    classes = struct_classes()
    assert len(classes) > 150
    for cls in classes:
        dtype_name = cls.from_data.__doc__.split("of dtype ")[1].split()[0]
        dtype = getattr(nvml, dtype_name.rstrip(";,")) if not dtype_name.startswith("_") else None
        if dtype is None:
            continue
        obj = cls.from_buffer(bytearray(dtype.itemsize))
        assert obj.ptr != 0
        with pytest.raises(ValueError, match=f"{dtype.itemsize} bytes"):
            cls.from_buffer(bytearray(dtype.itemsize + 1))


def test_unions_overlap_and_nested_structs_nest():
    assert set(nvml.value_dtype.fields[n][1] for n in nvml.value_dtype.names) == {0}
    assert nvml.value_dtype.itemsize == 8
    assert nvml.field_value_dtype.fields["value"][0] == nvml.value_dtype
    assert nvml.pci_info_dtype.fields["bus_id"][0].shape == (32,)
    assert nvml.excluded_device_info_dtype.fields["pci_info"][0] == nvml.pci_info_dtype


def test_dtype_names_are_listed_and_lazy():
    names = dir(nvml)
    assert "pci_info_dtype" in names and "ba_r1memory_dtype" in names and "field_value_dtype" in names
    assert nvml.pci_info_dtype is nvml.pci_info_dtype  # built once
    with pytest.raises(AttributeError):
        nvml.no_such_dtype


def test_from_data_views_the_array():
    data = np.zeros(1, nvml.pci_info_dtype)
    p = nvml.PciInfo.from_data(data)
    assert p.ptr == data.ctypes.data and int(p) == p.ptr
    p.domain = 7
    p.bus_id = "00000000:1A:00.0"
    assert data["domain"][0] == 7
    data["bus"][0] = 3
    assert p.bus == 3 and p.bus_id == "00000000:1A:00.0"
    # A 0-d array holds one struct too.
    assert nvml.PciInfo.from_data(np.zeros((), nvml.pci_info_dtype)).domain == 0
    del data
    assert p.domain == 7  # the struct keeps the array alive


def test_from_data_refuses_other_arrays():
    with pytest.raises(ValueError, match="pci_info_dtype.*got dtype"):
        nvml.PciInfo.from_data(np.zeros(1, nvml.memory_dtype))
    with pytest.raises(ValueError, match="pci_info_dtype"):
        nvml.PciInfo.from_data(np.zeros(68, np.uint8))
    with pytest.raises(ValueError, match="one element"):
        nvml.PciInfo.from_data(np.zeros(2, nvml.pci_info_dtype))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        nvml.PciInfo.from_data(b"\0" * 68)
    with pytest.raises(ValueError, match="contiguous"):
        nvml.FieldValue.from_data(np.zeros(4, nvml.field_value_dtype)[::2])
    frozen = np.zeros(1, nvml.memory_dtype)
    frozen.flags.writeable = False
    m = nvml.Memory.from_data(frozen)
    with pytest.raises(ValueError, match="read-only"):
        m.total = 1


def test_from_ptr_views_with_an_owner_and_copies_without():
    p = nvml.PciInfo()
    p.domain = 7
    view = nvml.PciInfo.from_ptr(p.ptr, owner=p)
    view.domain = 9
    assert p.domain == 9
    copy = nvml.PciInfo.from_ptr(p.ptr)
    copy.domain = 11
    assert p.domain == 9 and copy.domain == 11 and copy.ptr != p.ptr
    frozen = nvml.PciInfo.from_ptr(p.ptr, readonly=True, owner=p)
    assert frozen.domain == 9
    with pytest.raises(ValueError, match="PciInfo.domain.*read-only"):
        frozen.domain = 1
    assert p.domain == 9


@pytest.mark.parametrize("bad, exc, text", [
    (0, ValueError, "0 \\(NULL\\)"),
    (-1, ValueError, "not an address"),
    (2**64, ValueError, "not an address"),
    ("x", TypeError, "int address, got str"),
    (None, TypeError, "got NoneType"),
    (1.5, TypeError, "got float"),
    (True, TypeError, "got bool"),
])
def test_from_ptr_refuses_what_is_no_address(bad, exc, text):
    with pytest.raises(exc, match=text):
        nvml.PciInfo.from_ptr(bad)
    with pytest.raises(exc, match=text):
        nvml.FieldValue.from_ptr(bad, 2)


def test_from_buffer_views_writable_memory_and_guards_read_only():
    size = nvml.pci_info_dtype.itemsize
    buffer = bytearray(size)
    p = nvml.PciInfo.from_buffer(buffer)
    p.domain = 5
    offset = nvml.pci_info_dtype.fields["domain"][1]
    assert buffer[offset:offset + 4] == b"\x05\0\0\0"
    frozen = nvml.PciInfo.from_buffer(bytes(buffer))
    assert frozen.domain == 5
    with pytest.raises(ValueError, match="read-only"):
        frozen.domain = 6
    with pytest.raises(ValueError, match=f"must be {size} bytes, got 3"):
        nvml.PciInfo.from_buffer(bytearray(3))
    with pytest.raises(TypeError, match="buffer protocol"):
        nvml.PciInfo.from_buffer(12345)


def test_arrays_of_structs():
    values = nvml.FieldValue(3)
    assert len(values) == 3 and values[1].ptr == values.ptr + nvml.field_value_dtype.itemsize
    ids = values.field_id
    assert isinstance(ids, np.ndarray) and ids.tolist() == [0, 0, 0]
    values.field_id = [91, 1, 5]
    assert values[2].field_id == 5 and values[-1].field_id == 5 and values.field_id.tolist() == [91, 1, 5]
    values[0].scope_id = 2
    assert values.scope_id.tolist() == [2, 0, 0]
    assert values.value["ui_val"].tolist() == [0, 0, 0]
    assert isinstance(values.value, np.recarray) and values.value.ui_val.tolist() == [0, 0, 0]
    values.value.ui_val = [7, 8, 9]  # a view: writes through
    assert values[1].value.ui_val == 8
    tail = values[1:]
    assert len(tail) == 2 and tail.field_id.tolist() == [1, 5]
    with pytest.raises(IndexError, match="out of range for 3 structs"):
        values[3]
    with pytest.raises(IndexError, match="step 1"):
        values[::2]
    # Empty arrays of structs, as in cuda.bindings.nvml: made, sliced, viewed.
    empty = nvml.FieldValue(0)
    assert len(empty) == 0 and empty.ptr != 0 and empty.field_id.tolist() == []
    assert len(values[3:]) == 0 and len(values[2:1]) == 0 and len(nvml.FieldValue.from_ptr(values.ptr, 0)) == 0
    with pytest.raises(IndexError, match="out of range for 0 structs"):
        empty[0]
    with pytest.raises(ValueError, match="size must be 0 or more, got -1"):
        nvml.FieldValue(-1)
    with pytest.raises(TypeError, match="size must be an int"):
        nvml.FieldValue("3")
    single = nvml.FieldValue()
    assert len(single) == 1 and single.field_id == 0 and isinstance(single.field_id, int)
    data = np.zeros(4, nvml.field_value_dtype)
    data["field_id"] = [1, 2, 3, 4]
    view = nvml.FieldValue.from_data(data)
    assert len(view) == 4 and view[3].field_id == 4 and view.ptr == data.ctypes.data
    assert nvml.FieldValue.from_ptr(view.ptr, 4, owner=data).field_id.tolist() == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="multiple of 40 bytes"):
        nvml.FieldValue.from_buffer(bytearray(50))
    assert len(nvml.FieldValue.from_buffer(bytearray(80))) == 2
    with pytest.raises(ValueError):
        values.field_id = "x"


def test_array_classes_match_the_references():
    theirs = reference_nvml()
    arrays = [n for n in dir(theirs) if not n.startswith("_") and isinstance(getattr(theirs, n), type)
              and "__len__" in vars(getattr(theirs, n))]
    ours = [n for n in arrays if hasattr(nvml, n)]
    assert len(ours) >= 35
    kinds = 0
    for name in ours:
        cls = getattr(nvml, name)
        assert len(cls(2)) == 2, name
        assert len(cls()) == 1, name
        # A field over an array of structs: an ndarray, a recarray where the field is a struct.
        mine, ref = cls(2), getattr(theirs, name)(2)
        for attr in dir(ref):
            if attr.startswith("_") or attr in ("ptr", "from_ptr", "from_data", "from_buffer") or not hasattr(mine, attr):
                continue
            assert type(getattr(mine, attr)) is type(getattr(ref, attr)), (name, attr)
            kinds += 1
    assert kinds >= 100, kinds


def test_fields_clear_of_ndarray_attributes():
    assert hasattr(nvml.RowRemapperHistogramValues, "max_") and not hasattr(nvml.RowRemapperHistogramValues, "max")
    assert hasattr(nvml.GridLicenseExpiry, "min_") and hasattr(nvml.GpuDynamicPstatesInfo, "flags_")
    r = nvml.ComputeInstancePlacement(start=1, size_=2)
    assert (r.start, r.size_) == (1, 2)
    # Reserved arrays are in the dtype, not attributes (as in cuda.bindings.nvml).
    assert "reserved" in nvml.accounting_stats_dtype.names and not hasattr(nvml.AccountingStats, "reserved")


def _u32(address, n):
    import ctypes
    return list((ctypes.c_uint32 * n).from_address(address))


def test_counted_pointer_of_numbers_reads_and_writes_as_a_list():
    # vgpuTypeIds is the caller's array of vgpuCount ids: a list, the count no attribute.
    info = nvml.VgpuTypeIdInfo_v1()
    assert info.vgpu_type_ids == [] and not hasattr(info, "vgpu_count")
    info.vgpu_type_ids = np.array([7, 8, 9], dtype=np.uint32)
    assert list(info.vgpu_type_ids) == [7, 8, 9]
    version, count = _u32(info.ptr, 2)
    assert count == 3
    ids = info.vgpu_type_ids
    ids[1] = 80  # writes through to the array the struct points at
    assert list(nvml.VgpuTypeIdInfo_v1.from_ptr(info.ptr).vgpu_type_ids) == [7, 80, 9]
    with pytest.raises(TypeError, match="vgpuTypeIds"):
        info.vgpu_type_ids = 5
    with pytest.raises((TypeError, ValueError, OverflowError), match="vgpuTypeIds"):
        info.vgpu_type_ids = [-1]
    info.vgpu_type_ids = []
    assert info.vgpu_type_ids == [] and _u32(info.ptr, 2)[1] == 0


def test_counted_pointer_of_structs_takes_a_list_or_an_array_of_structs():
    plist = nvml.ProcessDetailList_v1()
    assert plist.proc_array == [] and not hasattr(plist, "num_proc_array_entries")
    procs = nvml.ProcessDetail_v1(2)
    procs[0].pid = 11
    procs[1].pid = 22
    plist.proc_array = procs
    assert [p.pid for p in plist.proc_array] == [11, 22] and _u32(plist.ptr, 3)[2] == 2
    one = nvml.ProcessDetail_v1()
    one.pid = 33
    plist.proc_array = [one, one]
    assert [p.pid for p in plist.proc_array] == [33, 33] and _u32(plist.ptr, 3)[2] == 2


def test_counted_arrays_in_the_struct_read_as_cuda_bindings_reads_them():
    # Numbers and bytes: a NumPy array of the used items that writes through.
    table = nvml.NvlinkGetRemapTableInfo_v1()
    empty = table.fla_remap_tab_addr
    assert isinstance(empty, np.ndarray) and empty.shape == (0,)
    table.fla_remap_tab_addr = [1, 2]
    addrs = table.fla_remap_tab_addr
    assert addrs.dtype == np.uint32 and addrs.tolist() == [1, 2]
    addrs[0] = 9
    assert table.fla_remap_tab_addr.tolist() == [9, 2]
    cert = nvml.ConfComputeGpuCertificate()
    cert.cert_chain = b"abc"
    chain = cert.cert_chain
    assert isinstance(chain, np.ndarray) and chain.dtype == np.uint8 and chain.tobytes() == b"abc"
    # Structs: an array of the item's class over the used structs, a view.
    hierarchy = nvml.BridgeChipHierarchy()
    assert len(hierarchy.bridge_chip_info) == 0
    chips = nvml.BridgeChipInfo(2)
    chips.fw_version = [3, 4]
    hierarchy.bridge_chip_info = chips
    got = hierarchy.bridge_chip_info
    assert isinstance(got, nvml.BridgeChipInfo) and len(got) == 2 and got.fw_version.tolist() == [3, 4]
    got[1].fw_version = 5
    assert hierarchy.bridge_chip_info.fw_version.tolist() == [3, 5]
    hierarchy.bridge_chip_info = [nvml.BridgeChipInfo(fw_version=7)]  # a list of structs too
    assert len(hierarchy.bridge_chip_info) == 1 and hierarchy.bridge_chip_info.fw_version == 7
    # Over several structs: a tuple of each struct's.
    samples = nvml.PerfMetricsSample(2)
    per_struct = samples.controller_data
    assert isinstance(per_struct, tuple) and len(per_struct) == 2
    assert all(isinstance(c, nvml.PerfMetricControllerSample) and len(c) == 0 for c in per_struct)

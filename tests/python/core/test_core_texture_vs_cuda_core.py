"""cubind.core.texture against cuda.core 1.2's cuda.core.texture, side by
side: the same names, members and parameters, the same option fields and
defaults, and, for every kind of input a program may give the parts that
need no GPU (the option dataclasses, ResourceDescriptor over a Buffer made
from an address, the address-mode and format normalization), the same
result or an exception of the same type."""
import dataclasses

import pytest

cc = pytest.importorskip("cuda.core", reason="cuda.core 1.2 is not installed (pip install 'cuda-core==1.2.*')")
np = pytest.importorskip("numpy")

import cuda.core.texture as theirs  # noqa: E402
from cuda.core.texture import _array as their_array  # noqa: E402
from cuda.core.texture import _texture as their_texture  # noqa: E402

import cubind.core as cb  # noqa: E402
import cubind.core.texture as ours  # noqa: E402
from cubind.core.texture import _options as our_options  # noqa: E402
from test_core_vs_cuda_core import _member_problems  # noqa: E402

NAMES = ["MipmappedArray", "MipmappedArrayOptions", "OpaqueArray", "OpaqueArrayOptions", "ResourceDescriptor",
         "SurfaceObject", "TextureObject", "TextureObjectOptions"]


def test_the_subpackages_export_the_same_names():
    assert sorted(theirs.__all__) == sorted(ours.__all__) == sorted(NAMES)
    assert cb.texture is ours and cc.texture is theirs


@pytest.mark.parametrize("name", NAMES)
def test_members_and_parameters_agree(name):
    mine, their = getattr(ours, name), getattr(theirs, name)
    if dataclasses.is_dataclass(their):
        assert dataclasses.is_dataclass(mine)
        assert [(f.name, f.default, f.type) for f in dataclasses.fields(mine)] == [
            (f.name, f.default, f.type) for f in dataclasses.fields(their)]
        return
    problems = _member_problems(name, mine, their, {})
    assert not problems, "\n".join(problems)


def _outcome(make):
    try:
        value = make()
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error)
    return value


def _same(make_theirs, make_ours):
    expected, got = _outcome(make_theirs), _outcome(make_ours)
    if isinstance(expected, type) and issubclass(expected, Exception):
        assert got is expected, f"cuda.core raises {expected.__name__}, cubind gives {got!r}"
    else:
        assert not (isinstance(got, type) and issubclass(got, Exception)), \
            f"cuda.core gives {expected!r}, cubind raises {got.__name__}"
        return expected, got
    return None, None


def _fields(options):
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}


FORMATS = ["float32", "uint8", "int16", "float16", "FLOAT32", "float64", "foo", "f4", ">f4", np.float32, np.int8,
           np.dtype("<u2"), np.dtype(">i2"), np.float64, np.complex64, np.bool_, float, int, None, 5, [1], b"float32",
           "uint32"]
CHANNELS = [1, 2, 4, 3, 0, True, 1.0, "1", np.int32(2), None]
SHAPES = [(4,), (4, 4), (2, 3, 4), [8, 8], 4, None, (), (1, 2, 3, 4), (0,), (4, -1), "abc", (2.5, 3), (True, 3),
          (np.int64(2), 3), ("2", 3), (None, 3), range(1, 4)]


@pytest.mark.parametrize("fmt", FORMATS, ids=repr)
def test_opaque_array_options_formats_agree(fmt):
    expected, got = _same(lambda: theirs.OpaqueArrayOptions(shape=(4,), format=fmt, num_channels=1),
                          lambda: ours.OpaqueArrayOptions(shape=(4,), format=fmt, num_channels=1))
    if expected is not None:
        assert got.format == expected.format and got.format.value == expected.format.value


@pytest.mark.parametrize("channels", CHANNELS, ids=repr)
def test_opaque_array_options_channels_agree(channels):
    expected, got = _same(lambda: theirs.OpaqueArrayOptions(shape=(4,), format="int8", num_channels=channels),
                          lambda: ours.OpaqueArrayOptions(shape=(4,), format="int8", num_channels=channels))
    if expected is not None:
        assert got.num_channels == expected.num_channels


@pytest.mark.parametrize("shape", SHAPES, ids=repr)
def test_array_shapes_agree(shape):
    expected, got = _same(lambda: theirs.OpaqueArrayOptions(shape=shape, format="int8", num_channels=1),
                          lambda: ours.OpaqueArrayOptions(shape=shape, format="int8", num_channels=1))
    if expected is not None:
        assert got.shape == expected.shape
    _same(lambda: theirs.MipmappedArrayOptions(shape=shape, format="int8", num_channels=1, num_levels=1),
          lambda: ours.MipmappedArrayOptions(shape=shape, format="int8", num_channels=1, num_levels=1))


@pytest.mark.parametrize("levels", [1, 3, 10, 0, -1, True, 2.0, 2.7, "2", "x", None, np.int8(2)], ids=repr)
def test_mipmap_levels_agree(levels):
    expected, got = _same(
        lambda: theirs.MipmappedArrayOptions(shape=(8, 8), format="float32", num_channels=1, num_levels=levels),
        lambda: ours.MipmappedArrayOptions(shape=(8, 8), format="float32", num_channels=1, num_levels=levels))
    if expected is not None:
        assert got.num_levels == expected.num_levels


TEXTURE_CASES = [
    {}, {"address_mode": "wrap"}, {"address_mode": ("wrap", "mirror")}, {"address_mode": "foo"},
    {"filter_mode": "linear"}, {"filter_mode": "cubic"}, {"filter_mode": 1}, {"filter_mode": "WRAP"},
    {"read_mode": "normalized_float"}, {"read_mode": None}, {"read_mode": "x"}, {"mipmap_filter_mode": "linear"},
    {"mipmap_filter_mode": 0}, {"max_anisotropy": -1}, {"border_color": (1, 2)}, {"normalized_coords": 1},
    {"filter_mode": cb.typing.FilterModeType.LINEAR, "read_mode": cb.typing.ReadModeType.ELEMENT_TYPE},
]


@pytest.mark.parametrize("kwargs", TEXTURE_CASES, ids=repr)
def test_texture_object_options_agree(kwargs):
    expected, got = _same(lambda: theirs.TextureObjectOptions(**kwargs), lambda: ours.TextureObjectOptions(**kwargs))
    if expected is not None:
        assert {k: str(v) for k, v in _fields(got).items()} == {k: str(v) for k, v in _fields(expected).items()}
        assert repr(got).split("(", 1)[1].replace("cubind", "") == repr(expected).split("(", 1)[1]


ADDRESS_MODES = ["wrap", "border", cb.typing.AddressModeType.MIRROR, ("wrap", "border"), ["clamp"],
                 ("wrap",) * 3, ("wrap",) * 4, (), 1, None, ("wrap", "x"), {"wrap": 1}, "WRAP", b"wrap"]


@pytest.mark.parametrize("mode", ADDRESS_MODES, ids=repr)
def test_address_modes_normalize_alike(mode):
    expected, got = _same(lambda: their_texture._normalize_address_modes(mode),
                          lambda: our_options._normalize_address_modes(mode))
    if expected is not None:
        assert [m.value for m in got] == [m.value for m in expected]


def _buffers():
    return cc.Buffer.from_handle(0x1000, 64), cb.Buffer.from_handle(0x1000, 64)


LINEAR_CASES = [
    {"format": "float32", "num_channels": 1}, {"format": "uint8", "num_channels": 4, "size_bytes": 32},
    {"format": "float32", "num_channels": 1, "size_bytes": 128}, {"format": "float32", "num_channels": 1,
                                                                  "size_bytes": 0},
    {"format": "float32", "num_channels": 1, "size_bytes": 6}, {"format": "float32", "num_channels": 1,
                                                                "size_bytes": -4},
    {"format": "float32", "num_channels": 1, "size_bytes": "x"}, {"format": "float32", "num_channels": 1,
                                                                  "size_bytes": 8.5},
    {"format": "float32", "num_channels": 3}, {"format": "float64", "num_channels": 1},
    {"format": "float32", "num_channels": 1.0},
]


@pytest.mark.parametrize("kwargs", LINEAR_CASES, ids=repr)
def test_linear_resources_agree(kwargs):
    their_buf, our_buf = _buffers()
    expected, got = _same(lambda: theirs.ResourceDescriptor.from_linear(their_buf, **kwargs),
                          lambda: ours.ResourceDescriptor.from_linear(our_buf, **kwargs))
    if expected is not None:
        assert repr(got) == repr(expected)
        assert (got.kind, got.format, got.num_channels, got.size_bytes) == (
            expected.kind, expected.format, expected.num_channels, expected.size_bytes)


PITCH_CASES = [
    {"width": 2, "height": 2, "pitch_bytes": 32}, {"width": 0, "height": 2, "pitch_bytes": 32},
    {"width": 2, "height": 0, "pitch_bytes": 32}, {"width": 4, "height": 2, "pitch_bytes": 8},
    {"width": 4, "height": 3, "pitch_bytes": 32}, {"width": "x", "height": 2, "pitch_bytes": 32},
    {"width": None, "height": 2, "pitch_bytes": 32}, {"width": 2.9, "height": 2, "pitch_bytes": 32},
]


@pytest.mark.parametrize("kwargs", PITCH_CASES, ids=repr)
def test_pitched_resources_agree(kwargs):
    their_buf, our_buf = _buffers()
    expected, got = _same(
        lambda: theirs.ResourceDescriptor.from_pitch2d(their_buf, format="float32", num_channels=1, **kwargs),
        lambda: ours.ResourceDescriptor.from_pitch2d(our_buf, format="float32", num_channels=1, **kwargs))
    if expected is not None:
        assert repr(got) == repr(expected)


@pytest.mark.parametrize("factory", ["from_opaque_array", "from_mipmapped_array", "from_linear", "from_pitch2d"])
def test_resource_descriptors_refuse_other_sources_alike(factory):
    kwargs = {} if factory.endswith("array") else {"format": "uint8", "num_channels": 1}
    if factory == "from_pitch2d":
        kwargs.update(width=1, height=1, pitch_bytes=1)
    _same(lambda: getattr(theirs.ResourceDescriptor, factory)(object(), **kwargs),
          lambda: getattr(ours.ResourceDescriptor, factory)(object(), **kwargs))
    their_buf, our_buf = _buffers()
    their_buf.close()
    our_buf.close()
    if factory in ("from_linear", "from_pitch2d"):
        _same(lambda: getattr(theirs.ResourceDescriptor, factory)(their_buf, **kwargs),
              lambda: getattr(ours.ResourceDescriptor, factory)(our_buf, **kwargs))


@pytest.mark.parametrize("name", ["OpaqueArray", "MipmappedArray", "TextureObject", "SurfaceObject",
                                  "ResourceDescriptor"])
def test_direct_construction_is_refused_alike(name):
    with pytest.raises(RuntimeError) as their_error:
        getattr(theirs, name)()
    with pytest.raises(RuntimeError) as our_error:
        getattr(ours, name)()
    assert str(our_error.value) == str(their_error.value)


@pytest.mark.parametrize("bad", [5, "x", None], ids=repr)
def test_options_of_another_type_are_refused_alike(bad):
    if bad is None:
        return
    _same(lambda: their_array._create_opaque_array(bad), lambda: ours._array._create_opaque_array(bad))
    _same(lambda: theirs._mipmapped_array._create_mipmapped_array(bad),
          lambda: ours._mipmapped_array._create_mipmapped_array(bad))
    _same(lambda: their_texture._create_texture_object(bad, None),
          lambda: ours._texture._create_texture_object(bad, None))
    _same(lambda: theirs._surface._create_surface_object(bad), lambda: ours._surface._create_surface_object(bad))

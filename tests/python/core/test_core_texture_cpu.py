"""cubind.core.texture without a GPU: the classes that cannot be made
directly, and arrays, mipmapped arrays, texture and surface objects against
the stand-in driver (tests/python/fake_driver/fake_texture.c, whose arrays
hold real host storage): whole-array copies round-trip, what each option
becomes in the driver's descriptors, which object keeps which alive, and the
errors of each bad request, raised before the driver is called."""
import textwrap

import pytest
from conftest import STAND_IN_CHECKS, run_with_fake_driver

import cubind.core as cc
from cubind.core import texture

PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    import array
    import ctypes
    import gc
    import cubind.core as cc
    from cubind.core.texture import *
    from cubind.core.typing import AddressModeType, ArrayFormatType, FilterModeType, ReadModeType
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()

    def live(kind):
        return fake_int(f"fake_live_{kind}")

    def floats(name, n):
        return list((ctypes.c_float * n).in_dll(fake, name))

    def ints(name, n):
        return list((ctypes.c_int * n).in_dll(fake, name))
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


@pytest.mark.parametrize("cls, factory", [
    ("OpaqueArray", "Device.create_opaque_array"), ("MipmappedArray", "Device.create_mipmapped_array"),
    ("TextureObject", "Device.create_texture_object"), ("SurfaceObject", "Device.create_surface_object"),
    ("ResourceDescriptor", "ResourceDescriptor.from_*")])
def test_the_classes_are_made_only_by_their_factories(cls, factory):
    with pytest.raises(RuntimeError, match=f"^{cls} cannot be instantiated directly.*{factory.split('.')[0]}"):
        getattr(texture, cls)()


def test_the_subpackage_is_cubind_core_texture():
    assert cc.texture is texture
    assert sorted(texture.__all__) == ["MipmappedArray", "MipmappedArrayOptions", "OpaqueArray",
                                       "OpaqueArrayOptions", "ResourceDescriptor", "SurfaceObject", "TextureObject",
                                       "TextureObjectOptions"]


def test_host_data_round_trips_through_arrays_of_each_rank(fake_driver_dir):
    run(fake_driver_dir, """
        for shape, fmt, code, channels in [((7,), "float32", "f", 1), ((5, 3), ArrayFormatType.UINT16, "H", 2),
                                           ((4, 3, 2), "int8", "b", 4)]:
            a = dev.create_opaque_array(OpaqueArrayOptions(shape=shape, format=fmt, num_channels=channels))
            n = a.size_bytes // a.element_bytes * channels
            src = array.array(code, [(i * 3) % 100 for i in range(n)])
            dst = array.array(code, [0] * n)
            a.copy_from(src, stream=stream)
            assert a.copy_to(dst, stream=stream) is dst
            stream.sync()
            assert dst == src, (shape, list(dst))
            assert a.shape == shape and a.num_channels == channels
            assert fake_int("fake_copy3d_width_bytes", ctypes.c_size_t) == shape[0] * a.element_bytes
            assert fake_int("fake_copy3d_height", ctypes.c_size_t) == (shape[1] if len(shape) > 1 else 1)
            assert fake_int("fake_copy3d_depth", ctypes.c_size_t) == (shape[2] if len(shape) > 2 else 1)
            a.close()
        assert live("arrays") == 0
    """)


def test_array_properties_and_repr(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array({"shape": [32, 16], "format": "float16", "num_channels": 4,
                                     "is_surface_load_store": True})
        assert a.shape == (32, 16) and a.format is ArrayFormatType.FLOAT16 and a.num_channels == 4
        assert a.element_bytes == 8 and a.size_bytes == 32 * 16 * 8 and a.is_surface_load_store is True
        assert a.device is dev and a.handle != 0 and not a.is_closed
        assert a._extent_bytes() == (256, 16, 1)
        assert repr(a) == "OpaqueArray(shape=(32, 16), format=FLOAT16, num_channels=4)"
        with a as same:
            assert same is a
        assert a.is_closed and a.handle == 0 and live("arrays") == 0
        a.close()
        raises(RuntimeError, "OpaqueArray has been closed", a.copy_from, b"x" * 4096, stream=stream)
    """)


def test_copies_check_the_other_side_before_the_driver(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array(OpaqueArrayOptions(shape=(16,), format="uint32", num_channels=1))
        before = fake_int("fake_copy3d_count")
        raises(ValueError, "Host buffer has 32 bytes, smaller than the array extent (64 bytes",
               a.copy_from, array.array("I", [0] * 8), stream=stream)
        raises(ValueError, "smaller than the array extent", a.copy_to, bytearray(63), stream=stream)
        raises(TypeError, "src must be a Buffer or a contiguous buffer-protocol object, got int",
               a.copy_from, 5, stream=stream)
        raises(TypeError, "stream", a.copy_from, bytes(64), stream="not-a-stream")
        small = dev.allocate(32, stream=stream)
        raises(ValueError, "Buffer size (32 bytes) is smaller than the array extent (64 bytes",
               a.copy_to, small, stream=stream)
        assert fake_int("fake_copy3d_count") == before
        raises(BufferError, "dst must be a Buffer or a contiguous writable buffer-protocol object, got bytes",
               a.copy_to, bytes(64), stream=stream)
    """)


def test_buffer_copies_reach_the_driver_by_address_on_the_stream(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array(OpaqueArrayOptions(shape=(8, 2), format="float32", num_channels=1))
        buf = dev.allocate(a.size_bytes, stream=stream)
        a.copy_from(buf, stream=stream)
        assert fake_int("fake_copy3d_src_type") == 4 and fake_int("fake_copy3d_dst_type") == 3  # UNIFIED -> ARRAY
        assert fake_int("fake_copy3d_device_address", ctypes.c_ulonglong) == int(buf.handle)
        assert fake_int("fake_copy3d_stream", ctypes.c_void_p) == int(stream.handle)
        a.copy_to(buf, stream=stream)
        assert fake_int("fake_copy3d_src_type") == 3 and fake_int("fake_copy3d_dst_type") == 4
        assert fake_int("fake_copy3d_device_address", ctypes.c_ulonglong) == int(buf.handle)
    """)


def test_texture_options_reach_the_driver(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="float32", num_channels=1))
        res = ResourceDescriptor.from_opaque_array(a)
        tex = dev.create_texture_object(resource=res)
        assert ints("fake_tex_address", 3) == [1, 1, 1]  # CLAMP
        assert fake_int("fake_tex_filter") == 0 and fake_int("fake_tex_flags", ctypes.c_uint) == 0x01
        assert fake_int("fake_tex_res_type") == 0 and fake_int("fake_tex_res_address", ctypes.c_ulonglong) == a.handle
        assert tex.resource is res and tex.options == TextureObjectOptions() and tex.device is dev
        opts = TextureObjectOptions(address_mode=("wrap", AddressModeType.MIRROR), filter_mode="linear",
                                    read_mode=ReadModeType.NORMALIZED_FLOAT, normalized_coords=True, srgb=True,
                                    disable_trilinear_optimization=True, seamless_cubemap=True, max_anisotropy=4,
                                    mipmap_filter_mode="linear", mipmap_level_bias=0.5, min_mipmap_level_clamp=1,
                                    max_mipmap_level_clamp=2.5, border_color=(0.25, 0.5, 0.75, 1.0))
        other = dev.create_texture_object(resource=res, options=opts)
        assert ints("fake_tex_address", 3) == [0, 2, 2]  # WRAP, MIRROR, MIRROR repeated
        assert fake_int("fake_tex_filter") == 1 and fake_int("fake_tex_mipmap_filter") == 1
        assert fake_int("fake_tex_flags", ctypes.c_uint) == 0x02 | 0x10 | 0x20 | 0x40
        assert fake_int("fake_tex_max_anisotropy", ctypes.c_uint) == 4
        assert [fake_int(n, ctypes.c_float) for n in ("fake_tex_bias", "fake_tex_min_clamp", "fake_tex_max_clamp")] \\
            == [0.5, 1.0, 2.5]
        assert floats("fake_tex_border", 4) == [0.25, 0.5, 0.75, 1.0]
        assert other.handle != tex.handle and other.options is opts
        assert repr(other) == f"TextureObject(handle={other.handle:#x})"
        with other:
            pass
        assert other.is_closed and other.handle == 0 and other.resource is None
        tex.close()
        assert live("textures") == 0
    """)


def test_bad_texture_options_are_refused_before_the_driver(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="float32", num_channels=1))
        res = ResourceDescriptor.from_opaque_array(a)
        make = lambda **o: dev.create_texture_object(resource=res, options=TextureObjectOptions(**o))
        raises(ValueError, "address_mode must be an AddressModeType or one of", make, address_mode="foo")
        raises(ValueError, "address_mode[1] must be", make, address_mode=("wrap", "x"))
        raises(ValueError, "address_mode tuple must have 1-3 entries, got 4", make, address_mode=("wrap",) * 4)
        raises(TypeError, "address_mode must be an AddressModeType or a tuple", make, address_mode=1)
        raises(ValueError, "max_anisotropy must be >= 0, got -1", make, max_anisotropy=-1)
        raises(TypeError, "max_anisotropy", make, max_anisotropy=1.5)
        raises(ValueError, "border_color must have 4 elements, got 2", make, border_color=(1, 2))
        raises(TypeError, "border_color[0] must be a float", make, border_color=("a", 2, 3, 4))
        raises(TypeError, "mipmap_level_bias must be a float", make, mipmap_level_bias="x")
        raises(TypeError, "resource must be a ResourceDescriptor, got int", dev.create_texture_object,
               resource=5)
        raises(TypeError, "Texture object options must be provided as an object of type TextureObjectOptions",
               dev.create_texture_object, resource=res, options=5)
        raises(TypeError, "unexpected keyword", dev.create_texture_object, resource=res, options={"filter": 1})
        assert live("textures") == 0
        a.close()
        raises(RuntimeError, "OpaqueArray has been closed", dev.create_texture_object, resource=res)
    """)


def test_linear_and_pitched_textures_describe_their_buffer(fake_driver_dir):
    run(fake_driver_dir, """
        buf = dev.allocate(4096, stream=stream)
        lin = ResourceDescriptor.from_linear(buf, format="uint16", num_channels=2, size_bytes=1024)
        assert (lin.kind, lin.source, lin.format, lin.num_channels, lin.size_bytes, lin.width) == \\
            ("linear", buf, ArrayFormatType.UINT16, 2, 1024, None)
        assert repr(lin) == "ResourceDescriptor(kind='linear', format=UINT16, num_channels=2, size_bytes=1024)"
        tex = dev.create_texture_object(resource=lin)
        assert fake_int("fake_tex_res_type") == 2
        assert fake_int("fake_tex_res_address", ctypes.c_ulonglong) == int(buf.handle)
        assert fake_int("fake_tex_size", ctypes.c_size_t) == 1024 and fake_int("fake_tex_channels", ctypes.c_uint) == 2
        assert fake_int("fake_tex_format") == 0x02
        p2 = ResourceDescriptor.from_pitch2d(buf, format="uint8", num_channels=4, width=32, height=8,
                                            pitch_bytes=256)
        assert (p2.kind, p2.width, p2.height, p2.pitch_bytes, p2.size_bytes) == ("pitch2d", 32, 8, 256, None)
        dev.create_texture_object(resource=p2)
        assert fake_int("fake_tex_res_type") == 3
        assert [fake_int(n, ctypes.c_size_t) for n in ("fake_tex_width", "fake_tex_height", "fake_tex_pitch")] \\
            == [32, 8, 256]
        raises(ValueError, "size_bytes (8192) exceeds buffer.size (4096)", ResourceDescriptor.from_linear, buf,
               format="float32", num_channels=1, size_bytes=8192)
        raises(ValueError, "multiple of element size", ResourceDescriptor.from_linear, buf, format="float32",
               num_channels=1, size_bytes=6)
        raises(ValueError, "pitch_bytes (64) must be >= width * element_bytes (128)",
               ResourceDescriptor.from_pitch2d, buf, format="uint8", num_channels=4, width=32, height=8,
               pitch_bytes=64)
        raises(ValueError, "exceeds buffer.size", ResourceDescriptor.from_pitch2d, buf, format="uint8",
               num_channels=4, width=32, height=32, pitch_bytes=256)
        raises(ValueError, "width must be an int", ResourceDescriptor.from_pitch2d, buf, format="uint8",
               num_channels=4, width="x", height=32, pitch_bytes=256)
        raises(TypeError, "buffer must be a Buffer, got bytes", ResourceDescriptor.from_linear, b"",
               format="uint8", num_channels=1)
    """)


def test_a_texture_keeps_its_array_alive_until_it_is_closed(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array(OpaqueArrayOptions(shape=(4, 4), format="float32", num_channels=1))
        tex = dev.create_texture_object(resource=ResourceDescriptor.from_opaque_array(a))
        a.close()
        del a
        gc.collect()
        assert live("arrays") == 1 and live("textures") == 1
        tex.close()
        assert live("arrays") == 0 and live("textures") == 0
        m = dev.create_mipmapped_array(MipmappedArrayOptions(shape=(8, 8), format="float32", num_channels=1,
                                                            num_levels=2))
        mtex = dev.create_texture_object(resource=ResourceDescriptor.from_mipmapped_array(m))
        assert fake_int("fake_tex_res_type") == 1
        m.close()
        assert live("mipmaps") == 1
        del mtex
        gc.collect()
        assert live("mipmaps") == 0 and live("textures") == 0
    """)


def test_mipmap_levels_halve_and_keep_their_parent_alive(fake_driver_dir):
    run(fake_driver_dir, """
        m = dev.create_mipmapped_array(MipmappedArrayOptions(shape=(64, 32), format="uint8", num_channels=1,
                                                            num_levels=4))
        assert (m.shape, m.format, m.num_channels, m.num_levels, m.is_surface_load_store) == \\
            ((64, 32), ArrayFormatType.UINT8, 1, 4, False)
        assert repr(m) == "MipmappedArray(shape=(64, 32), format=UINT8, num_channels=1, num_levels=4)"
        assert [m.get_level(i).shape for i in range(4)] == [(64, 32), (32, 16), (16, 8), (8, 4)]
        raises(ValueError, "level (4) must be < num_levels (4)", m.get_level, 4)
        raises(ValueError, "level must be >= 0, got -1", m.get_level, -1)
        raises(TypeError, "level must be an int", m.get_level, None)
        one = dev.create_mipmapped_array({"shape": (16,), "format": "float32", "num_channels": 1,
                                          "num_levels": 3})
        assert one.get_level(2).shape == (4,)
        level = m.get_level(1)
        del m
        gc.collect()
        assert live("mipmaps") == 2
        src = array.array("B", [i % 251 for i in range(32 * 16)])
        dst = array.array("B", [0] * (32 * 16))
        level.copy_from(src, stream=stream)
        level.copy_to(dst, stream=stream)
        assert dst == src
        level.close()
        assert live("mipmaps") == 1 and live("arrays") == 0
        with one:
            pass
        assert one.is_closed and one.handle == 0 and live("mipmaps") == 0
        raises(RuntimeError, "MipmappedArray has been closed", one.get_level, 0)
        raises(cc.CUDAError, "cuMipmappedArrayCreate", dev.create_mipmapped_array,
               MipmappedArrayOptions(shape=(8, 8), format="uint8", num_channels=1, num_levels=5))
    """)


def test_surfaces_take_only_arrays_made_for_them(fake_driver_dir):
    run(fake_driver_dir, """
        plain = dev.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="uint8", num_channels=4))
        raises(ValueError, "is_surface_load_store=True", dev.create_surface_object,
               resource=ResourceDescriptor.from_opaque_array(plain))
        buf = dev.allocate(4096, stream=stream)
        raises(ValueError, "array-backed ResourceDescriptor, got kind='linear'", dev.create_surface_object,
               resource=ResourceDescriptor.from_linear(buf, format="uint8", num_channels=1))
        m = dev.create_mipmapped_array(MipmappedArrayOptions(shape=(16, 16), format="uint8", num_channels=4,
                                                            num_levels=2, is_surface_load_store=True))
        raises(ValueError, "kind='mipmapped_array'", dev.create_surface_object,
               resource=ResourceDescriptor.from_mipmapped_array(m))
        raises(TypeError, "resource must be a ResourceDescriptor", dev.create_surface_object, resource=plain)
        assert live("surfaces") == 0
        res = ResourceDescriptor.from_opaque_array(m.get_level(1))
        surf = dev.create_surface_object(resource=res)
        assert surf.handle != 0 and surf.resource is res and surf.device is dev
        assert repr(surf) == f"SurfaceObject(handle={surf.handle:#x})"
        m.close()
        del res
        gc.collect()
        assert live("mipmaps") == 1 and live("surfaces") == 1
        with surf:
            pass
        assert surf.is_closed and surf.handle == 0 and surf.resource is None
        assert live("surfaces") == 0 and live("mipmaps") == 0
    """)


def test_copies_take_a_graph_builder_as_their_stream(fake_driver_dir):
    run(fake_driver_dir, """
        a = dev.create_opaque_array(OpaqueArrayOptions(shape=(8,), format="float32", num_channels=1))
        buf = dev.allocate(a.size_bytes, stream=stream)
        builder = dev.create_graph_builder().begin_building()
        a.copy_from(buf, stream=builder)
        assert fake_int("fake_copy3d_stream", ctypes.c_void_p) == builder.__cuda_stream__()[1]
        a.copy_to(buf, stream=builder)
        assert fake_int("fake_copy3d_src_type") == 3
        builder.end_building()
    """)

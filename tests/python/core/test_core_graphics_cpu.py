"""cubind.core.GraphicsResource without a GPU: its registration flags read as
cuda.core reads them, and, against the stand-in driver
(tests/python/fake_driver/fake_interop.c), registration, mapping to a Buffer
whose close unmaps, arrays of images, the `with` forms, close and garbage
collection, and each misuse raising what cuda.core raises."""
import textwrap

import pytest

from conftest import STAND_IN_CHECKS, run_with_fake_driver

from cubind.core import GraphicsResource
from cubind.core._graphics import _parse_register_flags

FLAG_CASES = [None, "none", "read_only", ("read_only", "write_discard"), ["surface_load_store"],
              ("texture_gather", "none"), (), "bogus", ("x",), 5, b"none", ("read_only", 5), 2.5]


def _outcome(f, *args):
    try:
        return ("ok", f(*args))
    except Exception as error:  # the type and the words cuda.core uses
        return (type(error).__name__, str(error).split(".")[0])


@pytest.mark.parametrize("flags", FLAG_CASES, ids=repr)
def test_register_flags_read_as_cuda_core_reads_them(flags):
    cuda_core = pytest.importorskip("cuda.core._graphics", reason="cuda.core 1.2 is not installed")
    ours, theirs = _outcome(_parse_register_flags, flags), _outcome(cuda_core._parse_register_flags, flags)
    assert ours[0] == theirs[0]
    if ours[0] in ("ok", "ValueError"):
        assert ours == theirs


def test_a_bad_flag_names_the_valid_ones():
    with pytest.raises(ValueError, match="Unknown register flag 'bogus'. Valid flags: none, read_only, "
                                         "surface_load_store, texture_gather, write_discard"):
        _parse_register_flags("bogus")
    with pytest.raises(TypeError, match="flags must be a str or a sequence of str, not int"):
        _parse_register_flags(5)


def test_it_cannot_be_instantiated_directly():
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        GraphicsResource()


def test_gl_names_are_checked_before_the_driver():
    with pytest.raises(TypeError, match="from_gl_buffer: gl_buffer must be an int"):
        GraphicsResource.from_gl_buffer("1")
    with pytest.raises(OverflowError, match="from_gl_buffer: gl_buffer is -1"):
        GraphicsResource.from_gl_buffer(-1)
    with pytest.raises(TypeError, match="from_gl_image: target must be an int"):
        GraphicsResource.from_gl_image(1, None)
    with pytest.raises(OverflowError, match="from_gl_image: image is 4294967296"):
        GraphicsResource.from_gl_image(2**32, 0x0DE1)
    with pytest.raises(ValueError, match="Unknown register flag 'readonly'"):
        GraphicsResource.from_gl_buffer(1, flags="readonly")


PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    import gc
    fake = ctypes.CDLL("libcuda.so.1")
    import cubind.core as cc
    from cubind.core import Buffer, CUDAError, GraphicsResource
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    GL_TEXTURE_2D = 0x0DE1

    def counts():
        return [fake_int(n) for n in ("fake_graphics_registered", "fake_graphics_unregistered",
                                      "fake_graphics_maps", "fake_graphics_unmaps")]

    def last_stream():
        return ctypes.c_void_p.in_dll(fake, "fake_graphics_last_stream").value or 0
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_a_mapped_buffer_object_is_a_buffer_whose_close_unmaps(fake_driver_dir):
    run(fake_driver_dir, """
        r = GraphicsResource.from_gl_buffer(4, flags=("read_only", "write_discard"))
        assert fake_int("fake_graphics_last_flags", ctypes.c_uint) == 3
        assert r.handle != 0 and r.resource_handle == r.handle
        assert not r.is_mapped and not r.is_closed
        assert repr(r) == f"<GraphicsResource handle={r.handle:#x}>"
        reg, unreg, maps, unmaps = counts()

        buf = r.map(stream=stream)
        assert isinstance(buf, Buffer)
        assert (buf.handle, buf.size) == (0x30000000 + 0x10000 * 4, 4 * 256)
        assert buf.is_device_accessible and not buf.is_host_accessible
        assert r.is_mapped and "mapped" in repr(r)
        assert last_stream() == int(stream.handle)
        assert r._get_mapped_buffer() is buf
        raises(RuntimeError, "GraphicsResource is already mapped", r.map, stream=stream)
        raises(RuntimeError, "already mapped", r.map_array, stream=stream)
        raises(RuntimeError, "unmap it first", r.set_map_flags, "read_only")
        buf.close()
        assert not r.is_mapped and r._get_mapped_buffer() is None
        assert counts()[2:] == [maps + 1, unmaps + 1]

        with r.map(stream=stream) as b:
            assert r.is_mapped and b.size == 1024
        assert not r.is_mapped and b.is_closed
        raises(RuntimeError, "GraphicsResource is not mapped", r.unmap)

        # unmap() closes the mapped Buffer, on its stream or on the one given.
        other = dev.create_stream()
        b = r.map(stream=stream)
        r.unmap(stream=other)
        assert b.is_closed and not r.is_mapped and last_stream() == int(other.handle)
        b.close()   # already closed: nothing more reaches the driver
        b = r.map(stream=stream)
        r.unmap()
        assert last_stream() == int(stream.handle)
        assert counts()[2:] == [maps + 4, unmaps + 4]

        r.set_map_flags("write_discard")
        assert fake_int("fake_graphics_last_map_flags", ctypes.c_uint) == 2
        raises(ValueError, "set_map_flags: flags is 'bogus'", r.set_map_flags, "bogus")

        # close() unmaps first, then unregisters; a closed resource refuses use.
        b = r.map(stream=stream)
        r.close()
        assert r.is_closed and not r.is_mapped and b.is_closed and r.handle == 0
        assert counts()[1:] == [unreg + 1, maps + 5, unmaps + 5]
        assert "closed" in repr(r)
        raises(RuntimeError, "GraphicsResource has been closed", r.map, stream=stream)
        raises(RuntimeError, "GraphicsResource has been closed", r.unmap)
        r.close()
        assert counts()[1] == unreg + 1
        other.close()
    """)


def test_the_with_forms_scope_registration_and_mapping(fake_driver_dir):
    run(fake_driver_dir, """
        reg, unreg, maps, unmaps = counts()
        with GraphicsResource.from_gl_buffer(5) as res:
            assert isinstance(res, GraphicsResource) and not res.is_mapped
            with res.map(stream=stream) as buf:
                assert buf.size == 5 * 256
        assert res.is_closed and counts() == [reg + 1, unreg + 1, maps + 1, unmaps + 1]

        with GraphicsResource.from_gl_buffer(6, stream=stream) as buf:
            assert isinstance(buf, Buffer) and buf.size == 6 * 256
            assert counts()[2] == maps + 2
        assert buf.is_closed and counts() == [reg + 2, unreg + 2, maps + 2, unmaps + 2]
        raises(TypeError, "stream must be a Stream", GraphicsResource.from_gl_buffer, 6, stream=5)
    """)


def test_images_map_to_arrays_and_have_no_pointer(fake_driver_dir):
    run(fake_driver_dir, """
        image = GraphicsResource.from_gl_image(7, GL_TEXTURE_2D, flags="surface_load_store")
        assert fake_int("fake_graphics_last_target", ctypes.c_uint) == GL_TEXTURE_2D
        assert fake_int("fake_graphics_last_flags", ctypes.c_uint) == 4
        try:
            image.map(stream=stream)
        except CUDAError as e:
            assert e.status == 213 and e.api_function == "cuGraphicsResourceGetMappedPointer", str(e)
        else:
            raise AssertionError("an image mapped to a pointer")
        assert not image.is_mapped, "a failed map leaves the image unmapped"
        array = image.map_array(stream=stream)
        assert array == 0xA0000 + 0x700 and image.is_mapped
        assert image.map_array(stream=stream, mip_level=2) == array + 2
        image.unmap()
        assert not image.is_mapped

        buffer_object = GraphicsResource.from_gl_buffer(8)
        try:
            buffer_object.map_array(stream=stream)
        except CUDAError as e:
            assert e.status == 212 and e.api_function == "cuGraphicsSubResourceGetMappedArray", str(e)
        else:
            raise AssertionError("a buffer object mapped to an array")
        assert not buffer_object.is_mapped
        raises(OverflowError, "map_array: mip_level is -1", image.map_array, stream=stream, mip_level=-1)
        image.close()
        buffer_object.close()
    """)


def test_registration_errors_are_cuda_errors(fake_driver_dir):
    run(fake_driver_dir, """
        reg = counts()[0]
        for make, api in [(lambda: GraphicsResource.from_gl_buffer(0), "cuGraphicsGLRegisterBuffer"),
                          (lambda: GraphicsResource.from_gl_image(0, GL_TEXTURE_2D), "cuGraphicsGLRegisterImage")]:
            try:
                make()
            except CUDAError as e:
                assert e.status == 1 and e.api_function == api, str(e)
            else:
                raise AssertionError(f"{api} of name 0 did not raise")
        assert counts()[0] == reg
    """)


def test_garbage_collection_unregisters_and_a_mapped_buffer_keeps_its_resource(fake_driver_dir):
    run(fake_driver_dir, """
        reg, unreg, maps, unmaps = counts()
        r = GraphicsResource.from_gl_buffer(9)
        del r
        gc.collect()
        assert counts()[1] == unreg + 1

        r = GraphicsResource.from_gl_buffer(10)
        b = r.map(stream=stream)
        assert b.owner is r
        del r
        gc.collect()
        assert counts()[1:] == [unreg + 1, maps + 1, unmaps], "the mapped Buffer keeps its resource registered"
        b.close()
        assert counts()[3] == unmaps + 1
        del b
        gc.collect()
        assert counts()[1] == unreg + 2

        # A mapped resource dropped with its Buffer: unmapped, then unregistered.
        r = GraphicsResource.from_gl_buffer(11)
        b = r.map(stream=stream)
        del r, b
        gc.collect()
        assert counts()[1:] == [unreg + 3, maps + 2, unmaps + 2]
    """)

"""cubind.core.texture on a GPU: a 2-D float texture sampled by an
NVRTC-compiled kernel with point and linear filtering, unnormalized and
normalized coordinates and the clamp, border, wrap and mirror address modes,
each value checked against NumPy's sampling of the same image; a surface
read and written by a kernel; the levels of a mipmapped array sampled by
level of detail; a 3-D array round trip through host memory, device buffers
and a kernel's reads; a linear texture fetched by index."""
import ctypes

import pytest

from cubind.core import Buffer, LaunchConfig, Program, ProgramOptions, launch
from cubind.core.texture import (
    MipmappedArrayOptions,
    OpaqueArrayOptions,
    ResourceDescriptor,
    TextureObjectOptions,
)

np = pytest.importorskip("numpy")

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void sample2d(cudaTextureObject_t tex, const float2* coords, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(tex, coords[i].x, coords[i].y);
}

extern "C" __global__ void write_surface(cudaSurfaceObject_t surf, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float v = surf2Dread<float>(surf, x * (int)sizeof(float), y);
        surf2Dwrite(v * 2.0f + (float)(y * width + x), surf, x * (int)sizeof(float), y);
    }
}

extern "C" __global__ void sample_lod(cudaTextureObject_t tex, float u, float v, float* out, int levels)
{
    int i = threadIdx.x;
    if (i < levels) out[i] = tex2DLod<float>(tex, u, v, (float)i);
}

extern "C" __global__ void sample3d(cudaTextureObject_t tex, float* out, int w, int h, int d)
{
    int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
    if (x < w && y < h && z < d) out[(z * h + y) * w + x] = tex3D<float>(tex, x + 0.5f, y + 0.5f, z + 0.5f);
}

extern "C" __global__ void fetch1d(cudaTextureObject_t tex, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, i);
}
"""

W, H = 8, 6
# Texels in [0, 1], neighbours about 0.3 apart: linear filtering weighs with
# 8 fractional bits, so a sample may differ from the exact interpolation by
# up to 1/256 of the difference between neighbours along each axis; a wrong
# texel or weight is off by far more.
IMAGE = ((np.arange(H * W, dtype=np.float32).reshape(H, W) * 7) % 23 / 22).astype(np.float32)
LINEAR_TOLERANCE = 1e-2


@pytest.fixture(scope="module")
def kernels(device):
    code = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
    return {name: code.get_kernel(name) for name in ("sample2d", "write_surface", "sample_lod", "sample3d",
                                                      "fetch1d")}


@pytest.fixture(scope="module")
def image(device):
    array = device.create_opaque_array(OpaqueArrayOptions(shape=(W, H), format="float32", num_channels=1))
    s = device.create_stream()
    array.copy_from(IMAGE, stream=s)
    s.sync()
    yield array
    array.close()


def _index(i, n, mode):
    """The texel index i of an axis of n texels reads under mode, or None for the border."""
    if 0 <= i < n:
        return i
    if mode == "clamp":
        return min(max(i, 0), n - 1)
    if mode == "border":
        return None
    if mode == "wrap":
        return i % n
    m = i % (2 * n)  # mirror: ... 1 0 | 0 1 .. n-1 | n-1 .. 0 | 0 1 ...
    return m if m < n else 2 * n - 1 - m


def _texel(ix, iy, mode, border):
    x, y = _index(ix, W, mode), _index(iy, H, mode)
    return border if x is None or y is None else float(IMAGE[y, x])


def _expected(coords, filter_mode, normalized, mode, border=0.0):
    """NumPy's sampling of IMAGE at coords ((x, y) per row) as tex2D samples it."""
    out = []
    for x, y in coords:
        if normalized:
            x, y = x * W, y * H
        if filter_mode == "point":
            out.append(_texel(int(np.floor(x)), int(np.floor(y)), mode, border))
            continue
        xb, yb = x - 0.5, y - 0.5
        x0, y0 = int(np.floor(xb)), int(np.floor(yb))
        a, b = xb - x0, yb - y0
        out.append((1 - a) * (1 - b) * _texel(x0, y0, mode, border) + a * (1 - b) * _texel(x0 + 1, y0, mode, border)
                   + (1 - a) * b * _texel(x0, y0 + 1, mode, border) + a * b * _texel(x0 + 1, y0 + 1, mode, border))
    return np.array(out, dtype=np.float32)


def _pinned(stream, values):
    """A pinned host Buffer holding values (a float32 NumPy array), and a NumPy view of it."""
    from cubind.core import LegacyPinnedMemoryResource

    host = LegacyPinnedMemoryResource().allocate(values.nbytes, stream=stream)
    view = np.frombuffer((ctypes.c_char * values.nbytes).from_address(int(host.handle)), dtype=np.float32)
    view[:] = values.ravel()
    return host, view


def _sample(device, stream, kernels, image, coords, options):
    coords = np.ascontiguousarray(coords, dtype=np.float32)
    n = len(coords)
    tex = device.create_texture_object(resource=ResourceDescriptor.from_opaque_array(image), options=options)
    host_coords, _ = _pinned(stream, coords)
    host_out, out = _pinned(stream, np.full(n, -99.0, dtype=np.float32))
    coords_buf = device.allocate(coords.nbytes, stream=stream)
    out_buf = device.allocate(n * 4, stream=stream)
    coords_buf.copy_from(host_coords, stream=stream)
    launch(stream, LaunchConfig(grid=(n + 63) // 64, block=64), kernels["sample2d"], ctypes.c_ulonglong(tex.handle),
           coords_buf, out_buf, ctypes.c_int(n))
    out_buf.copy_to(host_out, stream=stream)
    stream.sync()
    got = out.copy()
    tex.close()
    for b in (coords_buf, out_buf, host_coords, host_out):
        b.close()
    return got


# Inside, on texel edges and centres, and outside on every side.
COORDS = [(0.5, 0.5), (1.0, 2.0), (3.25, 4.75), (7.5, 5.5), (7.9, 0.1), (-1.3, 2.2), (9.7, 3.3), (2.2, -0.6),
          (4.4, 8.1), (-3.0, -2.0), (6.0, 3.0), (0.0, 0.0)]
NORMALIZED = [(0.03, 0.05), (0.5, 0.5), (0.97, 0.9), (1.2, 0.4), (-0.3, 0.6), (1.6, -0.45), (2.31, 1.07),
              (-1.1, -1.9), (0.25, 0.75), (0.999, 0.001)]

CASES = [
    ("point", False, "clamp", COORDS),
    ("linear", False, "clamp", COORDS),
    ("point", False, "border", COORDS),
    ("linear", False, "border", COORDS),
    ("point", True, "wrap", NORMALIZED),
    ("linear", True, "wrap", NORMALIZED),
    ("point", True, "mirror", NORMALIZED),
    ("linear", True, "clamp", NORMALIZED),
]


@pytest.mark.parametrize("filter_mode, normalized, mode, coords", CASES,
                         ids=[f"{f}-{'normalized' if n else 'texels'}-{m}" for f, n, m, _ in CASES])
def test_a_2d_float_texture_samples_as_numpy_computes(device, stream, kernels, image, filter_mode, normalized, mode,
                                                      coords):
    border = 0.75 if mode == "border" else 0.0
    options = TextureObjectOptions(address_mode=mode, filter_mode=filter_mode, normalized_coords=normalized,
                                   border_color=(border, border, border, border))
    got = _sample(device, stream, kernels, image, coords, options)
    expected = _expected(coords, filter_mode, normalized, mode, border)
    if filter_mode == "point":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, atol=LINEAR_TOLERANCE, rtol=0)
    assert not np.all(got == got[0]), "every sample read the same value"


def test_per_axis_address_modes(device, stream, kernels, image):
    coords = [(-0.3, 1.4), (1.25, -0.2), (1.6, 1.3)]
    got = _sample(device, stream, kernels, image, coords,
                  TextureObjectOptions(address_mode=("wrap", "clamp"), normalized_coords=True))
    expected = []
    for u, v in coords:
        x = int(np.floor(u * W)) % W
        y = min(max(int(np.floor(v * H)), 0), H - 1)
        expected.append(IMAGE[y, x])
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float32))


def test_a_kernel_writes_a_surface_and_the_host_reads_it_back(device, stream, kernels):
    w, h = 37, 19
    start = np.arange(w * h, dtype=np.float32).reshape(h, w) * 0.5
    array = device.create_opaque_array(OpaqueArrayOptions(shape=(w, h), format="float32", num_channels=1,
                                                          is_surface_load_store=True))
    surface = device.create_surface_object(resource=ResourceDescriptor.from_opaque_array(array))
    array.copy_from(start, stream=stream)
    launch(stream, LaunchConfig(grid=((w + 15) // 16, (h + 15) // 16), block=(16, 16)), kernels["write_surface"],
           ctypes.c_ulonglong(surface.handle), ctypes.c_int(w), ctypes.c_int(h))
    back = np.zeros_like(start)
    array.copy_to(back, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(back, start * 2 + np.arange(w * h, dtype=np.float32).reshape(h, w))
    surface.close()
    array.close()


def test_mipmap_levels_are_filled_and_sampled_by_level_of_detail(device, stream, kernels):
    levels = 4
    mip = device.create_mipmapped_array(MipmappedArrayOptions(shape=(16, 16), format="float32", num_channels=1,
                                                              num_levels=levels))
    for i in range(levels):
        level = mip.get_level(i)
        assert level.shape == (16 >> i, 16 >> i)
        level.copy_from(np.full((16 >> i, 16 >> i), 10.0 * (i + 1), dtype=np.float32), stream=stream)
        back = np.zeros((16 >> i, 16 >> i), dtype=np.float32)
        level.copy_to(back, stream=stream)
        stream.sync()
        assert np.all(back == 10.0 * (i + 1))
    tex = device.create_texture_object(
        resource=ResourceDescriptor.from_mipmapped_array(mip),
        options=TextureObjectOptions(normalized_coords=True, max_mipmap_level_clamp=float(levels - 1)))
    out = device.allocate(levels * 4, stream=stream)
    launch(stream, LaunchConfig(grid=1, block=32), kernels["sample_lod"], ctypes.c_ulonglong(tex.handle),
           ctypes.c_float(0.5), ctypes.c_float(0.5), out, ctypes.c_int(levels))
    host, got = _pinned(stream, np.zeros(levels, dtype=np.float32))
    out.copy_to(host, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(got, np.array([10.0, 20.0, 30.0, 40.0], dtype=np.float32))
    tex.close()
    mip.close()


def test_a_3d_array_round_trips_and_a_kernel_reads_each_texel(device, stream, kernels):
    w, h, d = 5, 4, 3
    data = np.arange(w * h * d, dtype=np.float32).reshape(d, h, w) + 0.25
    array = device.create_opaque_array(OpaqueArrayOptions(shape=(w, h, d), format=np.float32, num_channels=1))
    array.copy_from(data, stream=stream)
    back = np.zeros_like(data)
    array.copy_to(back, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(back, data)
    # Through device buffers: array -> buffer -> another array -> host.
    buf = device.allocate(array.size_bytes, stream=stream)
    array.copy_to(buf, stream=stream)
    other = device.create_opaque_array(OpaqueArrayOptions(shape=(w, h, d), format="float32", num_channels=1))
    other.copy_from(buf, stream=stream)
    again = np.zeros_like(data)
    other.copy_to(again, stream=stream)
    tex = device.create_texture_object(resource=ResourceDescriptor.from_opaque_array(other))
    out = device.allocate(data.nbytes, stream=stream)
    launch(stream, LaunchConfig(grid=d, block=(w, h)), kernels["sample3d"], ctypes.c_ulonglong(tex.handle), out,
           ctypes.c_int(w), ctypes.c_int(h), ctypes.c_int(d))
    sampled_array = device.create_opaque_array(OpaqueArrayOptions(shape=(w, h, d), format="float32",
                                                                  num_channels=1))
    sampled_array.copy_from(out, stream=stream)
    sampled = np.zeros_like(data)
    sampled_array.copy_to(sampled, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(again, data)
    np.testing.assert_array_equal(sampled, data)
    for obj in (tex, array, other, sampled_array, buf, out):
        obj.close()


def test_a_linear_texture_is_fetched_by_index(device, stream, kernels):
    n = 100
    values = np.linspace(-3, 3, n, dtype=np.float32)
    staging = device.create_opaque_array(OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1))
    # The driver wants linear texture memory aligned to texture_alignment.
    alignment = device.properties.texture_alignment
    memory = device.allocate(n * 4 + alignment, stream=stream)
    buf = Buffer.from_handle(-(-int(memory.handle) // alignment) * alignment, n * 4)
    staging.copy_from(values, stream=stream)
    staging.copy_to(buf, stream=stream)
    tex = device.create_texture_object(resource=ResourceDescriptor.from_linear(buf, format="float32", num_channels=1))
    out = device.allocate(n * 4, stream=stream)
    launch(stream, LaunchConfig(grid=2, block=64), kernels["fetch1d"], ctypes.c_ulonglong(tex.handle), out,
           ctypes.c_int(n))
    readback = device.create_opaque_array(OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1))
    readback.copy_from(out, stream=stream)
    got = np.zeros(n, dtype=np.float32)
    readback.copy_to(got, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(got, values)
    for obj in (tex, staging, readback, out, memory):
        obj.close()


def test_array_copies_are_captured_into_a_graph(device, stream):
    n = 64
    values = np.arange(n, dtype=np.float32) * 1.5
    array = device.create_opaque_array(OpaqueArrayOptions(shape=(8, 8), format="float32", num_channels=1))
    staging = device.create_opaque_array(OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1))
    buf_in = device.allocate(n * 4, stream=stream)
    buf_out = device.allocate(n * 4, stream=stream)
    staging.copy_from(values, stream=stream)
    staging.copy_to(buf_in, stream=stream)
    stream.sync()
    builder = device.create_graph_builder().begin_building()
    array.copy_from(buf_in, stream=builder)
    array.copy_to(buf_out, stream=builder)
    graph = builder.end_building().complete()
    graph.launch(stream)
    # Read back through an array of its own, which holds nothing of values unless the graph copied them.
    readback = device.create_opaque_array(OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1))
    readback.copy_from(buf_out, stream=stream)
    got = np.zeros(n, dtype=np.float32)
    readback.copy_to(got, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(got, values)
    for obj in (graph, builder, array, staging, readback, buf_in, buf_out):
        obj.close()

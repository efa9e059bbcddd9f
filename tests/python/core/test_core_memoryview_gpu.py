"""StridedMemoryView on a GPU: CuPy, PyTorch, numba-cuda and JAX arrays, a
Buffer viewed with a shape and dtype, copies checked by value, and a tensor
map read by an sm_90 kernel (TMA). A library that is not installed skips its
tests."""
import os

import pytest

np = pytest.importorskip("numpy")

from cubind.core import LaunchConfig, Program, ProgramOptions, launch  # noqa: E402
from cubind.core.utils import StridedMemoryView, args_viewable_as_strided_memory  # noqa: E402

pytestmark = pytest.mark.gpu

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def _check(view, ptr, shape, strides, dtype, device_id=0):
    assert view.ptr == ptr
    assert view.shape == shape
    assert view.strides == strides or (view.strides is None and strides is None)
    assert view.dtype == np.dtype(dtype)
    assert view.device_id == device_id
    assert view.is_device_accessible


def test_cupy_through_dlpack_and_the_cuda_array_interface(stream):
    cp = pytest.importorskip("cupy")
    a = cp.arange(60, dtype=cp.float32).reshape(6, 10)
    for arr in (a, a[1:5, ::2], a.T):
        strides = tuple(s // arr.itemsize for s in arr.strides)
        v = StridedMemoryView.from_dlpack(arr, int(stream.handle))
        _check(v, arr.data.ptr, arr.shape, strides, np.float32)
        assert v.exporting_obj is arr and not v.readonly
        w = StridedMemoryView.from_cuda_array_interface(arr, int(stream.handle))
        assert (w.ptr, w.shape, w.dtype, w.device_id) == (v.ptr, v.shape, v.dtype, 0)
        assert w.strides in (strides, None)
        # Back to CuPy through our export: the same values.
        assert bool((cp.from_dlpack(v) == arr).all())


def test_cupy_every_dtype(stream):
    cp = pytest.importorskip("cupy")
    for dtype in (cp.bool_, cp.int8, cp.uint16, cp.int32, cp.int64, cp.float16, cp.float32, cp.float64,
                  cp.complex64, cp.complex128):
        v = StridedMemoryView.from_dlpack(cp.zeros(4, dtype=dtype), -1)
        assert v.dtype == np.dtype(dtype)


def test_torch_tensors(stream):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    t = torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6)
    for tensor in (t, t.T, t[:, 1::2]):
        v = StridedMemoryView.from_dlpack(tensor, int(stream.handle))
        _check(v, tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), np.float32,
               torch.cuda.current_device())
    g = torch.ones(8, device="cuda", requires_grad=True)
    try:
        v = StridedMemoryView.from_any_interface(g, -1)
    except RuntimeError as error:
        # PyTorch's DLPack export refuses tensors that require grad.
        assert "grad" in str(error)
    else:
        assert v.ptr == g.data_ptr()
    assert StridedMemoryView.from_any_interface(g.detach(), -1).ptr == g.data_ptr()
    half = torch.zeros(3, dtype=torch.float16, device="cuda")
    assert StridedMemoryView.from_dlpack(half, -1).dtype == np.float16


def test_numba_device_array(stream):
    cuda = pytest.importorskip("numba.cuda")
    host = np.arange(32, dtype=np.float64).reshape(4, 8)
    d = cuda.to_device(host)
    v = StridedMemoryView.from_cuda_array_interface(d, int(stream.handle))
    assert v.ptr == d.__cuda_array_interface__["data"][0]
    assert v.shape == (4, 8) and v.dtype == np.float64 and v.device_id == 0
    sliced = d[:, ::2]
    w = StridedMemoryView.from_any_interface(sliced, -1)
    assert w.strides == (8, 2)


def test_jax_array_through_dlpack(stream):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX has no GPU here")
    x = jax.device_put(jnp.arange(12, dtype=jnp.float32).reshape(3, 4), gpus[0])
    # JAX orders the export on the stream given and takes no -1 ("no ordering").
    v = StridedMemoryView.from_dlpack(x, int(stream.handle))
    assert v.shape == (3, 4) and v.dtype == np.float32
    assert v.ptr == x.unsafe_buffer_pointer()
    assert v.is_device_accessible


def test_buffer_with_shape_and_dtype_and_copies_by_value(device, stream):
    buffer = device.allocate(6 * 8 * 4, stream=stream)
    view = StridedMemoryView.from_buffer(buffer, (6, 8), dtype=np.float32)
    assert (view.ptr, view.shape, view.strides, view.dtype) == (buffer.handle, (6, 8), None, np.float32)
    assert view.device_id == device.device_id and view.is_device_accessible
    assert view.__dlpack_device__() == (2, device.device_id)
    src = np.arange(48, dtype=np.float32).reshape(6, 8)
    view.copy_from(StridedMemoryView.from_dlpack(src, -1), stream)
    out = np.zeros_like(src)
    view.copy_to(StridedMemoryView.from_dlpack(out, -1), stream)
    assert np.array_equal(out, src)
    with pytest.raises(ValueError, match="too small"):
        StridedMemoryView.from_buffer(buffer, (7, 8), dtype=np.float32)
    cp = pytest.importorskip("cupy")
    stream.sync()
    assert np.array_equal(cp.asnumpy(cp.from_dlpack(view)), src)
    buffer.close(stream)


def test_device_to_device_copy(device, stream):
    a, b = (device.allocate(256, stream=stream) for _ in range(2))
    va = StridedMemoryView.from_buffer(a, (64,), dtype=np.int32)
    vb = StridedMemoryView.from_buffer(b, (64,), dtype=np.int32)
    va.copy_from(StridedMemoryView.from_dlpack(np.arange(64, dtype=np.int32), -1), stream)
    vb.copy_from(va, stream)
    out = np.zeros(64, dtype=np.int32)
    vb.copy_to(StridedMemoryView.from_dlpack(out, -1), stream)
    assert np.array_equal(out, np.arange(64, dtype=np.int32))
    a.close(stream)
    b.close(stream)


def test_decorated_function_on_a_cupy_array(device, stream):
    cp = pytest.importorskip("cupy")
    code = Program(r"""
extern "C" __global__ void twice(float* p, size_t n)
{ size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }
""", "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
    kernel = code.get_kernel("twice")

    @args_viewable_as_strided_memory((0,))
    def twice(arr, s):
        v = arr.view(int(s.handle))
        launch(s, LaunchConfig(grid=(v.size + 127) // 128, block=128), kernel, v.ptr, np.uint64(v.size))

    x = cp.arange(1000, dtype=cp.float32)
    twice(x, stream)
    stream.sync()
    assert np.array_equal(cp.asnumpy(x), np.arange(1000, dtype=np.float32) * 2)


TMA_SOURCE = r"""
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

// One 8 x 16 float tile at (row y0, column x0) loaded by TMA into shared
// memory, then written out row by row.
extern "C" __global__ void tma_tile(const __grid_constant__ TensorMap map, float* out, int x0, int y0)
{
    __shared__ alignas(128) float tile[8 * 16];
    __shared__ alignas(8) unsigned long long barrier;
    unsigned bar = (unsigned)__cvta_generic_to_shared(&barrier);
    unsigned dst = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(8 * 16 * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x0), "r"(y0), "r"(bar) : "memory");
    }
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\tselp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(bar) : "memory");
    }
    for (int i = threadIdx.x; i < 8 * 16; i += blockDim.x) out[i] = tile[i];
}
"""


def test_tensor_map_read_by_a_tma_kernel(device, stream):
    if device.compute_capability < (9, 0):
        pytest.skip(f"TMA needs sm_90 or newer; this device is sm_{device.arch}")
    rows, cols = 32, 64
    src_host = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    src = device.allocate(src_host.nbytes, stream=stream)
    out = device.allocate(8 * 16 * 4, stream=stream)
    src_view = StridedMemoryView.from_buffer(src, (rows, cols), dtype=np.float32)
    src_view.copy_from(StridedMemoryView.from_dlpack(src_host, -1), stream)
    tensor_map = src_view.as_tensor_map((8, 16))
    assert tensor_map.device.device_id == device.device_id
    assert "tiled" in repr(tensor_map) and "FLOAT32" in repr(tensor_map)
    code = Program(TMA_SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}", std="c++17")).compile("cubin")
    kernel = code.get_kernel("tma_tile")
    launch(stream, LaunchConfig(grid=1, block=128), kernel, tensor_map, out, np.int32(16), np.int32(8))
    result = np.zeros((8, 16), dtype=np.float32)
    StridedMemoryView.from_buffer(out, (8, 16), dtype=np.float32).copy_to(
        StridedMemoryView.from_dlpack(result, -1), stream)
    assert np.array_equal(result, src_host[8:16, 16:32])
    # The same map pointed at another array of the same layout.
    other_host = src_host * 10
    other = device.allocate(src_host.nbytes, stream=stream)
    other_view = StridedMemoryView.from_buffer(other, (rows, cols), dtype=np.float32)
    other_view.copy_from(StridedMemoryView.from_dlpack(other_host, -1), stream)
    tensor_map.replace_address(other_view)
    launch(stream, LaunchConfig(grid=1, block=128), kernel, tensor_map, out, np.int32(0), np.int32(0))
    StridedMemoryView.from_buffer(out, (8, 16), dtype=np.float32).copy_to(
        StridedMemoryView.from_dlpack(result, -1), stream)
    assert np.array_equal(result, other_host[0:8, 0:16])
    for b in (src, out, other):
        b.close(stream)

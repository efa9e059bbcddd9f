"""With JAX: a kernel of ours reading a JAX array (JAX arrays are immutable,
so it writes into a Buffer of ours), and that Buffer read by JAX through
DLPack, both without a copy."""
import ctypes
import os
import sys
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _gpu import device_or_exit  # noqa: E402

from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch  # noqa: E402

SOURCE = r"""
extern "C" __global__ void scaled_copy(const float* src, float* dst, float factor, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = factor * src[i];
}
"""

N = 1 << 16

# JAX otherwise takes most of the GPU's memory when it starts.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

device = device_or_exit(Device)
try:
    import jax
    import jax.dlpack
    import jax.numpy as jnp
except ImportError as error:
    print(f"no JAX: {error}; skipped")
    sys.exit(0)
try:
    gpu = jax.devices("gpu")[0]
except RuntimeError as error:
    print(f"no JAX: no GPU backend ({' '.join(str(error).split())}); skipped")
    sys.exit(0)
# Starting up, JAX makes a context on every GPU and leaves the last one
# current on this thread; streams and events are made in the current context.
device.set_current()


def step(name: str, check: Callable[[], bool]) -> bool:
    # Names the step that failed rather than leaving a bare traceback.
    try:
        return check()
    except Exception as error:
        print(f"{name}: {error.__class__.__name__}: {error}")
        return False


def device_address(array: Any) -> int:
    # A single-device GPU array describes itself through the CUDA Array
    # Interface; its buffer pointer is the fallback.
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    return int(array.unsafe_buffer_pointer())


kernel = Program(SOURCE, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin").get_kernel("scaled_copy")
config = LaunchConfig(grid=(N + 255) // 256, block=256)
own = device.create_stream()
buffer = device.allocate(N * 4, stream=own)
expected = jax.device_put(3 * jnp.arange(N, dtype=jnp.float32), gpu)


def ours_on_theirs() -> bool:
    # Their array, read in place by our kernel: JAX has no stream to share,
    # so its work is finished before ours starts.
    x = jax.device_put(jnp.arange(N, dtype=jnp.float32), gpu)
    x.block_until_ready()
    launch(own, config, kernel, device_address(x), buffer, ctypes.c_float(3.0), ctypes.c_size_t(N))
    own.sync()
    return True


def theirs_on_ours() -> bool:
    # Our buffer in JAX through DLPack (bytes, viewed as float32), checked
    # by JAX against the values our kernel wrote.
    raw = jax.dlpack.from_dlpack(buffer)
    if raw.unsafe_buffer_pointer() != int(buffer.handle):
        raise RuntimeError("JAX copied the Buffer instead of sharing it")
    values = jax.lax.bitcast_convert_type(raw.reshape(N, 4), jnp.float32)
    return bool(jnp.array_equal(values, expected))


first = step("our kernel on a JAX array", ours_on_theirs)
second = first and step("a Buffer through DLPack in JAX", theirs_on_ours)
print(f"our kernel on a JAX array: {'OK' if first else 'FAILED'}; "
      f"a Buffer through DLPack in JAX: {'OK' if second else 'FAILED'}")
sys.exit(0 if first and second else 1)

#!/usr/bin/env python3
"""Runs a cuda.bindings sample on cubind.bindings or on NVIDIA's cuda.bindings.

    python examples/python/run_example.py --impl cubind examples/python/bindings/vector_add_drv.py
    python examples/python/run_example.py --impl cuda   examples/python/bindings/vector_add_drv.py

The sample's text is the same for both: with --impl cubind, `cuda.bindings.driver`
and its siblings are made to name the modules of `cubind.bindings` before the
sample runs, and any other `cuda` import fails rather than reaching NVIDIA's
package. Each sample runs in a fresh interpreter (each CUDA library loads once per
process) and the exit status is the sample's. The first line printed names the
module file that answers, so a silent fallback to the other package would show.

--compile-only ARCH imports the sample as a module and calls its
compile_kernels(ARCH) (NVRTC only, no GPU needed).
"""

import argparse
import importlib
import importlib.abc
import os
import runpy
import subprocess
import sys
import types
from typing import Mapping, Optional, Sequence

IMPLEMENTATIONS = ("cubind", "cuda")
# The cuda.bindings modules a sample may import, each also a module of cubind.bindings.
ALIASED = ("driver", "runtime", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "nvml", "cufile", "cudla")


class _OnlyCubind(importlib.abc.MetaPathFinder):
    """Refuses every `cuda.*` module that has no cubind counterpart."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[types.ModuleType] = None) -> None:
        if fullname == "cuda" or fullname.startswith("cuda."):
            raise ImportError(
                f"{fullname} has no cubind.bindings counterpart; the sample must "
                f"import only cuda.bindings.{{{','.join(ALIASED)}}}")
        return None


def use_cubind() -> None:
    """Makes `cuda.bindings.X` resolve to `cubind.bindings.X` in this process."""
    import cubind.bindings

    cuda = types.ModuleType("cuda")
    cuda.__path__ = []
    setattr(cuda, "bindings", cubind.bindings)
    sys.modules["cuda"] = cuda
    sys.modules["cuda.bindings"] = cubind.bindings
    for name in ALIASED:
        try:
            module = importlib.import_module(f"cubind.bindings.{name}")
        except ImportError:
            continue
        sys.modules[f"cuda.bindings.{name}"] = module
        setattr(cubind.bindings, name, module)
    sys.meta_path.insert(0, _OnlyCubind())


def announce(impl: str) -> None:
    """Prints the file of the driver module that will answer, and checks it is the asked one."""
    from cuda.bindings import driver

    location = os.path.realpath(driver.__file__)
    # The module keeps its own name under the alias, whatever folder it lies in.
    expected = "cubind.bindings.driver" if impl == "cubind" else "cuda.bindings.driver"
    print(f"implementation: {impl} ({driver.__name__} from {location})", flush=True)
    if driver.__name__ != expected:
        print(f"error: --impl {impl} asked, but {driver.__name__} ({location}) answered", file=sys.stderr)
        sys.exit(3)


def _child(impl: str, sample: str, compile_arch: Optional[str], argv: Sequence[str]) -> int:
    if impl == "cubind":
        use_cubind()
    announce(impl)
    sample_dir = os.path.dirname(os.path.abspath(sample))
    sys.path.insert(0, sample_dir)
    if compile_arch is None:
        sys.argv = [sample, *argv]
        runpy.run_path(sample, run_name="__main__")
        return 0
    # Imported under its own name, so its `if __name__ == "__main__"` part does not run.
    namespace = runpy.run_path(sample, run_name=os.path.splitext(os.path.basename(sample))[0])
    namespace["compile_kernels"](compile_arch)
    print(f"compiled the kernels of {os.path.basename(sample)} for compute_{compile_arch}")
    return 0


def run_sample(sample: str, impl: str, *, compile_arch: Optional[str] = None, args: Sequence[str] = (),
               timeout: Optional[float] = 600, env: Optional[Mapping[str, str]] = None,
               capture: bool = True) -> "subprocess.CompletedProcess[str]":
    """Runs one sample in a fresh interpreter; returns the subprocess.CompletedProcess
    (with its output as text when `capture`, else printed as it comes)."""
    if impl not in IMPLEMENTATIONS:
        raise ValueError(f"impl must be one of {IMPLEMENTATIONS}, not {impl!r}")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--impl", impl]
    if compile_arch is not None:
        cmd += ["--compile-only", str(compile_arch)]
    cmd += [sample, *args]
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(cmd, capture_output=capture, text=True, timeout=timeout, env=full_env)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--impl", choices=IMPLEMENTATIONS, required=True)
    parser.add_argument("--compile-only", metavar="ARCH", default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("sample")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    if opts.child:
        return _child(opts.impl, opts.sample, opts.compile_only, opts.args)
    result = run_sample(opts.sample, opts.impl, compile_arch=opts.compile_only, args=opts.args,
                        timeout=None, capture=False)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())

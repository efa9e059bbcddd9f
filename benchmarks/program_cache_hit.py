"""A program cache hit, cubind.core against NVIDIA's cuda.core 1.2, side by side in one run.

A hit is `Program(source, "c++", options).compile("cubin", cache=cache)` for a
program compiled once before: the key is made (the source, the options and
NVRTC's version hashed) and the cached ObjectCode returned, with no NVRTC
compile. Timed for InMemoryProgramCache and for FileStreamProgramCache (a
folder of its own per side), per side best of rounds, the sides in rotating
order so a drift of the machine's clock does not fall on one. No GPU is
needed: the target architecture is given, and nothing is loaded.

Goal (issue "cubind.core in Python, part 2"): cubind at most half of
cuda.core's time.

    python3 benchmarks/program_cache_hit.py
"""
import os
import shutil
import sys
import tempfile
import timeit

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""
ARCH = "sm_90"
ROUNDS = 7
NUMBER = 200


def side(core, utils, folder):
    """(name of cache, function timing one hit) for each cache kind of one package."""
    options = core.ProgramOptions(arch=ARCH, std="c++17")
    caches = {
        "InMemoryProgramCache": utils.InMemoryProgramCache(),
        "FileStreamProgramCache": utils.FileStreamProgramCache(folder),
    }
    hits = {}
    for name, cache in caches.items():
        first = core.Program(SOURCE, "c++", options).compile("cubin", cache=cache)

        def hit(cache=cache, first=first):
            code = core.Program(SOURCE, "c++", options).compile("cubin", cache=cache)
            assert len(code.code) == len(first.code)

        hit()
        hits[name] = hit
    return hits


def main():
    import cubind.core as cb
    import cubind.core.utils as cbu

    try:
        import cuda.core as cc
        import cuda.core.utils as ccu
    except ImportError:
        cc = ccu = None
    root = tempfile.mkdtemp(prefix="cubind_cache_bench_")
    try:
        sides = {"cubind": side(cb, cbu, os.path.join(root, "cubind"))}
        if cc is not None:
            sides["cuda.core"] = side(cc, ccu, os.path.join(root, "cuda_core"))
        best = {s: {} for s in sides}
        order = list(sides)
        for r in range(ROUNDS):
            for s in order[r % len(order):] + order[:r % len(order)]:
                for name, fn in sides[s].items():
                    t = timeit.timeit(fn, number=NUMBER) / NUMBER * 1e6
                    best[s][name] = min(best[s].get(name, float("inf")), t)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    print("| program cache hit | cubind us | cuda.core us | cubind / cuda.core | goal |")
    print("|---|---:|---:|---:|---:|")
    for name in best["cubind"]:
        ours = best["cubind"][name]
        theirs = best.get("cuda.core", {}).get(name)
        ratio = f"{ours / theirs:.2f}" if theirs else "-"
        theirs_text = f"{theirs:.1f}" if theirs else "not installed"
        print(f"| {name} | {ours:.1f} | {theirs_text} | {ratio} | <= 0.50 |")
    print(f"best of {ROUNDS} rounds of {NUMBER} hits; Program(...) made anew for each hit, as a program does")
    return 0


if __name__ == "__main__":
    sys.exit(main())

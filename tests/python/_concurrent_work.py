"""Many threads working at once through cubind.core, each checking its own result.

    python _concurrent_work.py CASE THREADS ROUNDS

compile: each thread compiles, with its own Program, a kernel that stores its
own constant, to PTX and to CUBIN, and checks that its PTX holds its constant
and its kernel's name and that its CUBIN is an ELF naming its kernel; then the
PTX is compared with the same source compiled alone. launch (GPU): each thread
makes its own stream, fills its own buffer with its own value by a kernel
launch, copies it back and checks every element.

Prints `# result {json}` with the failures; run in a child process by
test_threads.py, so that a crash counts as a failure.
"""
import json
import sys
import threading
import traceback

ARCH = "sm_90"


def kernel_source(i):
    return f'extern "C" __global__ void fill_{i}(int* p, int n) {{ int k = threadIdx.x; if (k < n) p[k] = {1000 + i}; }}'


def compile_case(nthreads):
    from cubind.core import Program, ProgramOptions
    alone = {i: Program(kernel_source(i), "c++", ProgramOptions(arch=ARCH)).compile("ptx").code
             for i in range(nthreads)}

    def work(i):
        ptx = Program(kernel_source(i), "c++", ProgramOptions(arch=ARCH, name=f"fill_{i}.cu")).compile("ptx")
        text = ptx.code.decode()
        assert f".entry fill_{i}(" in text, f"thread {i}: its kernel is missing from its PTX"
        assert str(1000 + i) in text, f"thread {i}: its constant is missing from its PTX"
        others = [j for j in range(nthreads) if j != i and f".entry fill_{j}(" in text]
        assert not others, f"thread {i}: PTX holds the kernels of threads {others}"
        assert ptx.code == alone[i], f"thread {i}: PTX differs from the same source compiled alone"
        cubin = Program(kernel_source(i), "c++", ProgramOptions(arch=ARCH)).compile("cubin").code
        assert cubin[:4] == b"\x7fELF" and f"fill_{i}".encode() in cubin, f"thread {i}: bad CUBIN"
    return work


def launch_case(nthreads):
    import ctypes

    import numpy as np
    from cubind.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch
    device = Device(0)
    device.set_current()
    source = 'extern "C" __global__ void fill(int* p, int value, int n) ' \
             '{ int k = blockIdx.x * blockDim.x + threadIdx.x; if (k < n) p[k] = value; }'
    code = Program(source, "c++", ProgramOptions(arch=f"sm_{device.arch}")).compile("cubin")
    kernel = code.get_kernel("fill")
    n = 1 << 16

    def work(i):
        own = Device(0)  # this thread's Device object, and its current context
        own.set_current()
        stream = own.create_stream()
        for repeat in range(20):
            value = 1000 * i + repeat
            buffer = own.allocate(4 * n, stream=stream)
            launch(stream, LaunchConfig(grid=n // 256, block=256), kernel, buffer, value, n)
            host = LegacyPinnedMemoryResource().allocate(4 * n, stream=stream)
            buffer.copy_to(host, stream=stream)
            stream.sync()
            got = np.ctypeslib.as_array((ctypes.c_int * n).from_address(int(host.handle)))
            assert (got == value).all(), f"thread {i} repeat {repeat}: {int((got != value).sum())} wrong elements"
            host.close()
            buffer.close(stream)
        stream.close()
    return work


CASES = {"compile": compile_case, "launch": launch_case}


def main():
    case, nthreads, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    work = CASES[case](nthreads)
    failures = []
    for round_ in range(rounds):
        barrier = threading.Barrier(nthreads)

        def run(i):
            try:
                barrier.wait()
                work(i)
            except BaseException:  # noqa: BLE001 - every failure is reported
                failures.append(f"round {round_} thread {i}:\n{traceback.format_exc()}")

        threads = [threading.Thread(target=run, args=(i,)) for i in range(nthreads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print("# result " + json.dumps({"case": case, "threads": nthreads, "rounds": rounds,
                                    "failures": failures[:5], "failed": len(failures)}), flush=True)


if __name__ == "__main__":
    main()

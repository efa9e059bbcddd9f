"""Processes that end with CUDA work and objects still alive, for test_shutdown.py.

    python _shutdown_scenarios.py API SCENARIO [ORDER] [ENDING]

API is "bindings" (cubind.bindings.driver) or "core" (cubind.core). Each
scenario prints "# ready" once its objects exist and its work is queued, then
the process ends as ENDING says: "return" (falls off the end of the script),
"exit" (sys.exit(0) with the objects still referenced from a frame) or
"raise" (an uncaught ScenarioError). ORDER is the order the objects are made
in, one letter each: s stream, b buffer (with a free still queued), e event,
k loaded code with a kernel launched, g graph launched, c host callback queued.

With CUBIND_SCENARIO_STAND_IN=1 the process runs on the stand-in driver of
fake_driver/ (the caller puts it first on LD_LIBRARY_PATH): there is no real
kernel, so the code is the stand-in's and nothing waits on a device.
"""
import ctypes
import faulthandler
import os
import signal
import sys
import threading
import time

STAND_IN = os.environ.get("CUBIND_SCENARIO_STAND_IN") == "1"
# test_shutdown.py sends SIGUSR1 to a scenario that outlives its timeout.
faulthandler.register(signal.SIGUSR1, all_threads=True)
# Long enough that the frees, events, callbacks and graphs queued behind it are
# still pending when the process ends; short enough not to slow the suite.
SPIN_CYCLES = 200_000_000


class ScenarioError(Exception):
    pass


def sleeping_callback(*_):
    time.sleep(0.5)


# --- cubind.bindings ---------------------------------------------------------

class Bindings:
    def __init__(self):
        from cubind.bindings import driver
        self.cu = driver
        self.ok(driver.cuInit(0))
        self.dev = self.ok(driver.cuDeviceGet(0))
        self.ctx = self.ok(driver.cuDevicePrimaryCtxRetain(self.dev))
        self.ok(driver.cuCtxSetCurrent(self.ctx))
        self.keep = []
        self.stream = self.make_stream()
        self.spin = None
        if not STAND_IN:
            attribute = driver.CUdevice_attribute
            major = self.ok(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
            minor = self.ok(driver.cuDeviceGetAttribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
            import _kernels
            self.cubin = _kernels.compile_source(major * 10 + minor, "cubin")

    def ok(self, result):
        assert result[0] == self.cu.CUresult.CUDA_SUCCESS, result
        return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]

    def make_stream(self):
        return self.ok(self.cu.cuStreamCreateWithPriority(self.cu.CUstream_flags.CU_STREAM_NON_BLOCKING, 0))

    def busy(self):
        """Queues a kernel that keeps the stream busy, where there is a device."""
        if self.spin is not None:
            self.ok(self.cu.cuLaunchKernel(self.spin, 1, 1, 1, 1, 1, 1, 0, self.stream,
                                           ((SPIN_CYCLES,), (ctypes.c_longlong,)), None))

    def make(self, letter):
        cu = self.cu
        if letter == "s":
            self.keep.append(self.make_stream())
        elif letter == "b":
            pool = self.ok(cu.cuDeviceGetDefaultMemPool(self.dev))
            self.busy()
            dptr = self.ok(cu.cuMemAllocFromPoolAsync(1 << 20, pool, self.stream))
            self.ok(cu.cuMemFreeAsync(dptr, self.stream))
            self.keep.append(self.ok(cu.cuMemAllocFromPoolAsync(1 << 20, pool, self.stream)))
        elif letter == "e":
            event = self.ok(cu.cuEventCreate(0))
            self.busy()
            self.ok(cu.cuEventRecord(event, self.stream))
            self.keep.append(event)
        elif letter == "k":
            if STAND_IN:
                library = self.ok(cu.cuLibraryLoadData(b"stand-in cubin", None, None, 0, None, None, 0))
                self.keep += [library, self.ok(cu.cuLibraryGetKernel(library, b"k8"))]
            else:
                module = self.ok(cu.cuModuleLoadData(self.cubin))
                library = self.ok(cu.cuLibraryLoadData(self.cubin, None, None, 0, None, None, 0))
                self.spin = self.ok(cu.cuModuleGetFunction(module, b"spin"))
                self.keep += [module, library, self.ok(cu.cuLibraryGetKernel(library, b"spin"))]
                self.busy()
        elif letter == "g":
            capture = self.make_stream()
            self.ok(cu.cuStreamBeginCapture(capture, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))
            self.ok(cu.cuLaunchHostFunc(capture, sleeping_callback, "in the graph"))
            graph = self.ok(cu.cuStreamEndCapture(capture))
            graph_exec = self.ok(cu.cuGraphInstantiate(graph, 0))
            self.busy()
            self.ok(cu.cuGraphLaunch(graph_exec, self.stream))
            self.keep += [capture, graph, graph_exec]
        elif letter == "c":
            self.busy()
            self.ok(cu.cuLaunchHostFunc(self.stream, sleeping_callback, "queued"))
        else:
            raise ValueError(letter)

    def on_another_thread(self):
        """A thread with the context current, its own stream and work queued, left running."""
        started = threading.Event()

        def work():
            self.ok(self.cu.cuCtxSetCurrent(self.ctx))
            stream = self.make_stream()
            self.ok(self.cu.cuLaunchHostFunc(stream, sleeping_callback, "from the thread"))
            started.set()
            time.sleep(60)

        threading.Thread(target=work, daemon=True).start()
        assert started.wait(30)

    def touch_after_fork(self):
        # What the driver answers a forked child is its own (driver 580.159
        # answered CUDA_SUCCESS); the call must return, as a status.
        status = self.cu.cuStreamSynchronize(self.stream)[0]
        assert isinstance(status, self.cu.CUresult), repr(status)
        return status.name

    def sync(self):
        self.ok(self.cu.cuStreamSynchronize(self.stream))


# --- cubind.core ---------------------------------------------------------------

class Core:
    def __init__(self):
        import cubind.core as cc
        self.cc = cc
        self.dev = cc.Device(0)
        self.dev.set_current()
        self.stream = self.dev.create_stream()
        self.keep = []
        self.spin = None
        if not STAND_IN:
            source = ('extern "C" __global__ void spin(long long cycles) '
                      '{ long long start = clock64(); while (clock64() - start < cycles) { } }')
            options = cc.ProgramOptions(arch=f"sm_{self.dev.arch}")
            self.code = cc.Program(source, "c++", options).compile("cubin")
        else:
            self.code = cc.ObjectCode.from_cubin(b"stand-in cubin", name="standin")

    def busy(self):
        if self.spin is not None:
            self.cc.launch(self.stream, self.cc.LaunchConfig(grid=1, block=1), self.spin, SPIN_CYCLES)

    def make(self, letter):
        if letter == "s":
            self.keep.append(self.dev.create_stream())
        elif letter == "b":
            self.busy()
            self.dev.allocate(1 << 20, stream=self.stream).close(self.stream)
            self.keep.append(self.dev.allocate(1 << 20, stream=self.stream))
        elif letter == "e":
            self.busy()
            self.keep.append(self.stream.record())
        elif letter == "k":
            if STAND_IN:
                self.keep.append(self.code.get_kernel("k8"))
            else:
                self.spin = self.code.get_kernel("spin")
                self.busy()
        elif letter == "g":
            # cubind.core has no graph builder yet: a graph captured through the
            # driver bindings, launched on cubind.core's stream.
            from cubind.bindings import driver as cu
            capture = self.dev.create_stream()
            handle = cu.CUstream(int(capture.handle))
            assert cu.cuStreamBeginCapture(handle, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)[0] == 0
            assert cu.cuLaunchHostFunc(handle, sleeping_callback, "in the graph")[0] == 0
            status, graph = cu.cuStreamEndCapture(handle)
            assert status == 0
            status, graph_exec = cu.cuGraphInstantiate(graph, 0)
            assert status == 0
            self.busy()
            assert cu.cuGraphLaunch(graph_exec, cu.CUstream(int(self.stream.handle)))[0] == 0
            self.keep += [capture, graph, graph_exec]
        elif letter == "c":
            self.busy()
            self.stream.launch_host_func(sleeping_callback)
        else:
            raise ValueError(letter)

    def on_another_thread(self):
        started = threading.Event()

        def work():
            self.dev.set_current()
            stream = self.dev.create_stream()
            stream.launch_host_func(sleeping_callback)
            self.keep.append(stream)
            started.set()
            time.sleep(60)

        threading.Thread(target=work, daemon=True).start()
        assert started.wait(30)

    def touch_after_fork(self):
        # A result or a CUDAError, whichever the driver answers.
        try:
            self.stream.sync()
        except self.cc.CUDAError as e:
            assert "CUDA_ERROR" in str(e), str(e)
            return str(e)
        return "CUDA_SUCCESS"

    def sync(self):
        self.stream.sync()


# --- the scenarios ---------------------------------------------------------------

def end(ending, world):
    """Ends the process with `world` still referenced from this frame."""
    sys.stdout.write("# ready\n")
    sys.stdout.flush()
    if ending == "exit":
        sys.exit(0)
    if ending == "raise":
        raise ScenarioError(f"uncaught, with {len(world.keep)} objects alive")
    assert ending == "return", ending


def fork(world, touch):
    """Forks with everything alive. The child either exits at once (its
    interpreter still finalizes the objects it inherited) or calls CUDA, which
    must fail with an error, not crash. The parent goes on using CUDA."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        if touch:
            try:
                print(f"# child saw: {world.touch_after_fork()}", flush=True)
            except BaseException as e:  # the child reports, the parent judges by the exit code
                print(f"# child failed: {e!r}", flush=True)
                code = 3
        sys.exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status:#x}"
    world.sync()


def main(argv):
    api, scenario = argv[1], argv[2]
    order = argv[3] if len(argv) > 3 else "sbekgc"
    ending = argv[4] if len(argv) > 4 else "return"
    world = Bindings() if api == "bindings" else Core()
    # The kernel first, wherever the order puts it, so that every later piece
    # of work queues behind a running one.
    if "k" in order:
        world.make("k")
    for letter in order.replace("k", ""):
        world.make(letter)
    if scenario == "objects":
        pass
    elif scenario == "thread":
        world.on_another_thread()
    elif scenario == "fork_quiet":
        fork(world, touch=False)
    elif scenario == "fork_touch":
        fork(world, touch=True)
    else:
        raise ValueError(scenario)
    end(ending, world)


if __name__ == "__main__":
    main(sys.argv)

"""Races the first call into one CUDA library from many threads, in fresh processes.

    python _first_call_race.py CASE REPETITIONS THREADS

The script imports cubind (which loads no CUDA library), then forks one child
per repetition: each child starts THREADS threads that wait at a barrier and
then all make their first call at once, each thread a different entry point
of the same library, so that they race the one-time load of its table. Every
thread checks what it got; the child then checks the library's state once more
from one thread and exits 0, or 1 with the failures on stderr. The parent
prints one line `# result {json}`: repetitions, failures (exit statuses and
signals with the repetition's stderr).

Cases: nvrtc, nvjitlink (the real libraries), driver and core_device (against
the stand-in driver of fake_driver/, whose directory must be first on
LD_LIBRARY_PATH), and gpu_device (the first Device(i).set_current() of each
device from every thread, on a real driver).
"""
import json
import os
import sys
import threading
import traceback


def nvrtc_case():
    from cubind.bindings import nvrtc
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    source = b'extern "C" __global__ void k(int* p) { *p = 1; }'

    def version():
        status, major, minor = nvrtc.nvrtcVersion()
        assert status is ok and major == 13, (status, major, minor)

    def archs():
        status, count = nvrtc.nvrtcGetNumSupportedArchs()
        assert status is ok and count > 0, (status, count)

    def program():
        status, prog = nvrtc.nvrtcCreateProgram(source, b"k.cu", 0, [], [])
        assert status is ok, status
        assert nvrtc.nvrtcDestroyProgram(prog)[0] is ok

    def error_string():
        status, text = nvrtc.nvrtcGetErrorString(nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_INPUT)
        assert status is ok and text == b"NVRTC_ERROR_INVALID_INPUT", text

    def final():
        assert nvrtc.nvrtcVersion()[1] == 13
    return [version, archs, program, error_string], final


def nvjitlink_case():
    from cubind.bindings import nvjitlink

    def version():
        assert tuple(nvjitlink.version())[0] == 13

    def create():
        handle = nvjitlink.create(1, ["-arch=sm_90"])
        nvjitlink.destroy(handle)

    def bad_option():
        try:
            nvjitlink.create(1, ["-no-such-option"])
        except nvjitlink.nvJitLinkError:
            pass
        else:
            raise AssertionError("nvJitLinkCreate accepted -no-such-option")

    def final():
        assert tuple(nvjitlink.version())[0] == 13
    return [version, create, bad_option], final


def driver_case():
    from cubind.bindings import driver
    ok = driver.CUresult.CUDA_SUCCESS

    def version():
        assert driver.cuDriverGetVersion() == (ok, 13000)

    def init():
        assert driver.cuInit(0) == (ok,)

    def count():
        assert driver.cuDeviceGetCount() == (ok, 1)

    def name():
        assert driver.cuDeviceGetName(64, 0) == (ok, b"Stand-in GPU")

    def missing():
        # An entry point the stand-in lacks: each thread gets the same clear error.
        try:
            driver.cuMemAlloc(16)
        except RuntimeError as e:
            assert "cuMemAlloc" in str(e), str(e)
        else:
            raise AssertionError("no RuntimeError for cuMemAlloc")

    def final():
        assert driver.cuDriverGetVersion() == (ok, 13000)
    return [version, init, count, name, missing], final


def core_device_case():
    import ctypes
    import cubind.core as cc
    fake = ctypes.CDLL("libcuda.so.1")
    contexts = []

    def first_device():
        device = cc.Device(0)
        device.set_current()
        contexts.append(int(device.context.handle))

    def final():
        retains = ctypes.c_int.in_dll(fake, "fake_primary_retains").value
        assert retains == 1, f"the primary context was retained {retains} times"
        assert len(set(contexts)) == 1, contexts
    return [first_device], final


def gpu_device_case():
    import cubind.core as cc
    seen = {}
    lock = threading.Lock()

    def first_devices():
        for device in cc.Device.get_all_devices():
            device.set_current()
            handle = int(device.context.handle)
            with lock:
                seen.setdefault(device.device_id, set()).add(handle)

    def final():
        assert seen, "no device"
        for device_id, handles in seen.items():
            assert len(handles) == 1, f"device {device_id}: {len(handles)} primary contexts"
    return [first_devices], final


CASES = {"nvrtc": nvrtc_case, "nvjitlink": nvjitlink_case, "driver": driver_case,
         "core_device": core_device_case, "gpu_device": gpu_device_case}


def race(case, nthreads):
    calls, final = CASES[case]()
    barrier = threading.Barrier(nthreads)
    errors = []

    def run(call):
        try:
            barrier.wait()
            call()
        except BaseException:  # noqa: BLE001 - every failure is reported
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=run, args=(calls[i % len(calls)],)) for i in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not errors:
        try:
            final()
        except BaseException:  # noqa: BLE001
            errors.append(traceback.format_exc())
    return errors


def main():
    case, repetitions, nthreads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    # Imports only: no CUDA library is loaded before the fork.
    import cubind.bindings.driver  # noqa: F401
    import cubind.bindings.nvjitlink  # noqa: F401
    import cubind.bindings.nvrtc  # noqa: F401
    import cubind.core  # noqa: F401
    failures = []
    for repetition in range(repetitions):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            code = 0
            try:
                errors = race(case, nthreads)
            except BaseException:  # noqa: BLE001
                errors = [traceback.format_exc()]
            if errors:
                os.write(write_end, "\n".join(errors[:3]).encode()[-4000:])
                code = 1
            os.close(write_end)
            os._exit(code)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as f:
            report = f.read().decode(errors="replace")
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            failures.append(f"repetition {repetition}: killed by signal {os.WTERMSIG(status)}\n{report}")
        elif os.WEXITSTATUS(status) != 0:
            failures.append(f"repetition {repetition}: exit status {os.WEXITSTATUS(status)}\n{report}")
    print("# result " + json.dumps({"case": case, "repetitions": repetitions, "threads": nthreads,
                                    "failures": failures}), flush=True)


if __name__ == "__main__":
    main()

"""cubind.core.checkpoint without a GPU: the arguments Process refuses before
any driver call, as cuda.core.checkpoint refuses them, and, against the
stand-in driver (tests/python/fake_driver/fake_interop.c), the states a
process moves through, what reaches cuCheckpointProcess*, and the errors of a
driver that refuses: a clear one naming the operation and the pid."""
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from conftest import FAKE_DRIVER_GRAPHS, FAKE_DRIVER_INTEROP, FAKE_DRIVER_SOURCE, STAND_IN_CHECKS, run_with_fake_driver

from cubind.core.checkpoint import Process

PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    fake = ctypes.CDLL("libcuda.so.1")
    from cubind.core import CUDAError
    from cubind.core.checkpoint import Process

    def refuse(status):
        ctypes.c_int.in_dll(fake, "fake_checkpoint_refuse").value = status
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


@pytest.mark.parametrize("pid, kind, words", [
    (True, TypeError, "pid must be an int, not bool"),
    (1.0, TypeError, "pid must be an int, not float"),
    ("12", TypeError, "pid must be an int, not str"),
    (None, TypeError, "pid must be an int, not NoneType"),
    (0, ValueError, "pid must be a positive int, got 0"),
    (-5, ValueError, "pid must be a positive int, got -5"),
    (2**31, ValueError, "at most 2**31 - 1"),
])
def test_a_bad_pid_is_refused_with_cuda_cores_type(pid, kind, words):
    with pytest.raises(kind, match=words.replace("*", r"\*")):
        Process(pid)


def test_pid_repr_and_pickle():
    p = Process(4242)
    assert p.pid == 4242
    assert repr(p) == "<Process pid=4242>"
    assert pickle.loads(pickle.dumps(p)).pid == 4242


def test_checkpoint_is_imported_with_the_package_on_first_use():
    code = ("import sys, cubind.core as cc; assert 'cubind.core.checkpoint' not in sys.modules; "
            "assert cc.checkpoint.Process.__name__ == 'Process'; assert 'checkpoint' in dir(cc)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_process_walks_through_the_states_and_the_arguments_reach_the_driver(fake_driver_dir):
    run(fake_driver_dir, """
        p = Process(31337)
        assert p.state == "running"
        p.lock(timeout_ms=250)
        assert fake_int("fake_checkpoint_lock_timeout", ctypes.c_uint) == 250
        assert p.state == "locked"
        assert p.restore_thread_id == 31337 + 1000
        p.checkpoint()
        assert p.state == "checkpointed"
        p.restore()
        assert fake_int("fake_checkpoint_restore_pairs", ctypes.c_uint) == 0
        assert p.state == "locked"
        p.unlock()
        assert p.state == "running"
        p.lock()
        assert fake_int("fake_checkpoint_lock_timeout", ctypes.c_uint) == 0
        p.unlock()
    """)


def test_restore_remaps_gpus_given_as_strings_bytes_or_uuid_objects(fake_driver_dir):
    run(fake_driver_dir, """
        from cubind.bindings import driver
        p = Process(4000)
        old = "00112233-4455-6677-8899-aabbccddeeff"
        new = "GPU-ffeeddcc-bbaa-9988-7766-554433221100"
        for mapping in ({old: new}, {bytes.fromhex(old.replace("-", "")): new}):
            p.lock(); p.checkpoint()
            p.restore(gpu_mapping=mapping)
            assert fake_int("fake_checkpoint_restore_pairs", ctypes.c_uint) == 1
            seen = bytes((ctypes.c_ubyte * 32).in_dll(fake, "fake_checkpoint_restore_uuids"))
            assert seen == bytes.fromhex(old.replace("-", "") + new[4:].replace("-", "")), seen.hex()
            p.unlock()
        uuid = driver.CUuuid()
        if hasattr(uuid, "bytes"):
            p.lock(); p.checkpoint()
            p.restore({uuid: uuid})
            assert fake_int("fake_checkpoint_restore_pairs", ctypes.c_uint) == 1
            p.unlock()
        # An empty mapping restores onto the same GPUs, as None does.
        p.lock(); p.checkpoint(); p.restore({})
        assert fake_int("fake_checkpoint_restore_pairs", ctypes.c_uint) == 0
        p.unlock()

        raises(TypeError, "gpu_mapping must be a mapping", p.restore, [(old, new)])
        raises(ValueError, "GPU UUID string must be 32 hex characters (with optional hyphens), got 'nope'",
               p.restore, {"nope": new})
        raises(TypeError, "GPU UUID values must be CUDA UUID objects or UUID strings", p.restore, {old: 5})
        raises(ValueError, "has 3 bytes", p.restore, {old: b"abc"})
        assert p.state == "running", "a refused mapping reaches no driver call"
    """)


def test_lock_timeout_is_checked_as_cuda_core_checks_it(fake_driver_dir):
    run(fake_driver_dir, """
        p = Process(4001)
        raises(TypeError, "timeout_ms must be an int, not bool", p.lock, True)
        raises(TypeError, "timeout_ms must be an int, not float", p.lock, 1.5)
        raises(ValueError, "timeout_ms must be >= 0, got -1", p.lock, -1)
        raises(ValueError, "at most 2**32 - 1", p.lock, 2**32)
        assert p.state == "running"
    """)


def test_a_step_out_of_order_is_a_cuda_error_naming_the_operation_and_pid(fake_driver_dir):
    run(fake_driver_dir, """
        p = Process(4002)
        for call, op, api in [(p.unlock, "unlock", "cuCheckpointProcessUnlock"),
                              (p.checkpoint, "checkpoint", "cuCheckpointProcessCheckpoint"),
                              (p.restore, "restore", "cuCheckpointProcessRestore")]:
            try:
                call()
            except CUDAError as e:
                assert e.status == 401 and e.api_function == api, (e.status, e.api_function)
                assert str(e).startswith(f"Process(pid=4002).{op}: {api} failed"), str(e)
            else:
                raise AssertionError(f"{op} of a running process did not raise")
    """)


def test_a_driver_that_refuses_says_so_with_the_operation_and_pid(fake_driver_dir):
    run(fake_driver_dir, """
        p = Process(4003)
        # Not permitted (a container without ptrace rights): the CUDAError itself.
        refuse(800)
        try:
            p.lock()
        except CUDAError as e:
            assert e.status == 800 and "Process(pid=4003).lock: cuCheckpointProcessLock failed" in str(e), str(e)
        else:
            raise AssertionError("lock did not raise")
        # Not supported (or not found): RuntimeError, as cuda.core raises, with the driver's answer.
        for status in (801, 500):
            refuse(status)
            for call, op in [(lambda: p.state, "state"), (lambda: p.restore_thread_id, "restore_thread_id"),
                             (p.lock, "lock"), (p.checkpoint, "checkpoint"), (p.restore, "restore"),
                             (p.unlock, "unlock")]:
                try:
                    call()
                except RuntimeError as e:
                    assert not isinstance(e, CUDAError)
                    text = str(e)
                    assert text.startswith("CUDA checkpointing is not supported by the installed NVIDIA driver"), text
                    assert f"Process(pid=4003).{op}: " in text and str(status) in text, text
                else:
                    raise AssertionError(f"{op} did not raise")
        refuse(0)
        assert p.state == "running"
    """)


def test_a_state_newer_than_the_headers_is_a_runtime_error(fake_driver_dir):
    run(fake_driver_dir, """
        raises(RuntimeError, "Unknown CUDA checkpoint process state: 7 (Process(pid=777).state",
               lambda: Process(777).state)
    """)


def test_a_driver_older_than_cuda_12_8_is_not_supported(tmp_path):
    cc = os.environ.get("CC", "cc")
    folder = tmp_path / "driver"
    folder.mkdir()
    import cubind
    result = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-DFAKE_DRIVER_VERSION=12040", "-I",
                             cubind.get_cuda_include(), "-o", str(folder / "libcuda.so.1"), FAKE_DRIVER_SOURCE,
                             FAKE_DRIVER_GRAPHS, FAKE_DRIVER_INTEROP, "-lpthread"], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"no C compiler for the stand-in driver: {result.stderr[-500:]}")
    run_with_fake_driver(str(folder), STAND_IN_CHECKS + textwrap.dedent("""
        from cubind.core.checkpoint import Process
        raises(RuntimeError, "CUDA checkpointing is not supported by the installed NVIDIA driver. Upgrade to a "
               "driver version with CUDA checkpoint API support. (Process(pid=5).lock: the checkpoint API came in "
               "CUDA 12.8", Process(5).lock)
        raises(RuntimeError, "(Process(pid=6).state: the checkpoint API came in CUDA 12.8", lambda: Process(6).state)
    """))

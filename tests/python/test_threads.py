"""Threads: the one-time load of each library raced from 16 threads, and
concurrent work through cubind.core (docs/concurrency.md states the contract).

The races run in _first_call_race.py: 100 fresh processes per library (forked
before any CUDA library is loaded), 16 threads each making their first call at
once. The driver's races use the stand-in driver of fake_driver/. Concurrent
compiles and launches run in _concurrent_work.py. Both run in child processes,
so that a crash is counted as a failure rather than lost.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = 16
REPETITIONS = 100


def run_child(script, args, env=None, timeout=600):
    full_env = dict(os.environ)
    full_env.update(env or {})
    result = subprocess.run([sys.executable, os.path.join(HERE, script), *map(str, args)],
                            capture_output=True, text=True, cwd=HERE, env=full_env, timeout=timeout)
    lines = [line for line in result.stdout.splitlines() if line.startswith("# result ")]
    assert result.returncode == 0 and lines, (f"{script} {args}: exit {result.returncode}\n"
                                              f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return json.loads(lines[-1][len("# result "):])


def check_race(result):
    failures = result["failures"]
    print(f"\nfirst-call race {result['case']}: {result['repetitions']} processes x {result['threads']} threads, "
          f"{len(failures)} failed")
    assert not failures, f"{len(failures)} of {result['repetitions']} repetitions failed:\n" + "\n".join(failures[:3])


@pytest.mark.parametrize("library", ["nvrtc", "nvjitlink"])
def test_first_call_race(library):
    check_race(run_child("_first_call_race.py", [library, REPETITIONS, THREADS]))


@pytest.mark.parametrize("case", ["driver", "core_device"])
def test_first_call_race_on_the_stand_in_driver(case, fake_driver_dir):
    env = {"LD_LIBRARY_PATH": fake_driver_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")}
    check_race(run_child("_first_call_race.py", [case, REPETITIONS, THREADS], env=env))


def test_sixteen_threads_compile_at_once():
    result = run_child("_concurrent_work.py", ["compile", THREADS, 3])
    print(f"\nconcurrent compile: {result['rounds']} rounds x {result['threads']} threads, {result['failed']} failed")
    assert result["failed"] == 0, "\n".join(result["failures"])


@pytest.mark.gpu
def test_first_device_of_each_id_from_sixteen_threads():
    check_race(run_child("_first_call_race.py", ["gpu_device", 20, THREADS]))


@pytest.mark.gpu
def test_sixteen_threads_launch_on_their_own_streams():
    result = run_child("_concurrent_work.py", ["launch", THREADS, 2])
    print(f"\nconcurrent launches: {result['rounds']} rounds x {result['threads']} threads, {result['failed']} failed")
    assert result["failed"] == 0, "\n".join(result["failures"])

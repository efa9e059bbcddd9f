"""Processes that end with CUDA objects alive and work still queued: streams,
buffers whose frees are pending, recorded events, launched graphs, loaded
modules and kernels, Python host callbacks that sleep, a context current on
another thread, an uncaught exception, and os.fork(). Each scenario runs in a
child process (_shutdown_scenarios.py) under a timeout; it must exit with the
expected code, print no traceback but the one expected, and neither crash nor
hang. docs/concurrency.md ("Shutdown") says what is promised.

The GPU cases run on the real driver. The stand-in driver of fake_driver/
covers the Python side of the same teardown (the order objects and callback
references are released in) on machines without a GPU.
"""
import os
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "_shutdown_scenarios.py")
TIMEOUT = 60

# The order objects are made in (and so the reverse of the order a list of
# them is released in): s stream, b buffer with a pending free, e event,
# k code and kernel, g graph, c host callback.
ORDERS = ["ksbegc", "kcgebs", "kbcsge"]
ENDINGS = ["return", "exit", "raise"]
# Lines that mean the process did not end cleanly, whatever its exit code.
BAD_SIGNS = ["Fatal Python error", "Exception ignored", "Segmentation fault", "terminate called",
             "core dumped", "AddressSanitizer", "double free"]


def run_scenario(api, scenario, order="ksbegc", ending="return", stand_in_dir=None):
    env = dict(os.environ)
    if stand_in_dir is not None:
        env["LD_LIBRARY_PATH"] = stand_in_dir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        env["CUBIND_SCENARIO_STAND_IN"] = "1"
    args = [sys.executable, SCRIPT, api, scenario, order, ending]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE,
                          env=env) as child:
        try:
            stdout, stderr = child.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            # The scenario dumps every thread's stack on SIGUSR1: the report
            # says where it hung.
            child.send_signal(signal.SIGUSR1)
            time.sleep(2)
            child.kill()
            stdout, stderr = child.communicate()
            pytest.fail(f"{' '.join(args[1:])}: still running after {TIMEOUT} s (a hang at exit?)\n"
                        f"stdout:\n{stdout[-3000:]}\nstderr (the stacks at the timeout last):\n{stderr[-8000:]}")
    result = subprocess.CompletedProcess(args, child.returncode, stdout, stderr)
    report = (f"{' '.join(args[1:])}: exit {result.returncode}\n"
              f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-6000:]}")
    assert "# ready" in result.stdout, report
    expected = 1 if ending == "raise" else 0
    assert result.returncode == expected, report
    tracebacks = result.stderr.count("Traceback (most recent call last)")
    if ending == "raise":
        assert tracebacks == 1 and "ScenarioError: uncaught" in result.stderr, report
    else:
        assert tracebacks == 0, report
    for sign in BAD_SIGNS:
        assert sign not in result.stderr, report
    return result


# --- on a GPU ------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_exit_with_work_and_objects_alive(api, order, ending):
    run_scenario(api, "objects", order, ending)


@pytest.mark.gpu
@pytest.mark.parametrize("ending", ["return", "raise"])
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_exit_while_another_thread_has_the_context_current(api, ending):
    run_scenario(api, "thread", ending=ending)


@pytest.mark.gpu
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_a_forked_child_that_leaves_cuda_alone_exits_cleanly(api):
    run_scenario(api, "fork_quiet")


@pytest.mark.gpu
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_a_forked_child_that_calls_cuda_gets_an_answer_not_a_crash(api):
    # The child's exit code is checked by the scenario: 0 only when the call
    # returned a status or raised CUDAError (a crash or a hang fails here).
    result = run_scenario(api, "fork_touch")
    assert "# child saw: CUDA_" in result.stdout, result.stdout


# --- on the stand-in driver -------------------------------------------------------

@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_exit_with_objects_alive_on_the_stand_in_driver(api, order, ending, fake_driver_dir):
    run_scenario(api, "objects", order, ending, stand_in_dir=fake_driver_dir)


@pytest.mark.parametrize("scenario", ["thread", "fork_quiet"])
@pytest.mark.parametrize("api", ["bindings", "core"])
def test_threads_and_forks_on_the_stand_in_driver(api, scenario, fake_driver_dir):
    run_scenario(api, scenario, stand_in_dir=fake_driver_dir)


def test_the_scenarios_reject_what_they_do_not_know(fake_driver_dir):
    env = dict(os.environ, CUBIND_SCENARIO_STAND_IN="1",
               LD_LIBRARY_PATH=fake_driver_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    result = subprocess.run([sys.executable, SCRIPT, "core", "objects", "sx"], capture_output=True, text=True,
                            cwd=HERE, env=env, timeout=TIMEOUT)
    assert result.returncode == 1 and "ValueError: x" in result.stderr, result.stderr

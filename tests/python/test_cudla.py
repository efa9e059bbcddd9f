"""cubind.bindings.cudla: cuDLA as cuda.bindings.cudla binds it. libcudla.so.1 exists
on Tegra parts only: here the module imports, and its first call raises an error that
names the library and every place tried; arguments are checked before that."""
import json
import os
import pickle
import subprocess
import sys

import pytest

from cubind.bindings import cudla

import cubind

pytestmark = pytest.mark.skipif(cubind.library_status("cudla").get("loaded"),
                                reason="libcudla.so.1 is loaded here (a Tegra part)")


def _not_found():
    with pytest.raises(RuntimeError) as info:
        cudla.get_version()
    return str(info.value)


def test_import_works_and_first_call_names_the_library_and_places_tried():
    text = _not_found()
    assert "cuDLA" in text and "libcudla.so.1" in text
    assert "Tried:" in text
    # The wheel folder and the system loader are among the places listed.
    assert "system loader" in text or "dlopen" in text


def test_override_is_the_only_place_searched(tmp_path):
    missing = tmp_path / "libcudla.so.1"
    code = ("from cubind.bindings import cudla\n"
            "try:\n    cudla.device_get_count()\nexcept RuntimeError as e:\n    print(e)\n")
    env = dict(os.environ, CUBIND_CUDLA_LIBRARY=str(missing))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert f"CUBIND_CUDLA_LIBRARY={missing}" in out.stdout
    assert "no other place was searched" in out.stdout


def test_check_status_and_the_error_class():
    assert cudla.check_status(0) == 0
    with pytest.raises(cudla.CudlaError) as info:
        cudla.check_status(int(cudla.Status.ERROR_INVALID_PARAM))
    assert info.value.status is cudla.Status.ERROR_INVALID_PARAM
    assert cudla.CudlaError.__bases__ == (Exception,)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is cudla.CudlaError and again.status == info.value.status


def test_enums_as_cuda_bindings_names_them():
    assert int(cudla.Status.ERROR_UNKNOWN) == 0x7FFFFFFF
    assert int(cudla.Mode.STANDALONE) == 1
    assert int(cudla.ModuleAttributeType.OUTPUT_TENSOR_DESCRIPTORS) == 3


@pytest.mark.parametrize("call,param", [
    (lambda: cudla.create_device("zero", 0), "device"),
    (lambda: cudla.create_device(0, -1), "flags"),
    (lambda: cudla.device_get_attribute(0, "version"), "attrib"),
    (lambda: cudla.mem_register(0, "ptr", 16, 0), "ptr"),
    (lambda: cudla.set_task_timeout_in_ms(0, 2 ** 40), "timeout"),
    (lambda: cudla.module_unload(0, None), "flags"),
])
def test_bad_input_names_the_parameter_before_the_library_is_needed(call, param):
    with pytest.raises((TypeError, ValueError, OverflowError)) as info:
        call()
    assert param in str(info.value)


def test_python_m_cubind_reports_cudla_missing():
    result = subprocess.run([sys.executable, "-m", "cubind", "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lib = json.loads(result.stdout)["libraries"]["cudla"]
    assert lib["version"] is None and "libcudla.so.1" in lib["error"]


def test_task_lists_read_through_their_counts():
    # cudlaSubmitTask reads numInputTensors addresses at inputTensor: the list sets both.
    import ctypes
    task = cudla.Task()
    assert task.input_tensor == [] and not hasattr(task, "num_input_tensors")
    task.input_tensor = [0x1000, 0x2000]
    task.output_tensor = [0x3000]
    assert list(task.input_tensor) == [0x1000, 0x2000] and list(task.output_tensor) == [0x3000]
    raw = ctypes.cast(task.ptr, ctypes.POINTER(ctypes.c_uint64))
    # cudlaTask: moduleHandle, outputTensor, numOutputTensors, numInputTensors, inputTensor, ...
    assert ctypes.c_uint32.from_address(task.ptr + 16).value == 1
    assert ctypes.c_uint32.from_address(task.ptr + 20).value == 2
    assert list((ctypes.c_uint64 * 2).from_address(raw[3])) == [0x1000, 0x2000]
    with pytest.raises(OverflowError, match=r"inputTensor\[0\]"):
        task.input_tensor = [-1]
    assert list(task.input_tensor) == [0x1000, 0x2000]
    signal = cudla.SignalEvents()
    fence = cudla.Fence()
    signal.eof_fences = [fence, fence]
    assert len(signal.eof_fences) == 2 and not hasattr(signal, "num_events")

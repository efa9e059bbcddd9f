"""The classes that cross to another process pickle through multiprocessing
(its ForkingPickler) as in cuda.core, whether multiprocessing is imported
before cubind.core or after; importing cubind.core alone does not import it."""

from conftest import run_python

CLASSES = ("Event", "DeviceMemoryResource", "PinnedMemoryResource", "IPCAllocationHandle")
CHECK = (
    "missing = [name for name in %r if getattr(cubind.core, name) not in reduction.ForkingPickler._extra_reducers]\n"
    "assert not missing, missing\n" % (CLASSES,)
)


def test_import_leaves_multiprocessing_out_and_registers_when_it_comes():
    result = run_python(
        "import sys\n"
        "import cubind.core\n"
        "assert 'multiprocessing.reduction' not in sys.modules, 'imported by cubind.core'\n"
        "import multiprocessing.reduction as reduction\n"
        + CHECK
        + "from cubind.core import _reduction\n"
        "assert _reduction._FINDER not in sys.meta_path\n"
        "print('ok')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok"]


def test_registered_at_once_where_multiprocessing_came_first():
    result = run_python(
        "import sys\n"
        "import multiprocessing.reduction as reduction\n"
        "import cubind.core\n"
        + CHECK
        + "from cubind.core import _reduction\n"
        "assert _reduction._FINDER not in sys.meta_path and not _reduction._pending\n"
        "print('ok')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok"]


def test_pickle_outside_multiprocessing_still_refuses_an_allocation_handle():
    # Registration is ForkingPickler's alone, as in cuda.core.
    result = run_python(
        "import os, pickle\n"
        "import multiprocessing.reduction\n"
        "import cubind.core\n"
        "handle = cubind.core.IPCAllocationHandle._init(os.open(os.devnull, os.O_RDONLY), None)\n"
        "try:\n"
        "    pickle.dumps(handle)\n"
        "except Exception as error:\n"
        "    print(type(error).__name__)\n"
        "else:\n"
        "    print('pickled')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["TypeError"]

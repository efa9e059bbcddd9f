"""What of green contexts runs without a GPU: the options of a split, a
context and a workqueue, checked as they are made or before any CUDA call,
and the resource classes that only the library makes."""
import dataclasses
import importlib.util

import pytest

import cubind.core as cb
from cubind.core import (
    Context,
    ContextOptions,
    DeviceResources,
    SMResource,
    SMResourceOptions,
    WorkqueueResource,
    WorkqueueResourceOptions,
)
from cubind.core._options import _sm_split_request

HAVE_CUDA_CORE = importlib.util.find_spec("cuda.core") is not None


@pytest.mark.parametrize("cls", [SMResource, DeviceResources, WorkqueueResource, Context])
def test_resource_classes_are_made_only_by_the_library(cls):
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        cls()


def test_the_new_names_are_exported():
    for name in ("ContextOptions", "DeviceResources", "SMResource", "SMResourceOptions", "WorkqueueResource",
                 "WorkqueueResourceOptions"):
        assert name in cb.__all__ and hasattr(cb, name)


def test_context_options_need_resources():
    with pytest.raises(TypeError):
        ContextOptions()
    assert ContextOptions(resources=[]).resources == []
    assert [f.name for f in dataclasses.fields(ContextOptions)] == ["resources"]


@pytest.mark.parametrize("options, expected", [
    (SMResourceOptions(), (1, None)),
    (SMResourceOptions(count=16), (1, 16)),
    (SMResourceOptions(count=0), (1, 0)),  # refused by the core, naming the count
    (SMResourceOptions(count=[16, 16]), (2, 16)),
    (SMResourceOptions(count=(8, 8, 8)), (3, 8)),
    (SMResourceOptions(count=[None, None]), (2, None)),
    (SMResourceOptions(count=[24], backfill=[False]), (1, 24)),
    (SMResourceOptions(count=[8, 8], backfill=False), (2, 8)),
])
def test_a_split_request_is_groups_and_one_count(options, expected):
    assert _sm_split_request(options) == expected


@pytest.mark.parametrize("options, error, words", [
    (SMResourceOptions(count=[]), ValueError, "SMResourceOptions.count is an empty sequence"),
    (SMResourceOptions(count="8"), TypeError, "SMResourceOptions.count is '8'"),
    (SMResourceOptions(count=8.0), TypeError, "SMResourceOptions.count is 8.0"),
    (SMResourceOptions(count=True), TypeError, "SMResourceOptions.count is True"),
    (SMResourceOptions(count=[8, "8"]), TypeError, "SMResourceOptions.count[1] is '8'"),
    (SMResourceOptions(count=-8), ValueError, "SMResourceOptions.count must be non-negative: SMResourceOptions.count is -8"),
    (SMResourceOptions(count=[8, -8]), ValueError, "SMResourceOptions.count[1] is -8"),
    (SMResourceOptions(count=8, coscheduled_sm_count=[8]), ValueError,
     "SMResourceOptions.coscheduled_sm_count is a sequence ([8]) but count is scalar"),
    (SMResourceOptions(count=[8, 8], preferred_coscheduled_sm_count=[8]), ValueError,
     "SMResourceOptions.preferred_coscheduled_sm_count has 1 values, expected 2"),
    (SMResourceOptions(count=[8, 8], backfill=[True, False, False]), ValueError,
     "SMResourceOptions.backfill has 3 values, expected 2"),
    (SMResourceOptions(count=8, coscheduled_sm_count=8), NotImplementedError,
     "SMResourceOptions.coscheduled_sm_count needs the structured SM split of CUDA 13.1"),
    (SMResourceOptions(count=[8], preferred_coscheduled_sm_count=[8]), NotImplementedError,
     "SMResourceOptions.preferred_coscheduled_sm_count needs"),
    (SMResourceOptions(count=8, backfill=True), NotImplementedError, "SMResourceOptions.backfill needs"),
    (SMResourceOptions(count=[8, 8], backfill=[False, True]), NotImplementedError, "SMResourceOptions.backfill"),
    (SMResourceOptions(count=[8, 16]), NotImplementedError, "groups of different sizes need"),
])
def test_bad_split_requests_name_the_field_and_value(options, error, words):
    with pytest.raises(error) as raised:
        _sm_split_request(options)
    assert words in str(raised.value)


@pytest.mark.parametrize("kwargs", [
    {}, {"sharing_scope": "device_ctx"}, {"sharing_scope": "green_ctx_balanced"}, {"concurrency_limit": 1},
    {"concurrency_limit": 32, "sharing_scope": None},
])
def test_workqueue_options_accept_what_is_valid(kwargs):
    options = WorkqueueResourceOptions(**kwargs)
    for name, value in kwargs.items():
        assert getattr(options, name) == value


@pytest.mark.parametrize("kwargs, error, words", [
    ({"sharing_scope": "bad"}, ValueError, "WorkqueueResourceOptions.sharing_scope: 'bad' is not a valid WorkqueueSharingScopeType"),
    ({"sharing_scope": 3}, ValueError, "Must be None, 'device_ctx' or 'green_ctx_balanced'"),
    ({"concurrency_limit": 0}, ValueError, "concurrency_limit must be >= 1, got 0"),
    ({"concurrency_limit": -1}, ValueError, "concurrency_limit must be >= 1, got -1"),
    ({"concurrency_limit": "2"}, TypeError, "WorkqueueResourceOptions.concurrency_limit is '2'"),
])
def test_workqueue_options_refuse_bad_values_as_they_are_made(kwargs, error, words):
    with pytest.raises(error) as raised:
        WorkqueueResourceOptions(**kwargs)
    assert words in str(raised.value)


@pytest.mark.skipif(not HAVE_CUDA_CORE, reason="cuda.core 1.2 is not installed")
@pytest.mark.parametrize("kwargs", [
    {}, {"sharing_scope": "device_ctx"}, {"sharing_scope": "green_ctx_balanced"}, {"sharing_scope": "bad"},
    {"sharing_scope": 3}, {"concurrency_limit": 1}, {"concurrency_limit": 0}, {"concurrency_limit": -5},
    {"concurrency_limit": "2"},
])
def test_workqueue_options_accept_and_refuse_as_cuda_core_does(kwargs):
    import cuda.core as cc

    def outcome(cls):
        try:
            cls(**kwargs)
        except Exception as error:  # the type is what is compared
            return type(error)
        return None

    assert outcome(WorkqueueResourceOptions) == outcome(cc.WorkqueueResourceOptions)


@pytest.mark.skipif(not HAVE_CUDA_CORE, reason="cuda.core 1.2 is not installed")
def test_workqueue_sharing_scope_takes_the_enum_members():
    from cuda.core.typing import WorkqueueSharingScopeType

    for member in WorkqueueSharingScopeType:
        assert WorkqueueResourceOptions(sharing_scope=member).sharing_scope == member


def test_workqueue_resource_needs_cuda_13_1():
    # No instance can be had; the class still answers as cuda.core's does over 13.0 bindings.
    for name in ("handle", "sharing_scope", "concurrency_limit", "device"):
        with pytest.raises(NotImplementedError, match="CUDA 13.1"):
            getattr(WorkqueueResource, name).__get__(WorkqueueResource.__new__(WorkqueueResource))

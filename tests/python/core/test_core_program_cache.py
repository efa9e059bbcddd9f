"""cubind.core.utils' program caches and Program.compile(..., cache=), with
NVRTC (no GPU needed): keys, LRU eviction, the file cache's atomic writes
shared by processes, and entries that are changed, cut short, swapped for a
link or owned by another user, which are never loaded."""
import hashlib
import multiprocessing
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from cubind.core import ObjectCode, Program, ProgramOptions
from cubind.core.utils import (FileStreamProgramCache, InMemoryProgramCache, ProgramCacheResource,
                               make_program_cache_key)

SOURCE = 'extern "C" __global__ void k(int* a) { *a = 1; }'
OPTIONS = ProgramOptions(arch="sm_90")


def key(**changes):
    args = dict(code=SOURCE, code_type="c++", options=OPTIONS, target_type="cubin")
    args.update(changes)
    return make_program_cache_key(**args)


def test_keys_are_stable_and_depend_on_every_input():
    base = key()
    assert isinstance(base, bytes) and base == key()
    others = [key(code=SOURCE + " "), key(target_type="ptx"), key(options=ProgramOptions(arch="sm_80")),
              key(options=ProgramOptions(arch="sm_90", debug=True)), key(name_expressions=["k"]),
              key(name_expressions=[b"k"]), key(extra_digest=b"headers v2"), key(code_type="ptx")]
    assert len({base, *others}) == len(others) + 1
    assert key(name_expressions=["a", "b"]) == key(name_expressions=("b", "a"))
    assert key(code=SOURCE.encode()) == base


@pytest.mark.parametrize("changes, kind, words", [
    (dict(code_type="fortran"), ValueError, "code_type"),
    (dict(target_type="fatbin"), ValueError, "target_type"),
    (dict(options="-arch=sm_90"), TypeError, "ProgramOptions"),
    (dict(code=1), TypeError, "code"),
    (dict(name_expressions="k"), TypeError, "sequence"),
    (dict(name_expressions=[bytearray(b"k")]), TypeError, "name expression"),
    (dict(extra_digest="x"), TypeError, "extra_digest"),
    (dict(options=ProgramOptions(arch="sm_90", create_pch="x.pch")), ValueError, "create_pch"),
    (dict(options=ProgramOptions(arch="sm_90", time="t.csv")), ValueError, "time"),
    (dict(options=ProgramOptions(arch="sm_90", include_path=["/usr/include"])), ValueError, "include_path"),
    (dict(options=ProgramOptions(arch="sm_90", name="src/k.cu")), ValueError, "name"),
])
def test_bad_key_inputs_are_refused_naming_what(changes, kind, words):
    with pytest.raises(kind, match=words):
        key(**changes)


def test_files_the_key_cannot_see_are_allowed_with_extra_digest():
    options = ProgramOptions(arch="sm_90", include_path=["/usr/include"])
    assert key(options=options, extra_digest=b"a") != key(options=options, extra_digest=b"b")


@pytest.fixture(params=["memory", "files"])
def cache(request, tmp_path):
    return InMemoryProgramCache() if request.param == "memory" else FileStreamProgramCache(tmp_path / "cache")


def test_mapping_behaviour(cache):
    assert isinstance(cache, ProgramCacheResource)
    assert len(cache) == 0 and cache.get(b"k") is None and cache.get("k", b"d") == b"d"
    cache["k"] = b"one"
    assert cache[b"k"] == b"one" and len(cache) == 1      # str and bytes keys are one key
    cache[b"k"] = bytearray(b"two")
    assert cache["k"] == b"two" and len(cache) == 1
    cache.update({"a": memoryview(b"A"), "b": b"B"})
    cache.update([("c", b"C")])
    assert len(cache) == 4 and cache["a"] == b"A"
    del cache["a"]
    with pytest.raises(KeyError):
        cache["a"]
    with pytest.raises(KeyError):
        del cache["a"]
    with pytest.raises(TypeError):
        cache[1] = b"x"
    with pytest.raises(TypeError):
        cache["x"] = 12
    cache.clear()
    assert len(cache) == 0
    with cache as same:
        assert same is cache


def test_program_compile_with_cache_hits_without_compiling(cache):
    first = Program(SOURCE, "c++", OPTIONS).compile("cubin", cache=cache)
    assert len(cache) == 1
    assert cache[key()] == bytes(first.code)
    # A hit is the cached bytes: a poisoned entry proves no compile ran.
    cache[key()] = b"\x7fELF cached"
    hit = Program(SOURCE, "c++", OPTIONS).compile("cubin", cache=cache)
    assert bytes(hit.code) == b"\x7fELF cached" and hit.code_type == "cubin"
    ptx = Program(SOURCE, "c++", OPTIONS).compile("ptx", cache=cache)
    assert len(cache) == 2 and b".entry k" in bytes(ptx.code)


def test_program_compile_cache_refusals():
    program = Program(SOURCE, "c++", OPTIONS)
    with pytest.raises(ValueError, match="name_expressions"):
        program.compile("cubin", name_expressions=["k"], cache=InMemoryProgramCache())
    with pytest.raises(TypeError, match="ProgramCacheResource"):
        program.compile("cubin", cache={})


def test_object_code_values_store_their_bytes(tmp_path):
    code = Program(SOURCE, "c++", OPTIONS).compile("cubin")
    path = tmp_path / "k.cubin"
    path.write_bytes(bytes(code.code))
    cache = InMemoryProgramCache()
    cache["from bytes"] = code
    cache["from a file"] = ObjectCode.from_cubin(str(path))
    assert cache["from bytes"] == cache["from a file"] == bytes(code.code)


def test_in_memory_evicts_least_recently_read():
    cache = InMemoryProgramCache(max_size_bytes=10)
    cache["a"] = b"aaaa"
    cache["b"] = b"bbbb"
    cache["a"]                      # read: "b" is now the least recent
    cache["c"] = b"cccc"
    assert cache.get("b") is None and cache["a"] == b"aaaa" and cache["c"] == b"cccc"
    with pytest.raises(ValueError):
        InMemoryProgramCache(max_size_bytes=-1)


def test_file_cache_evicts_least_recently_read(tmp_path):
    cache = FileStreamProgramCache(tmp_path / "c", max_size_bytes=10)
    cache["a"] = b"aaaa"
    cache["b"] = b"bbbb"
    entries = tmp_path / "c" / "entries"
    for i, name in enumerate(("a", "b")):     # a read long ago, b just now
        folder = entries / hashlib.sha256(name.encode()).hexdigest()
        (entry,) = folder.iterdir()
        os.utime(entry, (1000 + i * 10**9, entry.stat().st_mtime))
    cache["c"] = b"cccc"
    assert cache.get("a") is None and cache["b"] == b"bbbb" and cache["c"] == b"cccc"


def test_file_cache_folders_are_private_and_entries_are_raw_bytes(tmp_path):
    cache = FileStreamProgramCache(tmp_path / "c")
    for folder in ("", "entries", "tmp"):
        assert stat.S_IMODE((tmp_path / "c" / folder).stat().st_mode) == 0o700
    cache["k"] = b"\x7fELF raw"
    (entry,) = (tmp_path / "c" / "entries").glob("*/*")
    assert entry.read_bytes() == b"\x7fELF raw"             # no header: cuobjdump reads it as it is
    assert entry.name == hashlib.sha256(b"\x7fELF raw").hexdigest()


def test_a_shared_or_foreign_folder_is_refused(tmp_path):
    open_folder = tmp_path / "open"
    open_folder.mkdir(mode=0o777)
    os.chmod(open_folder, 0o777)
    with pytest.raises(PermissionError, match="writable by other users"):
        FileStreamProgramCache(open_folder)
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 65534, 65534)
        with pytest.raises(PermissionError, match="belongs to user 65534"):
            FileStreamProgramCache(foreign)


@pytest.mark.parametrize("damage", ["cut short", "changed", "emptied", "a link", "another user's"])
def test_damaged_entries_are_dropped_and_rebuilt_not_loaded(tmp_path, damage):
    if damage == "another user's" and os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    cache = FileStreamProgramCache(tmp_path / "c")
    compiled = Program(SOURCE, "c++", OPTIONS).compile("cubin", cache=cache)
    (entry,) = (tmp_path / "c" / "entries").glob("*/*")
    good = entry.read_bytes()
    if damage == "cut short":
        entry.write_bytes(good[: len(good) // 2])
    elif damage == "changed":
        entry.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    elif damage == "emptied":
        entry.write_bytes(b"")
    elif damage == "a link":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_bytes(good)
        entry.unlink()
        entry.symlink_to(elsewhere)
    else:
        os.chown(entry, 65534, 65534)
    assert cache.get(key()) is None
    again = Program(SOURCE, "c++", OPTIONS).compile("cubin", cache=cache)
    assert bytes(again.code) == bytes(compiled.code) == cache[key()]


def _writer(path, n, value):
    cache = FileStreamProgramCache(path)
    for i in range(n):
        cache[f"k{i % 7}"] = value + bytes([i % 251]) * 4096


def test_two_processes_write_while_a_third_reads(tmp_path):
    path = str(tmp_path / "c")
    FileStreamProgramCache(path)
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_writer, args=(path, 300, bytes([w]) * 8)) for w in range(2)]
    for w in writers:
        w.start()
    reader = FileStreamProgramCache(path)
    seen = 0
    while any(w.is_alive() for w in writers):
        for i in range(7):
            data = reader.get(f"k{i}")
            if data is not None:
                # A whole entry of one writer, never a mix or a part.
                assert len(data) == 8 + 4096 and data[:8] in (b"\x00" * 8, b"\x01" * 8)
                assert data[8:] == data[8:9] * 4096
                seen += 1
    for w in writers:
        w.join()
        assert w.exitcode == 0
    assert seen > 0 and len(reader) == 7
    assert os.listdir(os.path.join(path, "tmp")) == []


def test_a_cache_is_shared_by_processes(tmp_path):
    path = tmp_path / "c"
    code = textwrap.dedent(f"""
        from cubind.core import Program, ProgramOptions
        from cubind.core.utils import FileStreamProgramCache
        cache = FileStreamProgramCache({str(path)!r})
        code = Program({SOURCE!r}, "c++", ProgramOptions(arch="sm_90")).compile("cubin", cache=cache)
        print(len(cache), len(code.code))
    """)
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert first == second and first.split()[0] == "1"


def test_same_names_and_signatures_as_cuda_core_utils():
    reference = pytest.importorskip("cuda.core.utils")
    import inspect

    import cubind.core.utils as ours

    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]

    for name in ("ProgramCacheResource", "InMemoryProgramCache", "FileStreamProgramCache",
                 "make_program_cache_key"):
        theirs, mine = getattr(reference, name), getattr(ours, name)
        assert params(mine) == params(theirs), name
        if inspect.isclass(theirs):
            for member in ("get", "update", "close", "clear", "__getitem__", "__setitem__", "__delitem__",
                           "__len__", "__enter__", "__exit__"):
                assert hasattr(mine, member), f"{name}.{member}"
                assert [p[0] for p in params(getattr(mine, member))] == \
                    [p[0] for p in params(getattr(theirs, member))], f"{name}.{member}"
            assert not hasattr(mine, "__contains__") or mine.__contains__ is None


def test_a_remembered_key_follows_the_options_and_still_checks_its_inputs():
    # Keys of recent arguments are remembered, compared by value: a changed
    # option gives the key a fresh computation gives, and an argument refused
    # once is refused again after an equal-looking one was accepted.
    from cubind.core.utils import _program_cache

    options = ProgramOptions(arch="sm_90")
    args = dict(code="__global__ void k() {}", code_type="c++", target_type="cubin")
    first = make_program_cache_key(options=options, **args)
    assert make_program_cache_key(options=options, **args) == first
    options.std = "c++20"
    changed = make_program_cache_key(options=options, **args)
    assert changed != first
    _program_cache._KEYS.clear()
    assert make_program_cache_key(options=options, **args) == changed
    make_program_cache_key(options=options, name_expressions=("k",), **args)
    with pytest.raises(TypeError, match="sequence"):
        make_program_cache_key(options=options, name_expressions="k", **args)
    with pytest.raises(ValueError, match="create_pch"):
        make_program_cache_key(options=ProgramOptions(arch="sm_90", create_pch="x.pch"), **args)

"""Caches of compiled programs: raw bytes (cubin, PTX, LTO-IR) by key.

The values are the compiler's output exactly, so a cache file is something
cuobjdump or nvdisasm reads as it is. A key comes from make_program_cache_key,
a SHA-256 digest of everything that decides the output: the source, the code
and target types, every option, the name expressions, the compiler's version
and whatever the caller adds as extra_digest.

FileStreamProgramCache keeps one folder per key under <path>/entries; the
entry inside is named by the SHA-256 of its own bytes. A write goes to a
private temporary file that is flushed and then renamed into place, so a
reader sees a whole entry or none; a read checks the bytes against the name,
so an entry cut short or changed on disk is dropped and reported missing
(the caller compiles again) rather than loaded. Folders are made private to
the user (0700), and entries owned by another user are never read.
"""

import abc
import collections
import dataclasses
import hashlib
import operator
import os
import shutil
import stat
import tempfile
import threading
import time

_KEY_SCHEMA = b"cubind.core program cache key 1"
_CODE_TYPES = ("c++", "ptx", "nvvm")
_TARGET_TYPES = ("ptx", "cubin", "ltoir")
# Options whose effect reads files the key cannot see: the caller must
# fingerprint them (extra_digest).
_READS_FILES = ("include_path", "pre_include", "pch", "use_pch", "pch_dir")
# Options whose compile has side effects a cache hit would skip.
_SIDE_EFFECTS = ("create_pch", "time", "fdevice_time_trace")


def _key_bytes(key):
    if isinstance(key, bytes):
        return key
    if isinstance(key, str):
        return key.encode("utf-8")
    raise TypeError(f"cache keys must be bytes or str, got {type(key).__name__} ({key!r:.60})")


def _value_bytes(value):
    # bytes-like values as they are; an ObjectCode as its code (the file's
    # content where it was made from a path).
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    from cubind.core import ObjectCode

    if isinstance(value, ObjectCode):
        code = value.code
        if isinstance(code, (str, os.PathLike)):
            with open(code, "rb") as f:
                return f.read()
        return bytes(code)
    raise TypeError(f"cache values must be bytes-like or ObjectCode, got {type(value).__name__} "
                    "(a program cache stores bytes, bytearray, memoryview or ObjectCode)")


_FIELD_NAMES = {}   # options class -> (its field names sorted, an attrgetter of them)
_OPTIONS = {}       # (class, values) -> what the key needs of them, for values that hash


def _option_values(options):
    """(the options class's field names, sorted; the options' values of them)."""
    cls = type(options)
    entry = _FIELD_NAMES.get(cls)
    if entry is None:
        names = tuple(sorted(f.name for f in dataclasses.fields(cls)))
        entry = _FIELD_NAMES[cls] = (names, operator.attrgetter(*names))
    return entry[0], entry[1](options)


def _options_of(cls, names, values):
    # What the key needs of options of class cls with these field values (str,
    # numbers, None, lists and tuples of str): their text (every field as
    # (name, value), sorted by name), the first option with side effects that
    # is set, the options set that read files, and use_libdevice. Remembered
    # for values met before: a program compiled again asks with the same options.
    try:
        known = _OPTIONS.get((cls, values))
    except TypeError:  # a list among the values: not remembered
        return _describe_options(names, values)
    if known is None:
        known = _describe_options(names, values)
        if len(_OPTIONS) >= 256:
            _OPTIONS.clear()
        _OPTIONS[(cls, values)] = known
    return known


def _describe_options(names, values):
    fields = dict(zip(names, values))
    side_effect = next((name for name in _SIDE_EFFECTS if fields.get(name)), None)
    reads = tuple(name for name in _READS_FILES if fields.get(name))
    text = repr(list(fields.items())).encode("utf-8")
    return text, side_effect, reads, bool(fields.get("use_libdevice"))


def _part(data):
    # Each part of a key with its length, so no two inputs run together alike.
    return len(data).to_bytes(8, "little") + data


_PREFIXES = {}   # (code type, target type) -> the key's first parts, with the compiler's version


def _key_prefix(code_type, target_type):
    # The compiler that turns code_type into target_type is part of the key
    # (NVRTC for C++, nvJitLink for PTX), its version asked once per process:
    # the library loaded does not change.
    prefix = _PREFIXES.get((code_type, target_type))
    if prefix is None:
        version = _compiler_version(code_type, target_type)
        prefix = _PREFIXES[(code_type, target_type)] = b"".join(
            _part(p) for p in (_KEY_SCHEMA, code_type.encode(), target_type.encode(), version.encode()))
    return prefix


def _compiler_version(code_type, target_type):
    if code_type == "c++":
        from cubind.bindings import nvrtc

        status, major, minor = nvrtc.nvrtcVersion()
        if int(status) != 0:
            raise RuntimeError(f"make_program_cache_key: nvrtcVersion failed ({status!r})")
        return f"nvrtc {major}.{minor}"
    if code_type == "ptx":
        from cubind.bindings import nvjitlink

        major, minor = nvjitlink.version()
        return f"nvjitlink {major}.{minor}"
    return f"{code_type} -> {target_type}"


_PROGRAM_OPTIONS = []


def _program_options_class():
    if not _PROGRAM_OPTIONS:
        from cubind.core import ProgramOptions

        _PROGRAM_OPTIONS.append(ProgramOptions)
    return _PROGRAM_OPTIONS[0]


_KEYS = {}   # the arguments of recent calls -> their key (value-compared; sources up to 64 KiB)


def make_program_cache_key(*, code, code_type, options, target_type, name_expressions=(), extra_digest=None):
    """A stable key (bytes) for compiling code of code_type ("c++", "ptx",
    "nvvm") with options (a ProgramOptions whose arch is set) to target_type
    ("ptx", "cubin", "ltoir"), with name_expressions (order does not matter;
    "f" and b"f" differ) and extra_digest (bytes the caller adds: required
    when options read files the key cannot see, such as include_path).
    Raises ValueError for options whose compile has side effects
    (create_pch, time, fdevice_time_trace), or that read files, without
    extra_digest."""
    if type(code_type) is not str or code_type not in _CODE_TYPES:
        code_type = str(getattr(code_type, "value", code_type)).lower()
    if type(target_type) is not str or target_type not in _TARGET_TYPES:
        target_type = str(getattr(target_type, "value", target_type)).lower()
    if code_type not in _CODE_TYPES:
        raise ValueError(f"make_program_cache_key: code_type: {code_type!r} is not a valid SourceCodeType. "
                         "Must be 'c++', 'nvvm' or 'ptx'")
    if target_type not in _TARGET_TYPES:
        raise ValueError(f"make_program_cache_key: target_type={target_type!r} is not supported by the program "
                         "cache (must be 'cubin', 'ltoir' or 'ptx')")
    if code_type == "ptx" and target_type == "ltoir":
        raise ValueError("make_program_cache_key: target_type='ltoir' is not valid for code_type='ptx' "
                         "(supported: ['cubin', 'ptx']): Program.compile refuses it, so no key is made for it")
    if not isinstance(options, _program_options_class()):
        raise TypeError(f"make_program_cache_key: options must be a ProgramOptions, not {type(options).__name__}")
    # A program compiled again asks again with equal arguments: its key is
    # remembered, compared by value (the options by their fields' values).
    names, values = _option_values(options)
    memo = None
    if isinstance(code, (str, bytes)) and len(code) <= 65536 and type(name_expressions) in (tuple, list):
        try:
            memo = (code, code_type, target_type, type(options), values, tuple(name_expressions), extra_digest)
            key = _KEYS.get(memo)
        except TypeError:  # something unhashable: computed afresh, not remembered
            memo = key = None
        if key is not None:
            return key
    key = _make_key(code, code_type, options, names, values, target_type, name_expressions, extra_digest)
    if memo is not None:
        if len(_KEYS) >= 256:
            _KEYS.clear()
        _KEYS[memo] = key
    return key


def _make_key(code, code_type, options, names, values, target_type, name_expressions, extra_digest):
    if not options.arch:
        raise ValueError("make_program_cache_key: options.arch must be set")
    if isinstance(code, str):
        code = code.encode("utf-8")
    elif not isinstance(code, (bytes, bytearray)):
        raise TypeError(f"make_program_cache_key: code must be str or bytes, got {type(code).__name__}")
    if extra_digest is not None and not isinstance(extra_digest, (bytes, bytearray)):
        raise TypeError(f"make_program_cache_key: extra_digest must be bytes or None, not {type(extra_digest).__name__}")
    options_text, side_effect, reads, use_libdevice = _options_of(type(options), names, values)
    if side_effect is not None:
        raise ValueError(f"make_program_cache_key: ProgramOptions.{side_effect} has effects beyond the compiled "
                         "code, which a cache hit would skip; compile without a cache")
    if extra_digest is None:
        reads = list(reads)
        if code_type == "nvvm" and use_libdevice:
            reads.append("use_libdevice")
        if code_type == "c++" and options.name and os.path.dirname(options.name):
            reads.append("name (a path: NVRTC resolves relative includes from its folder)")
        if reads:
            raise ValueError(f"make_program_cache_key: ProgramOptions {', '.join(reads)} make the compiler read "
                             "files the key cannot see; fingerprint them and pass extra_digest")
    if isinstance(name_expressions, (str, bytes, bytearray)):
        raise TypeError("make_program_cache_key: name_expressions must be a sequence, not one name")
    names = []
    for n in name_expressions:
        if isinstance(n, str):
            names.append(b"s" + n.encode("utf-8"))
        elif isinstance(n, bytes):
            names.append(b"b" + n)
        else:
            raise TypeError(f"make_program_cache_key: a name expression is str or bytes, not {type(n).__name__}")
    digest = hashlib.sha256(_key_prefix(code_type, target_type))
    digest.update(_part(bytes(code)))
    digest.update(_part(options_text))
    for n in sorted(names):
        digest.update(_part(n))
    digest.update(_part(b"" if extra_digest is None else b"x" + bytes(extra_digest)))
    return digest.digest()


class ProgramCacheResource(abc.ABC):
    """A cache of compiled programs: raw bytes by key (bytes, or str as its
    UTF-8). Program.compile(..., cache=) derives the key and stores and finds
    the code; cache.get(key) answers a lookup in one step (there is no
    `key in cache`, which would race with other processes)."""

    @abc.abstractmethod
    def __getitem__(self, key):
        """The bytes stored under key; KeyError when there are none."""

    @abc.abstractmethod
    def __setitem__(self, key, value):
        """Stores value (bytes, bytearray, memoryview or ObjectCode) under key."""

    @abc.abstractmethod
    def __delitem__(self, key):
        """Removes key's entry; KeyError when there is none."""

    @abc.abstractmethod
    def __len__(self):
        """The number of entries."""

    @abc.abstractmethod
    def clear(self):
        """Removes every entry."""

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def update(self, items, /):
        pairs = items.items() if isinstance(items, collections.abc.Mapping) else items
        for key, value in pairs:
            self[key] = value

    def close(self):
        """Lets go of what the cache holds open (nothing, for these two)."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()


def _check_max_size(max_size_bytes, owner):
    if max_size_bytes is None:
        return None
    if isinstance(max_size_bytes, bool) or not isinstance(max_size_bytes, int):
        raise TypeError(f"{owner}: max_size_bytes must be an int or None, not {type(max_size_bytes).__name__}")
    if max_size_bytes <= 0:
        raise ValueError(f"{owner}: max_size_bytes must be positive or None (got {max_size_bytes}; "
                         "0 would evict every write)")
    return max_size_bytes


class InMemoryProgramCache(ProgramCacheResource):
    """InMemoryProgramCache(*, max_size_bytes=None)

    Entries for this process's life, least recently read evicted first once
    their sizes add up to more than max_size_bytes. Safe to share between
    threads (one lock serialises every method)."""

    def __init__(self, *, max_size_bytes=None):
        self._max = _check_max_size(max_size_bytes, "InMemoryProgramCache")
        self._entries = collections.OrderedDict()
        self._size = 0
        self._lock = threading.RLock()

    def __getitem__(self, key):
        k = _key_bytes(key)
        with self._lock:
            value = self._entries[k]
            self._entries.move_to_end(k)
            return value

    def __setitem__(self, key, value):
        k, data = _key_bytes(key), _value_bytes(value)
        with self._lock:
            old = self._entries.pop(k, None)
            if old is not None:
                self._size -= len(old)
            self._entries[k] = data
            self._size += len(data)
            while self._max is not None and self._size > self._max and self._entries:
                _, evicted = self._entries.popitem(last=False)
                self._size -= len(evicted)

    def __delitem__(self, key):
        k = _key_bytes(key)
        with self._lock:
            self._size -= len(self._entries.pop(k))

    def __len__(self):
        with self._lock:
            return len(self._entries)

    def clear(self):
        with self._lock:
            self._entries.clear()
            self._size = 0


def _default_cache_path():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cubind", "program-cache")


def _private_folder(path, owner):
    # Made 0700 if missing; an existing one must be ours and writable by no one else.
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{owner}: {path} is not a folder")
    if st.st_uid != os.geteuid():
        raise PermissionError(f"{owner}: {path} belongs to user {st.st_uid}, not to this user ({os.geteuid()})")
    if st.st_mode & 0o022:
        raise PermissionError(f"{owner}: {path} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                              "a cache folder must be private")


# A read marks an entry as recently used (its access time, which eviction
# orders by) when the mark is older than this.
_RECENCY_STEP_S = 60.0


def _read_all(fd, size):
    # The file's bytes to its end (size is what fstat gave: one read, most often).
    chunks = []
    while True:
        chunk = os.read(fd, max(size + 1, 65536) if not chunks else 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class FileStreamProgramCache(ProgramCacheResource):
    """FileStreamProgramCache(path=None, *, max_size_bytes=None)

    Entries in a folder (default: $XDG_CACHE_HOME/cubind/program-cache, or
    ~/.cache/cubind/program-cache), shared safely by threads and processes:
    writes are atomic, reads check every entry's bytes against its SHA-256,
    and an entry changed or cut short on disk, or owned by another user, is
    dropped and reported missing. With max_size_bytes, entries least recently
    read go first once the folder holds more (checked after each write)."""

    def __init__(self, path=None, *, max_size_bytes=None):
        self._max = _check_max_size(max_size_bytes, "FileStreamProgramCache")
        self.path = os.fspath(path) if path is not None else _default_cache_path()
        self._entries = os.path.join(self.path, "entries")
        self._tmp = os.path.join(self.path, "tmp")
        self._seen = {}   # folder -> the name of the entry last read from it
        for folder in (self.path, self._entries, self._tmp):
            _private_folder(folder, "FileStreamProgramCache")

    def _folder(self, key):
        return os.path.join(self._entries, hashlib.sha256(_key_bytes(key)).hexdigest())

    def _read_entry(self, folder):
        # The bytes of the folder's entry whose content matches its name, or
        # None; entries that do not match, or are not ours, are removed. The
        # entry this object read last from the folder is tried first, without
        # listing the folder.
        known = self._seen.get(folder)
        if known is not None:
            data = self._read_named(folder, known)
            if data is not None:
                return data
            self._seen.pop(folder, None)
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            return None
        for name in names:
            data = self._read_named(folder, name)
            if data is not None:
                if len(self._seen) >= 1024:
                    self._seen.clear()
                self._seen[folder] = name
                return data
        return None

    def _read_named(self, folder, name):
        # The entry's bytes if it is ours and its content matches its name;
        # one that does not match is removed.
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                return None
            data = _read_all(fd, st.st_size)
        finally:
            os.close(fd)
        if hashlib.sha256(data).hexdigest() == name:
            now = time.time()
            if now - st.st_atime > _RECENCY_STEP_S:
                try:
                    os.utime(path, (now, st.st_mtime))   # read recency, for eviction
                except OSError:
                    pass
            return data
        self._discard(path)
        return None

    @staticmethod
    def _discard(path):
        try:
            os.unlink(path)
        except OSError:
            pass

    def __getitem__(self, key):
        data = self._read_entry(self._folder(key))
        if data is None:
            raise KeyError(key)
        return data

    def __setitem__(self, key, value):
        folder = self._folder(key)
        data = _value_bytes(value)
        name = hashlib.sha256(data).hexdigest()
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self._tmp, prefix="entry-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, os.path.join(folder, name))
        except BaseException:
            self._discard(tmp)
            raise
        for other in os.listdir(folder):
            if other != name:
                self._discard(os.path.join(folder, other))
        if self._max is not None:
            self._evict()

    def __delitem__(self, key):
        folder = self._folder(key)
        if not os.path.isdir(folder):
            raise KeyError(key)
        shutil.rmtree(folder, ignore_errors=True)

    def _files(self):
        # (atime, size, path) of every entry file.
        found = []
        for key in os.listdir(self._entries):
            folder = os.path.join(self._entries, key)
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                found.append((st.st_atime, st.st_size, path))
        return found

    def _evict(self):
        files = sorted(self._files())
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= self._max:
                break
            self._discard(path)
            total -= size

    def __len__(self):
        return len({os.path.dirname(path) for _, _, path in self._files()})

    def clear(self):
        for key in os.listdir(self._entries):
            shutil.rmtree(os.path.join(self._entries, key), ignore_errors=True)

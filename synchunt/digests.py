"""Content digests of files (xxh3-128 over every byte): computed when asked, or ahead in a background thread.

The trace cache keys a trace on its digest (`synchunt.trace.cache`). Reading and hashing a large trace costs tens
of milliseconds (about 35 ms for 250 MB in the page cache) that a command can spend loading numpy and its own
modules instead: `prefetch` hashes the files it is given in a background thread (the reads and the hash release
the GIL), and `content_digest` takes a file's prefetched digest only when the file has the identity (device,
inode, size, modification and change times) it had before and after that hashing; otherwise, or when none was
prefetched, it hashes the file itself. Either way a digest covers every byte of the file, read while this process
runs; a prefetched one is used once.

Nothing here imports numpy: the command line starts a prefetch before it loads anything heavy.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path

READ_BYTES = 1 << 20  # the hash's read buffer: fits the CPU cache (4-8 MiB buffers hash slower)

Identity = tuple[int, int, int, int, int]  # device, inode, size, modification and change times (ns)
Hashed = tuple[Identity, str, Identity]  # the file's identity before its hashing, its digest, its identity after


class _Pending:
    """A digest being computed in the background (concurrent.futures' Future would load a pool's modules)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: Hashed | None = None

    def set(self, value: Hashed | None) -> None:
        self._value = value
        self._done.set()

    def wait(self) -> Hashed | None:
        self._done.wait()
        return self._value


_prefetched: dict[tuple[int, int], _Pending] = {}  # by (device, inode)
_lock = threading.Lock()


def content_digest(path: str | Path) -> str:
    """xxh3-128 of every byte of the file, as hex (read into one reused buffer: no memory beyond it)."""
    found = _take(path)
    if found is not None:
        before, digest, after = found
        if before == after == _identity_or_none(path):
            return digest
    return _hash(path)


def prefetch(paths: Iterable[str | Path]) -> threading.Thread | None:
    """Start hashing the regular files among ``paths``, one after the other, in a daemon thread (None when there
    is none to hash); `content_digest` waits for a file's digest when it is asked for it before it is done."""
    import xxhash  # noqa: F401  (loaded here, not by the thread in the middle of this process's imports)

    jobs: list[tuple[str | Path, _Pending]] = []
    with _lock:
        for path in paths:
            now = _identity_or_none(path)
            if now is not None and now[:2] not in _prefetched:
                pending = _prefetched[now[:2]] = _Pending()
                jobs.append((path, pending))
    if not jobs:
        return None
    thread = threading.Thread(target=_hash_all, args=(jobs,), name="synchunt-digests", daemon=True)
    thread.start()
    return thread


def identity(path: str | Path) -> Identity:
    """What changes when a file is replaced or written: device, inode, size, modification and change times.
    OSError for a file that cannot be read; ValueError for one that is not a regular file."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path}: not a regular file")
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _identity_or_none(path: str | Path) -> Identity | None:
    try:
        return identity(path)
    except (OSError, ValueError):
        return None


def _take(path: str | Path) -> Hashed | None:
    """The file's prefetched (identity before, digest, identity after), removed from the table; None when none
    was prefetched (or its hashing failed)."""
    now = _identity_or_none(path)
    if now is None:
        return None
    with _lock:
        pending = _prefetched.pop(now[:2], None)
    return pending.wait() if pending is not None else None


def _hash_all(jobs: list[tuple[str | Path, _Pending]]) -> None:
    for path, pending in jobs:
        try:
            before = identity(path)
            digest = _hash(path)
            pending.set((before, digest, identity(path)))
        except Exception:  # unreadable now: whoever asks hashes it (and meets the error) itself
            pending.set(None)


def _hash(path: str | Path) -> str:
    import xxhash

    digest = xxhash.xxh3_128()
    buffer = bytearray(READ_BYTES)
    with memoryview(buffer) as view, open(path, "rb", buffering=0) as handle:
        while count := handle.readinto(buffer):
            digest.update(view[:count])
    return digest.hexdigest()

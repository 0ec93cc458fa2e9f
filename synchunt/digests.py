"""Content digests of files (xxh3-128 over every byte): computed when asked, or ahead in a background thread.

The trace cache keys a trace on its digest (`synchunt.trace.cache`). Reading and hashing a large trace costs tens
of milliseconds (about 35 ms for 250 MB in the page cache) that a command can spend loading numpy and its own
modules instead: `prefetch` hashes the files it is given in a background thread (the reads and the hash release
the GIL), and `content_digest` takes a file's prefetched digest only when the file has the identity (device,
inode, size, modification and change times) it had before and after that hashing; otherwise, or when none was
prefetched, it hashes the file itself. Either way a digest covers every byte of the file, read while this process
runs; a prefetched one is used once.

A digest is also remembered, as git's index remembers a file's stat data: in a memo folder (the trace cache's
`digests`), under the file's identity. A later command whose file has exactly that identity takes the digest
without reading the file. Only a digest of a file that had not changed for `SETTLED_NS` before its hashing began
is remembered: a write within a timestamp's granularity of the hashing could leave the times unchanged, and any
later write changes the change time, which no user can set. A memo that cannot be read or written is ignored.

Nothing here imports numpy: the command line starts a prefetch before it loads anything heavy.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path

READ_BYTES = 1 << 20  # the hash's read buffer: fits the CPU cache (4-8 MiB buffers hash slower)
SETTLED_NS = 2_000_000_000  # unchanged this long before its hashing: the file's times say all (FAT: 2 s)
MEMO_FILES = 4096  # remembered digests kept; the least recently used beyond this are removed

Identity = tuple[int, int, int, int, int]  # device, inode, size, modification and change times (ns)
# the file's identity before its hashing, its digest, its identity after, when the hashing began (ns since the epoch)
Hashed = tuple[Identity, str, Identity, int]


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


def content_digest(path: str | Path, memo: Path | None = None) -> str:
    """xxh3-128 of every byte of the file, as hex (read into one reused buffer: no memory beyond it). With
    ``memo``, a digest remembered there for the file's present identity is taken, and one computed is
    remembered."""
    found = _take(path)
    if found is not None:
        before, digest, after, began = found
        if before == after == _identity_or_none(path):
            if memo is not None:
                _remember(memo, path, before, digest, began)
            return digest
    if memo is not None:
        remembered = recall(memo, path)
        if remembered is not None:
            return remembered
    began = time.time_ns()
    before = identity(path)
    digest = _hash(path)
    if memo is not None and identity(path) == before:
        _remember(memo, path, before, digest, began)
    return digest


def recall(memo: Path, path: str | Path) -> str | None:
    """The digest remembered in ``memo`` for the file as it is now (same identity), or None."""
    now = _identity_or_none(path)
    if now is None:
        return None
    entry = memo / _memo_name(path, now)
    try:
        fields = entry.read_text().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) != 6 or fields[:5] != [str(part) for part in now] or not _is_digest(fields[5]):
        return None  # another identity, or not a memo this module wrote (compared as text: nothing to parse)
    with contextlib.suppress(OSError):
        os.utime(entry)  # recently used: kept longest when the memo is pruned
    return fields[5]


def prefetch(paths: Iterable[str | Path], memo: Path | None = None) -> threading.Thread | None:
    """Start hashing the regular files among ``paths``, one after the other, in a daemon thread (None when there
    is none to hash); `content_digest` waits for a file's digest when it is asked for it before it is done. A
    file whose digest ``memo`` remembers is not read."""
    import xxhash  # noqa: F401  (loaded here, not by the thread in the middle of this process's imports)

    jobs: list[tuple[str | Path, _Pending]] = []
    with _lock:
        for path in paths:
            now = _identity_or_none(path)
            if memo is not None and now is not None and recall(memo, path) is not None:
                continue
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
    """The file's prefetched (identity before, digest, identity after, start), removed from the table; None when
    none was prefetched (or its hashing failed)."""
    now = _identity_or_none(path)
    if now is None:
        return None
    with _lock:
        pending = _prefetched.pop(now[:2], None)
    return pending.wait() if pending is not None else None


def _hash_all(jobs: list[tuple[str | Path, _Pending]]) -> None:
    for path, pending in jobs:
        try:
            began = time.time_ns()
            before = identity(path)
            digest = _hash(path)
            pending.set((before, digest, identity(path), began))
        except Exception:  # unreadable now: whoever asks hashes it (and meets the error) itself
            pending.set(None)


def _is_digest(text: str) -> bool:
    """An xxh3-128 hex digest, as the cache's entry names hold it (nothing else may name a file there)."""
    return len(text) == 32 and all(character in "0123456789abcdef" for character in text)


def _memo_name(path: str | Path, now: Identity) -> str:
    import xxhash

    return xxhash.xxh3_64_hexdigest(f"{now[0]}:{now[1]}:{os.path.abspath(path)}".encode())


def _remember(memo: Path, path: str | Path, hashed: Identity, digest: str, began: int) -> None:
    """Remember ``digest`` for the file with identity ``hashed`` when the file had settled before its hashing
    began at ``began`` (ns since the epoch)."""
    if max(hashed[3], hashed[4]) > began - SETTLED_NS:
        return  # changed too recently: a write within the times' granularity could go unseen
    try:
        memo.mkdir(parents=True, exist_ok=True)
        target = memo / _memo_name(path, hashed)
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            partial.write_text(" ".join(map(str, hashed)) + f" {digest}\n")
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        _prune(memo)
    except OSError:
        pass  # best effort: the next command hashes the file again


def _prune(memo: Path) -> None:
    entries = [entry for entry in os.scandir(memo) if not entry.name.endswith(".tmp")]
    if len(entries) <= MEMO_FILES:
        return
    entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
    for entry in entries[:len(entries) - MEMO_FILES]:
        with contextlib.suppress(OSError):  # removed meanwhile by another command
            os.unlink(entry.path)


def _hash(path: str | Path) -> str:
    import xxhash

    digest = xxhash.xxh3_128()
    buffer = bytearray(READ_BYTES)
    with memoryview(buffer) as view, open(path, "rb", buffering=0) as handle:
        while count := handle.readinto(buffer):
            digest.update(view[:count])
    return digest.hexdigest()

"""A cache of decoded traces, so that re-analysing a big trace with other filters is cheap.

An entry holds a trace's event columns (containment tree included), thread table, metadata and partial-read
note. Its key is a hash of the file's whole content (xxh3-128 over every byte: about 0.04 s for a 240 MB trace
in the page cache, which the console script starts in the background before it loads numpy:
`synchunt.digests`), with synchunt's version, the cache format and the field set decoded: a trace with other
bytes misses, whatever its size and modification time say (a copy that keeps times, a regenerated trace of
equal length), and a trace touched or copied with the same bytes still hits. The file is hashed before it is
decoded and again after: an entry is written only when the two agree, so a trace rewritten during its decode
is never stored under either content. A digest is remembered in the folder's ``digests/`` under the file's
identity (device, inode, size, modification and change times), so a file left alone is not read again to find
its entry (`synchunt.digests`). Entries live in the user's cache folder (``$SYNCHUNT_CACHE_DIR``, else
``$XDG_CACHE_HOME/synchunt/traces``, else ``~/.cache/synchunt/traces``), never beside the trace unless a folder
is given. The cache is best effort: an unreadable entry is a miss, a failed write is ignored.

An entry is one file: a header (msgpack: metadata, threads, vocabularies, where each column lies) and the
columns' raw bytes, each aligned to 64 bytes (codes in the smallest integer type that holds them). A hit
memory-maps the file: a column is read only when analysis first touches it, in place (no copy), and nothing but
numpy and msgspec is imported.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from synchunt.cache_folder import default_cache_dir, digest_memo_dir
from synchunt.digests import content_digest
from synchunt.trace.model import Trace
from synchunt.trace.schema import ALL_FIELDS, FieldSet
from synchunt.trace.source import PartialRead
from synchunt.trace.table import CODED, COLUMNS, FLOATS, IDS, INTS, CodedColumn, EventTable, vocabulary_array

MAX_CACHE_BYTES = 32 << 30  # least recently used entries beyond this total are removed
SUFFIX = ".columns"
_OLD_SUFFIXES = (".parquet",)  # entries of earlier formats: never hit again, pruned like the others
_MAGIC = b"SYNCHUNT-COLUMNS"
_ALIGN = 64
_STORED_ARRAYS = tuple(k for k in (*FLOATS, *INTS) if k != "end")  # end = ts + dur, recomputed on read


def cache_key(path: Path, fields: FieldSet = ALL_FIELDS, memo: Path | None = None) -> str:
    """The hash of the file's whole content, with synchunt's version, the cache format and the field set
    decoded (nothing of the file's size, times or name: the same bytes are the same trace). ``memo``: a folder
    where the digest of a file whose identity has not changed is remembered (`synchunt.digests`)."""
    import xxhash

    from synchunt import __version__

    decoder = xxhash.xxh3_64_hexdigest(f"{__version__}|{CACHE_FORMAT}|{fields.key}".encode())
    return f"{content_digest(path, memo)}-{decoder}"


class TraceCache:
    def __init__(self, folder: Path | None = None, max_bytes: int = MAX_CACHE_BYTES):
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.max_bytes = max_bytes

    def key(self, path: Path, fields: FieldSet = ALL_FIELDS) -> str:
        """`cache_key`, with the digests of unchanged files remembered in this cache's folder."""
        return cache_key(path, fields, digest_memo_dir(self.folder))

    def entry(self, path: Path, fields: FieldSet = ALL_FIELDS) -> Path:
        return self._entry(self.key(path, fields))

    def _entry(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def get(self, path: Path, fields: FieldSet = ALL_FIELDS, key: str | None = None) -> Trace | None:
        """The cached trace for this file, or None (no entry, or an unreadable one). ``key``: the file's
        `cache_key`, when already computed."""
        try:
            entry = self._entry(key if key is not None else self.key(path, fields))
            if not entry.exists():
                return None
            trace = read_entry(path, entry)
            os.utime(entry)  # recently used: kept longest when the cache is pruned
            return trace
        except Exception:  # a broken entry is a miss, whatever broke it
            return None

    def put(self, trace: Trace, fields: FieldSet = ALL_FIELDS, key: str | None = None) -> Path | None:
        """Store the trace's columns (decoded with ``fields``); the entry's path, or None when it could not be
        written. ``key``: the file's `cache_key` taken before it was decoded; when the file's content no longer
        has it (rewritten meanwhile), nothing is stored."""
        try:
            now = self.key(trace.path, fields)
            if key is not None and key != now:
                return None
            entry = self._entry(now)
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
            try:
                write_entry(trace, partial)
                os.replace(partial, entry)  # readers see a whole entry or none
            finally:
                partial.unlink(missing_ok=True)
            self._prune(keep=entry)
            return entry
        except Exception:  # the cache must never fail an analysis
            return None

    def _prune(self, keep: Path) -> None:
        entries = [p for suffix in (SUFFIX, *_OLD_SUFFIXES) for p in self.folder.glob(f"*{suffix}")]
        entries.sort(key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in entries)
        for old in entries:
            if total <= self.max_bytes:
                break
            if old != keep:
                total -= old.stat().st_size
                old.unlink(missing_ok=True)


class _Layout(msgspec.Struct, array_like=True):
    dtype: str
    offset: int
    count: int


class _Header(msgspec.Struct):
    rows: int
    metadata: dict[str, Any]
    threads: list[tuple[Any, Any, str, str]]
    partial: tuple[int, int, str] | None
    arrays: dict[str, _Layout]  # numbers (and ids when all are integers)
    coded: dict[str, tuple[_Layout, list[Any]]]  # codes, vocabulary (string ids are stored this way too)


# What the same bytes decode to, beyond the entry's shape: raised when a decode reads them differently (2: a legacy
# trace's `ProfilerStep#N` operators are step annotations), so that no entry keeps the old reading.
DECODE_REVISION = 2


def _entry_format() -> str:
    """The format version: a hash of what shapes an entry (the column list, which columns are stored, the
    header's fields and types, the magic and alignment), so that a change to any of them is a new format without
    anyone bumping a number."""
    import xxhash

    shape = (COLUMNS, _STORED_ARRAYS, msgspec.structs.fields(_Header), msgspec.structs.fields(_Layout), _MAGIC,
             _ALIGN, DECODE_REVISION)
    return xxhash.xxh3_64_hexdigest(repr(shape).encode())[:12]


CACHE_FORMAT = _entry_format()


def write_entry(trace: Trace, target: Path) -> None:
    """Write the trace's columns to ``target`` in the entry format."""
    table = trace.table
    blobs: list[np.ndarray] = []
    offset = 0

    def place(values: np.ndarray) -> _Layout:
        nonlocal offset
        layout = _Layout(values.dtype.str, offset, len(values))
        blobs.append(values)
        offset += -(-values.nbytes // _ALIGN) * _ALIGN
        return layout

    arrays: dict[str, _Layout] = {}
    coded: dict[str, tuple[_Layout, list[Any]]] = {}
    present = table.keys
    for key in _STORED_ARRAYS:
        if key in present:
            arrays[key] = place(table.array(key))  # as analysis reads it: mapped, not converted
    for key in IDS:
        codes, vocabulary = table.id_codes(key)
        coded[key] = (place(_narrow(codes)), vocabulary)
    for key in (k for k in CODED if k in present):
        column = table.coded(key)
        coded[key] = (place(_narrow(column.codes)), column.vocabulary.tolist())
    partial = trace.partial
    header = msgspec.msgpack.encode(_Header(
        rows=len(table), metadata=trace.metadata, threads=list(trace.thread_rows),
        partial=None if partial is None else (partial.bytes_read, partial.events_read, partial.reason),
        arrays=arrays, coded=coded))
    start = -(-(len(_MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    with target.open("wb") as handle:
        handle.write(_MAGIC + len(header).to_bytes(8, "little") + header)
        handle.write(b"\0" * (start - handle.tell()))
        for values in blobs:
            handle.write(memoryview(np.ascontiguousarray(values)).cast("B"))
            handle.write(b"\0" * (-values.nbytes % _ALIGN))


def read_entry(path: Path, entry: Path) -> Trace:
    """The trace stored in ``entry`` (memory-mapped; columns are read when first used)."""
    with entry.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if mapped[:len(_MAGIC)] != _MAGIC:
        raise ValueError("not a synchunt cache entry")
    length = int.from_bytes(mapped[len(_MAGIC):len(_MAGIC) + 8], "little")
    header = msgspec.msgpack.decode(mapped[len(_MAGIC) + 8:len(_MAGIC) + 8 + length], type=_Header)
    start = -(-(len(_MAGIC) + 8 + length) // _ALIGN) * _ALIGN
    layouts = [*header.arrays.values(), *(layout for layout, _ in header.coded.values())]
    for layout in layouts:  # a short file must be refused here, not fault when a column is first read
        if layout.count != header.rows or start + layout.offset + layout.count * np.dtype(layout.dtype).itemsize > size:
            raise ValueError("truncated cache entry")

    def view(layout: _Layout) -> np.ndarray:
        return np.frombuffer(mapped, dtype=np.dtype(layout.dtype), count=layout.count, offset=start + layout.offset)

    arrays: dict[str, Any] = {key: (lambda layout=layout: view(layout)) for key, layout in header.arrays.items()}
    arrays["end"] = lambda: table.array("ts") + table.array("dur")
    coded: dict[str, Any] = {}
    for key, (layout, vocabulary) in header.coded.items():
        if key in IDS:
            arrays[key] = lambda layout=layout, vocabulary=vocabulary: CodedColumn(view(layout),
                                                                                   vocabulary_array(vocabulary))
        else:
            coded[key] = lambda layout=layout, vocabulary=vocabulary: CodedColumn(view(layout),
                                                                                  vocabulary_array(vocabulary))
    table = EventTable(arrays, coded, header.rows)
    partial = PartialRead(*header.partial) if header.partial is not None else None
    return Trace(path=path, table=table, thread_rows=tuple(tuple(row) for row in header.threads),
                 metadata=header.metadata, partial=partial)


def _narrow(values: np.ndarray) -> np.ndarray:
    """Codes in the smallest integer type that holds them all."""
    if not len(values):
        return values
    low, high = int(values.min()), int(values.max())
    for kind in (np.int8, np.int16, np.int32):
        info = np.iinfo(kind)
        if info.min <= low and high <= info.max:
            return values.astype(kind)
    return values


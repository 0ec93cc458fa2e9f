"""A cache of decoded traces (Parquet), so that re-analysing a big trace with other filters is cheap.

An entry holds a trace's event columns (containment tree included), thread table, metadata and partial-read
note. Its key is the file's size, modification time and a hash of sampled content (the first and last MiB and
16 blocks between), with synchunt's version and the cache format: editing, replacing or touching the trace, or
upgrading synchunt, misses. Entries live in the user's cache folder (``$SYNCHUNT_CACHE_DIR``, else
``$XDG_CACHE_HOME/synchunt/traces``, else ``~/.cache/synchunt/traces``), never beside the trace unless a folder
is given. The cache is best effort: an unreadable entry is a miss, a failed write is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synchunt.trace.model import Trace
from synchunt.trace.source import PartialRead

CACHE_FORMAT = 1  # bump when the cached columns change
MAX_CACHE_BYTES = 32 << 30  # least recently used entries beyond this total are removed
_SAMPLE_BYTES = 1 << 20
_SAMPLE_BLOCKS = 16
_STRING_COLUMNS = ("name", "cat", "sync_kind", "call_stack")
_BINARY_COLUMNS = ("input_types", "concrete_inputs")
_ID_COLUMNS = ("pid", "tid")


def default_cache_dir() -> Path:
    explicit = os.environ.get("SYNCHUNT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synchunt" / "traces"


def cache_key(path: Path) -> str:
    """Size, mtime and sampled content of the file, with synchunt's version and the cache format."""
    from synchunt import __version__

    info = path.stat()
    digest = hashlib.blake2b(f"{__version__}|{CACHE_FORMAT}|{info.st_size}|{info.st_mtime_ns}".encode(),
                             digest_size=20)
    with path.open("rb") as handle:
        digest.update(handle.read(_SAMPLE_BYTES))
        if info.st_size > 2 * _SAMPLE_BYTES:
            step = (info.st_size - 2 * _SAMPLE_BYTES) // (_SAMPLE_BLOCKS + 1)
            for block in range(1, _SAMPLE_BLOCKS + 1):
                handle.seek(_SAMPLE_BYTES + block * step)
                digest.update(handle.read(1 << 16))
            handle.seek(info.st_size - _SAMPLE_BYTES)
            digest.update(handle.read(_SAMPLE_BYTES))
    return digest.hexdigest()


class TraceCache:
    def __init__(self, folder: Path | None = None, max_bytes: int = MAX_CACHE_BYTES):
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self.max_bytes = max_bytes

    def entry(self, path: Path) -> Path:
        return self.folder / f"{cache_key(path)}.parquet"

    def get(self, path: Path) -> Trace | None:
        """The cached trace for this file, or None (no entry, stale, unreadable, or no pyarrow)."""
        try:
            import pyarrow.parquet as pq
        except ImportError:
            return None
        try:
            entry = self.entry(path)
            if not entry.exists():
                return None
            table = pq.read_table(entry)
            trace = _from_table(path, table)
            os.utime(entry)  # recently used: kept longest when the cache is pruned
            return trace
        except Exception:  # a broken entry is a miss, whatever broke it
            return None

    def put(self, trace: Trace) -> Path | None:
        """Store the trace's columns; the entry's path, or None when it could not be written."""
        try:
            import pyarrow.parquet as pq
        except ImportError:
            return None
        try:
            entry = self.entry(trace.path)
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
            pq.write_table(_to_table(trace), partial, compression="zstd", compression_level=1)
            os.replace(partial, entry)  # readers see a whole entry or none
            self._prune(keep=entry)
            return entry
        except Exception:  # the cache must never fail an analysis
            return None

    def _prune(self, keep: Path) -> None:
        entries = sorted(self.folder.glob("*.parquet"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in entries)
        for old in entries:
            if total <= self.max_bytes:
                break
            if old != keep:
                total -= old.stat().st_size
                old.unlink(missing_ok=True)


def _to_table(trace: Trace) -> Any:
    import pyarrow as pa

    events = trace.events
    arrays: dict[str, Any] = {}
    for key in events.columns:
        column = events[key]
        if key in _STRING_COLUMNS or key in _BINARY_COLUMNS:
            kind = pa.string() if key in _STRING_COLUMNS else pa.binary()
            codes = column.cat.codes.to_numpy()
            values = pa.array([v for v in column.cat.categories], type=kind)
            arrays[key] = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), values)
        elif key in _ID_COLUMNS and column.dtype == object:
            values = column.to_numpy()
            text = np.array([not isinstance(v, int) for v in values])
            arrays[key] = pa.array(np.where(text, 0, values).astype(np.int64))
            arrays[f"{key}_text"] = pa.array([str(v) if t else None for v, t in zip(values, text, strict=True)],
                                             type=pa.string()).dictionary_encode()
        else:
            arrays[key] = pa.array(column.to_numpy())
    note = {"metadata": trace.metadata, "threads": trace.threads.to_dict(orient="list"),
            "partial": None if trace.partial is None else vars(trace.partial), "columns": list(events.columns)}
    return pa.table(arrays).replace_schema_metadata({"synchunt": json.dumps(note)})


def _from_table(path: Path, table: Any) -> Trace:
    note = json.loads(table.schema.metadata[b"synchunt"])
    data: dict[str, Any] = {}
    for key in note["columns"]:
        column = table.column(key).combine_chunks()
        if key in _STRING_COLUMNS or key in _BINARY_COLUMNS:
            codes = column.indices.fill_null(-1).to_numpy().astype(np.int32)
            categories = pd.Index(column.dictionary.to_pylist(), dtype=object)
            data[key] = pd.Categorical.from_codes(codes, categories=categories, validate=False)
        elif key in _ID_COLUMNS and f"{key}_text" in table.column_names:
            import pyarrow.compute as pc

            values = column.to_numpy().astype(object)
            text = table.column(f"{key}_text").combine_chunks().cast("string")
            mask = pc.is_valid(text)
            values[mask.to_numpy(zero_copy_only=False)] = text.filter(mask).to_pylist()
            data[key] = values
        else:
            data[key] = column.to_numpy()
    threads = pd.DataFrame(note["threads"], columns=["pid", "tid", "kineto_name", "name"])
    partial = PartialRead(**note["partial"]) if note["partial"] else None
    return Trace(path=path, events=pd.DataFrame(data, copy=False), threads=threads, metadata=note["metadata"],
                 partial=partial)

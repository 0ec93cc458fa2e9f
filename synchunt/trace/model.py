"""The trace model: one Kineto file as immutable pandas DataFrames."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synchunt.trace import vocab
from synchunt.trace.decode import DecodedTrace
from synchunt.trace.source import PartialRead
from synchunt.trace.tree import containment

_FRAME_RE = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$")


@dataclass(frozen=True, eq=False)
class Trace:
    """A parsed trace.

    ``events``: every complete (``ph == "X"``) event — name, cat, pid, tid, ts, dur, end (µs), correlation,
    external_id, python_id, python_parent_id, stream, bytes, sync_kind, input_types, concrete_inputs (raw
    JSON bytes), call_stack — plus ``parent`` (row index of the enclosing host event on the same pid/tid, -1 for
    roots) and ``depth``. ``threads``: pid, tid, kineto_name, name (the Python thread name when synchunt's
    capture recorded it). ``metadata``: the file's top-level keys other than ``traceEvents``.
    """

    path: Path
    events: pd.DataFrame
    threads: pd.DataFrame
    metadata: dict[str, Any] = field(repr=False)
    partial: PartialRead | None = None  # set when the file was cut mid-write: the events before the cut

    @property
    def name_codes(self) -> np.ndarray:
        """Each event's name as a code into `names` (compare codes instead of strings)."""
        return self.events["name"].cat.codes.to_numpy()

    @property
    def names(self) -> pd.Index:
        return self.events["name"].cat.categories

    @property
    def category_codes(self) -> np.ndarray:
        return self.events["cat"].cat.codes.to_numpy()

    @property
    def categories(self) -> pd.Index:
        return self.events["cat"].cat.categories

    def codes_of(self, column: str, values: Any) -> np.ndarray:
        """The codes of ``values`` in a categorical column (``name``, ``cat``, …); unknown values are left out."""
        categories = self.events[column].cat.categories
        found = categories.get_indexer(list(values))
        return found[found >= 0]

    @property
    def rank(self) -> int | None:
        info = self.metadata.get("distributedInfo")
        rank = info.get("rank") if isinstance(info, dict) else None
        return _rank_number(rank)

    @property
    def synchunt(self) -> dict[str, Any]:
        """What synchunt's capture recorded: target, parameters, device, torch version, thread names."""
        return synchunt_metadata(self.metadata)

    @cached_property
    def device_activity(self) -> bool:
        """Whether any device-side or runtime event was traced (syncs can then be confirmed)."""
        return bool(self.events["cat"].isin(vocab.DEVICE_CATEGORIES).any())

    @cached_property
    def python_frames(self) -> pd.DataFrame:
        """``python_function`` events with the name split into file, (definition) line and function."""
        frames = self.events[self.events["cat"] == vocab.PYTHON_FUNCTION]
        parts = frames["name"].astype(str).str.extract(_FRAME_RE)
        out = frames[["pid", "tid", "ts", "dur", "parent", "python_id", "python_parent_id"]].copy()
        out["file"] = parts["file"].fillna(frames["name"].astype(str))
        out["line"] = pd.to_numeric(parts["line"], errors="coerce").fillna(0).astype(np.int64)
        out["function"] = parts["function"].fillna("")
        return out

    def thread_name(self, pid: Any, tid: Any) -> str:
        match = self.threads[(self.threads["pid"] == pid) & (self.threads["tid"] == tid)]
        if len(match):
            return str(match["name"].iloc[0])
        return str(python_thread_names(self.metadata).get(str(tid), tid))


def synchunt_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """What synchunt's capture recorded in the trace's top level ({} when absent or malformed)."""
    value = metadata.get(vocab.SYNCHUNT_METADATA_KEY)
    if not isinstance(value, dict):
        return {}
    # Names every output prints or groups by: anything but a string there is dropped, not passed on.
    return {key: item for key, item in value.items() if key not in _TEXT_FIELDS or isinstance(item, str)}


_TEXT_FIELDS = frozenset({"target", "label", "title", "device", "torch", "python", "synchunt", "profiled_thread",
                          "captured_at"})


def python_thread_names(metadata: dict[str, Any]) -> dict[str, str]:
    """OS thread id (as a string) → Python thread name, from synchunt's capture metadata."""
    names = synchunt_metadata(metadata).get("threads")
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


MAX_RANK = 1 << 31  # no job has more ranks; a bigger "rank" is garbage, not a rank


def _rank_number(value: object) -> int | None:
    """A rank from ``distributedInfo``: a non-negative integer (or its digits) below ``MAX_RANK``, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() and 0 <= value < MAX_RANK else None
    elif isinstance(value, str):
        value = int(value) if 0 < len(value) <= 10 and value.isdigit() and value.isascii() else None
    return value if isinstance(value, int) and 0 <= value < MAX_RANK else None


MAX_DURATION_US = 1e13  # about 116 days
MAX_TIME_US = 1e18  # about 31,700 years: epoch-based timestamps (1.7e15 µs in 2024) fit with room to spare


def build(path: Path, decoded: DecodedTrace) -> Trace:
    """Assemble a :class:`Trace` from decoded columns (complete events, thread table, containment tree)."""
    columns = dict(decoded.columns)
    ts, dur = columns["ts"], columns["dur"]
    # A duration of centuries is as unusable as a missing one (summed, it would overflow every total).
    dur = np.where(np.isfinite(dur) & (np.abs(dur) <= MAX_DURATION_US), dur, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        end = ts + dur
    dur = np.where(np.isfinite(end), dur, 0.0)
    columns["dur"] = dur
    with np.errstate(invalid="ignore"):
        keep = np.isfinite(ts) & (np.abs(ts) <= MAX_TIME_US)  # events without a usable time are dropped
    if not keep.all():
        columns = {key: _select(values, keep) for key, values in columns.items()}
        ts, dur = columns["ts"], columns["dur"]
    end = ts + dur
    cat_codes, cat_values = columns["cat"]
    host_codes = [i for i, c in enumerate(cat_values) if c in vocab.HOST_CATEGORIES]
    parent, depth = host_tree(columns["pid"], columns["tid"], ts, dur, np.isin(cat_codes, host_codes))
    frame = pd.DataFrame({
        "name": _categorical(columns["name"]), "cat": _categorical(columns["cat"]),
        "pid": columns["pid"], "tid": columns["tid"], "ts": ts, "dur": dur, "end": end,
        **{key: columns[key] for key in _ID_COLUMNS},
        **{key: _categorical(columns[key]) for key in _RAW_COLUMNS},
        "parent": parent, "depth": depth,
    }, copy=False)
    return Trace(path=path, events=frame, threads=_threads(decoded.threads, decoded.metadata),
                 metadata=decoded.metadata, partial=decoded.partial)


_ID_COLUMNS = ("correlation", "external_id", "python_id", "python_parent_id", "stream", "bytes")
_RAW_COLUMNS = ("sync_kind", "input_types", "concrete_inputs", "call_stack")


def host_tree(pid: np.ndarray, tid: np.ndarray, ts: np.ndarray, dur: np.ndarray,
              host: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parent row and depth of every event: host events nest per (pid, tid); device events stand alone."""
    parent = np.full(len(ts), -1, dtype=np.int64)
    depth = np.zeros(len(ts), dtype=np.int64)
    rows = np.flatnonzero(host)
    if not len(rows):
        return parent, depth
    pid_codes, _ = pd.factorize(pid[rows])
    tid_codes, _ = pd.factorize(tid[rows])
    lane = pid_codes.astype(np.int64) * (int(tid_codes.max()) + 1) + tid_codes
    host_ts = ts[rows]
    integer_times = bool(np.all(np.mod(ts[:1000], 1.0) == 0))
    lane_parent, lane_depth = containment(lane, host_ts, dur[rows], eps=1.0 if integer_times else 0.01)
    parent[rows] = np.where(lane_parent >= 0, rows[np.maximum(lane_parent, 0)], -1)
    depth[rows] = lane_depth
    return parent, depth


def _categorical(coded: tuple[np.ndarray, list[Any]]) -> pd.Categorical:
    codes, values = coded
    categories = pd.Index(values, dtype=object) if values else pd.Index([], dtype=object)
    return pd.Categorical.from_codes(codes, categories=categories, validate=False)


def _select(values: Any, keep: np.ndarray) -> Any:
    if isinstance(values, tuple):
        return values[0][keep], values[1]
    return values[keep]


def _threads(rows: list[tuple[Any, Any, str]], metadata: dict[str, Any]) -> pd.DataFrame:
    names = {(pid, tid): name for pid, tid, name in rows}  # the last name given to a thread wins
    python_names = python_thread_names(metadata)
    records = [{"pid": pid, "tid": tid, "kineto_name": name, "name": python_names.get(str(tid), name)}
               for (pid, tid), name in names.items()]
    table = pd.DataFrame(records, columns=["pid", "tid", "kineto_name", "name"])
    for key in ("pid", "tid"):
        if len(table) and all(isinstance(v, int) for v in table[key]):
            table[key] = table[key].astype(np.int64)
    return table

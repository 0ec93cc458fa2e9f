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

    @property
    def rank(self) -> int | None:
        info = self.metadata.get("distributedInfo")
        rank = info.get("rank") if isinstance(info, dict) else None
        return int(rank) if isinstance(rank, int | float | str) and str(rank).lstrip("-").isdigit() else None

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
    return value if isinstance(value, dict) else {}


def python_thread_names(metadata: dict[str, Any]) -> dict[str, str]:
    """OS thread id (as a string) → Python thread name, from synchunt's capture metadata."""
    names = synchunt_metadata(metadata).get("threads")
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


def build(path: Path, decoded: DecodedTrace) -> Trace:
    """Assemble a :class:`Trace` from decoded columns (complete events, thread table, containment tree)."""
    columns = decoded.columns
    ph = np.asarray(columns["ph"], dtype=object)
    complete = np.flatnonzero(ph == "X")
    frame = pd.DataFrame({key: _take(values, complete) for key, values in columns.items()
                          if key not in ("ph", "meta_name")})
    frame["pid"] = _ids(frame["pid"])
    frame["tid"] = _ids(frame["tid"])
    frame["dur"] = frame["dur"].where(np.isfinite(frame["dur"]), 0.0)
    frame = frame[np.isfinite(frame["ts"])].reset_index(drop=True)  # events without a usable time are dropped
    frame["end"] = frame["ts"] + frame["dur"]
    integer_times = bool(len(frame)) and bool(np.all(np.mod(frame["ts"].to_numpy()[:1000], 1.0) == 0))
    host = frame["cat"].isin(vocab.HOST_CATEGORIES).to_numpy()
    lane = frame.groupby(["pid", "tid"], sort=False).ngroup().to_numpy()
    lane = np.where(host, lane, -1 - np.arange(len(frame)))  # device events: each its own lane
    parent, depth = containment(lane.astype(np.int64), frame["ts"].to_numpy(), frame["dur"].to_numpy(),
                                eps=1.0 if integer_times else 0.01)
    frame["parent"] = parent
    frame["depth"] = depth
    frame["name"] = frame["name"].astype("category")
    frame["cat"] = frame["cat"].astype("category")
    return Trace(path=path, events=frame, threads=_threads(columns, ph, decoded.metadata),
                 metadata=decoded.metadata)


def _take(values: Any, index: np.ndarray) -> Any:
    if isinstance(values, np.ndarray):
        return values[index]
    if len(index) == len(values):  # every event kept: nothing to select
        return values
    return np.fromiter(values, dtype=object, count=len(values))[index]


def _ids(column: pd.Series) -> pd.Series:
    """Kineto ids are ints, sometimes strings ("0x0", "stream 7"): ints where possible, else the string."""
    def convert(value: Any) -> Any:
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        text = str(value).strip()
        try:
            return int(text, 0)
        except ValueError:
            return text
    if pd.api.types.is_integer_dtype(column.dtype):
        return column.astype(np.int64)
    if column.dtype == object:
        try:  # the common case: every id already an int
            return pd.Series(np.array(column.tolist(), dtype=np.int64), index=column.index)
        except (TypeError, ValueError, OverflowError):
            pass
    converted = [convert(v) for v in column.tolist()]
    if all(isinstance(v, int) for v in converted):
        return pd.Series(converted, dtype=np.int64, index=column.index)
    return pd.Series(converted, dtype=object, index=column.index)


def _threads(columns: dict[str, Any], ph: np.ndarray, metadata: dict[str, Any]) -> pd.DataFrame:
    names = columns["name"]
    meta = np.flatnonzero(ph == "M")
    rows: dict[tuple[Any, Any], str] = {}
    for i in meta.tolist():
        if names[i] == "thread_name":
            value = columns["meta_name"][i]
            rows[(columns["pid"][i], columns["tid"][i])] = str(value) if value is not None else ""
    python_names = python_thread_names(metadata)
    records = []
    for (pid, tid), kineto_name in rows.items():
        records.append({"pid": pid, "tid": tid, "kineto_name": kineto_name,
                        "name": python_names.get(str(tid), kineto_name)})
    table = pd.DataFrame(records, columns=["pid", "tid", "kineto_name", "name"])
    if len(table):
        table["pid"] = _ids(table["pid"])
        table["tid"] = _ids(table["tid"])
        table = table.drop_duplicates(["pid", "tid"]).reset_index(drop=True)
    return table

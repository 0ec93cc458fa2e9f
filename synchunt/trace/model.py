"""The trace model: one Kineto file as immutable numpy columns, with pandas DataFrames on demand."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from synchunt.sites import PROFILER_STEP
from synchunt.trace import vocab
from synchunt.trace.source import PartialRead
from synchunt.trace.table import (
    CODED,
    IDS,
    INT_KEYS,
    CodedColumn,
    EventTable,
    compact,
    first_appearance_codes,
    value_mask,
    vocabulary_array,
)
from synchunt.trace.tree import containment

if TYPE_CHECKING:
    import pandas as pd

    from synchunt.trace.decode import DecodedTrace

ThreadRow = tuple[Any, Any, str, str]  # pid, tid, Kineto's thread name, name

_FRAME_RE = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$")


@dataclass(frozen=True, eq=False)
class Trace:
    """A parsed trace.

    ``events``: every complete (``ph == "X"``) event — name, cat, pid, tid, ts, dur, end (µs), correlation,
    external_id, python_id, python_parent_id, stream, bytes, sync_kind, input_types, concrete_inputs (raw
    JSON bytes), call_stack — plus ``parent`` (row index of the enclosing host event on the same pid/tid, -1 for
    roots) and ``depth``. ``threads``: pid, tid, kineto_name, name (the Python thread name when synchunt's
    capture recorded it). ``metadata``: the file's top-level keys other than ``traceEvents``.

    Both tables are pandas DataFrames built on first use from ``table`` (numpy columns, see
    `synchunt.trace.table`), which is what detection and attribution read: analysing a trace never needs pandas.
    """

    path: Path
    table: EventTable = field(repr=False)
    thread_rows: tuple[ThreadRow, ...] = field(repr=False)
    metadata: dict[str, Any] = field(repr=False)
    partial: PartialRead | None = None  # set when the file was cut mid-write: the events before the cut

    @cached_property
    def events(self) -> pd.DataFrame:
        return self.table.to_frame()

    @cached_property
    def threads(self) -> pd.DataFrame:
        import pandas as pd

        table = pd.DataFrame([list(row) for row in self.thread_rows], columns=["pid", "tid", "kineto_name", "name"])
        for key in ("pid", "tid"):
            if len(table) and all(isinstance(v, int) for v in table[key]):
                table[key] = table[key].astype(np.int64)
        return table

    def __len__(self) -> int:
        return len(self.table)

    def column(self, key: str) -> np.ndarray:
        """A numeric or id column as a numpy array (ts, dur, end, correlation, stream, parent, pid, …)."""
        return self.table.array(key)

    @property
    def name_codes(self) -> np.ndarray:
        """Each event's name as a code into `names` (compare codes instead of strings)."""
        return self.table.coded("name").codes

    @property
    def names(self) -> np.ndarray:
        """The distinct event names (an object array)."""
        return self.table.coded("name").vocabulary

    @property
    def category_codes(self) -> np.ndarray:
        return self.table.coded("cat").codes

    @property
    def categories(self) -> np.ndarray:
        return self.table.coded("cat").vocabulary

    def codes_of(self, column: str, values: Any) -> np.ndarray:
        """The codes of ``values`` in a coded column (``name``, ``cat``, …); unknown values are left out."""
        return self.table.codes_of(column, values)

    def in_categories(self, categories: Any) -> np.ndarray:
        """Whether each event's category is one of ``categories`` (a boolean mask over the rows)."""
        return self.table.is_in("cat", categories)

    def strings(self, column: str) -> np.ndarray:
        """A coded column's value per row as ``str`` ("nan" where missing, as ``astype(str)`` gives)."""
        return self.table.coded(column).strings()

    def values(self, column: str, rows: Any = None) -> np.ndarray:
        """A coded column's value per row (of ``rows`` only, when given: an index array or a mask) as stored (str
        or bytes; NaN where missing, as pandas gives)."""
        return self.table.coded(column).values(rows)

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
        return bool(self.in_categories(vocab.DEVICE_CATEGORIES).any())

    @cached_property
    def python_frames(self) -> pd.DataFrame:
        """``python_function`` events with the name split into file, (definition) line and function."""
        import pandas as pd

        events = self.events
        frames = events[events["cat"] == vocab.PYTHON_FUNCTION]
        parts = frames["name"].astype(str).str.extract(_FRAME_RE)
        out = frames[["pid", "tid", "ts", "dur", "parent", "python_id", "python_parent_id"]].copy()
        out["file"] = parts["file"].fillna(frames["name"].astype(str))
        out["line"] = pd.to_numeric(parts["line"], errors="coerce").fillna(0).astype(np.int64)
        out["function"] = parts["function"].fillna("")
        return out

    @cached_property
    def _thread_names(self) -> dict[tuple[Any, Any], str]:
        names: dict[tuple[Any, Any], str] = {}
        for pid, tid, _, name in self.thread_rows:
            names.setdefault((pid, tid), name)
        return names

    @cached_property
    def thread_lanes(self) -> tuple[np.ndarray, list[tuple[Any, Any]]]:
        """Each event's (pid, tid) as a code into the distinct pairs (numbered in the order of the ids' codes),
        and the pairs."""
        keys, pair_of = _lane_keys(self.table)
        distinct, codes = compact(keys, _index_dtype(len(keys)))
        return codes.reshape(-1), [pair_of(key) for key in distinct.tolist()]

    def thread_name(self, pid: Any, tid: Any) -> str:
        try:
            found = self._thread_names.get((pid, tid))
        except TypeError:  # an unhashable id
            found = None
        if found is not None:
            return str(found)
        return str(python_thread_names(self.metadata).get(str(tid), tid))

    def __getstate__(self) -> dict[str, Any]:
        # Only the fields travel (to worker processes and back): the DataFrames are rebuilt where needed.
        return {key: self.__dict__[key] for key in _FIELDS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


_FIELDS = ("path", "table", "thread_rows", "metadata", "partial")


def host_lanes(trace: Trace) -> list[tuple[Any, Any]]:
    """The distinct (pid, tid) pairs of the host events, as Python values, in the order of `Trace.thread_lanes`.

    Read off the per-row lane codes of `Trace.thread_lanes` (a mark per lane that a host row has): an analysis
    with syncs reads those codes anyway, so the rows' (pid, tid) keys are worked out once, not per caller."""
    codes, pairs = trace.thread_lanes
    present = np.zeros(len(pairs), dtype=bool)
    present[codes[trace.in_categories(vocab.HOST_CATEGORIES)]] = True
    return [pairs[lane] for lane in np.flatnonzero(present).tolist()]


def _lane_keys(table: EventTable) -> tuple[np.ndarray, Callable[[int], Any]]:
    """Each row's (pid, tid) as one integer, ordered as the ids' codes, and the (pid, tid) pair an integer stands
    for."""
    pid_codes, pids = table.id_codes("pid")
    tid_codes, tids = table.id_codes("tid")
    width = max(len(tids), 1)
    keys = pid_codes.astype(_index_dtype(max(len(pids), 1) * width))  # the codes may be int8: no overflow
    keys *= width
    keys += tid_codes
    return keys, lambda key: (pids[key // width], tids[key % width])


def _index_dtype(count: int) -> Any:
    """The integer type for codes below ``count``: int32 where it holds them (half the memory of int64)."""
    return np.int32 if count < 2**31 else np.int64


def synchunt_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """What synchunt's capture recorded in the trace's top level ({} when absent or malformed)."""
    value = metadata.get(vocab.SYNCHUNT_METADATA_KEY)
    return text_fields_checked(value) if isinstance(value, dict) else {}


def text_fields_checked(value: dict[str, Any]) -> dict[str, Any]:
    """Capture metadata with its name fields (target, label, device, …) kept only when they are strings: every
    output prints or groups by them. Used on traces and on saved analyses alike."""
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
    with np.errstate(over="ignore", invalid="ignore"):
        end = ts + dur
    if not _all_usable(ts, dur, end):
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
    cat_codes, cat_values = columns["cat"] = _steps_as_annotations(columns["name"], columns["cat"])
    ids = {key: _coded(columns[key]) if isinstance(columns[key], tuple) else columns[key] for key in IDS}
    parent, depth = host_tree(*(_id_codes(ids[key]) for key in IDS), ts, dur,
                              value_mask(cat_codes, (c in vocab.HOST_CATEGORIES for c in cat_values)))
    arrays = {**ids, "ts": ts, "dur": dur, "end": end, **{key: columns[key] for key in INT_KEYS if key in columns},
              "parent": parent, "depth": depth}
    coded = {key: _coded(columns[key]) for key in CODED if key in columns}
    return Trace(path=path, table=EventTable(arrays, coded, len(ts)),
                 thread_rows=thread_rows(decoded.threads, decoded.metadata), metadata=decoded.metadata,
                 partial=decoded.partial)


def _steps_as_annotations(name: tuple[np.ndarray, list[Any]], cat: tuple[np.ndarray, list[Any]],
                          ) -> tuple[np.ndarray, list[Any]]:
    """The category column with each ``ProfilerStep#N`` written as an operator (Kineto before torch 1.10:
    category ``Operator``) made the step annotation that newer traces write: it encloses a step, it is no op."""
    name_codes, names = name
    cat_codes, categories = cat
    steps = [code for code, value in enumerate(names) if isinstance(value, str) and PROFILER_STEP.match(value)]
    if not steps or vocab.CPU_OP not in categories:
        return cat
    rows = np.isin(name_codes, steps) & (cat_codes == categories.index(vocab.CPU_OP))
    if not rows.any():
        return cat
    categories = list(categories)
    if vocab.USER_ANNOTATION not in categories:
        categories.append(vocab.USER_ANNOTATION)
    cat_codes = cat_codes.copy()
    cat_codes[rows] = categories.index(vocab.USER_ANNOTATION)
    return cat_codes, categories


def _all_usable(ts: np.ndarray, dur: np.ndarray, end: np.ndarray) -> bool:
    """Whether every time and duration is kept as it is (the usual case: checked with reductions, no copies). A
    finite end means a finite start and duration."""
    if ts.dtype != np.float64 or dur.dtype != np.float64:
        return False  # converted on the way below
    if not len(ts):
        return True
    return bool(np.isfinite(end).all()) and dur.min() >= -MAX_DURATION_US and dur.max() <= MAX_DURATION_US \
        and ts.min() >= -MAX_TIME_US and ts.max() <= MAX_TIME_US


def host_tree(pid: np.ndarray, tid: np.ndarray, ts: np.ndarray, dur: np.ndarray,
              host: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parent row and depth of every event: host events nest per (pid, tid); device events stand alone."""
    if not host.any():
        return np.full(len(ts), -1, dtype=np.int64), np.zeros(len(ts), dtype=np.int64)
    integer_times = bool(np.all(np.mod(ts[:1000], 1.0) == 0))
    rows = None if host.all() else np.flatnonzero(host)  # None: a CPU-only trace, nothing to pick or scatter
    if rows is not None:
        pid, tid, ts, dur = pid[rows], tid[rows], ts[rows], dur[rows]
    pid_codes = _lane_ids(pid)  # the ids may be given as codes already
    tid_codes = _lane_ids(tid)
    width = int(tid_codes.max()) + 1
    lane = pid_codes.astype(_index_dtype((int(pid_codes.max()) + 1) * width))
    lane *= width
    lane += tid_codes
    return containment(lane, ts, dur, eps=1.0 if integer_times else 0.01, rows=rows, size=len(host))


def _lane_ids(values: np.ndarray) -> np.ndarray:
    """Integers that tell the ids apart, small enough to combine into one lane number: codes of coded ids as they
    are (the lanes need distinct numbers, not dense ones), anything else `factorize`d."""
    if values.dtype.kind in "iu" and len(values) and int(values.min()) >= 0 and int(values.max()) < _CODE_LIMIT:
        return values
    return factorize(values)


_CODE_LIMIT = 1 << 24  # a pid code times a tid code stays far inside int64


def factorize(values: np.ndarray) -> np.ndarray:
    """A code per distinct value (int64): sorted for numbers; by first appearance for ids of mixed types."""
    if values.dtype != object:
        return compact(values)[1]
    return first_appearance_codes(values.tolist())[0]


def _coded(column: tuple[np.ndarray, list[Any]]) -> CodedColumn:
    return CodedColumn(np.asarray(column[0], dtype=np.int32), vocabulary_array(column[1]))


def _id_codes(ids: Any) -> np.ndarray:
    return ids.codes if isinstance(ids, CodedColumn) else ids


def _select(values: Any, keep: np.ndarray) -> Any:
    if isinstance(values, tuple):
        return values[0][keep], values[1]
    return values[keep]


def thread_rows(rows: list[tuple[Any, Any, str]], metadata: dict[str, Any]) -> tuple[ThreadRow, ...]:
    """(pid, tid, Kineto's name, name) per thread: the last name Kineto gave it, or the Python thread name."""
    names = {(pid, tid): name for pid, tid, name in rows}  # the last name given to a thread wins
    python_names = python_thread_names(metadata)
    return tuple((pid, tid, name, python_names.get(str(tid), name)) for (pid, tid), name in names.items())

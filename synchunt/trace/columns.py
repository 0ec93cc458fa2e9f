"""Decoded events → columns: numbers as numpy arrays, strings, ids and raw arguments as codes into a vocabulary.

A `ColumnChunk` is what one slice of the event array reduces to (picklable, so worker processes can build it);
`merge` joins chunks into the trace's columns, re-coding each chunk's vocabulary into one. Only complete events
(``ph == "X"``) become rows; ``thread_name`` metadata events are kept aside for the thread table.

Each pass over the slice's structs runs in C (``map`` of an ``attrgetter``), coded with a dict that numbers
values by first appearance (`first_appearance_codes`): no Python code runs per event on Kineto's usual types. One
pass codes every event's (phase, name, category, pid, tid) together: a slice holds few distinct such keys, and
the phase filter, the thread names and those four columns are then worked out per key, not per event (a gather
of the rows' key codes each). Ids (pid, tid) are coded too: a string id such as ``"Spans"`` costs one entry, not
an object per event.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import compress
from operator import attrgetter, countOf
from typing import Any

import msgspec
import numpy as np

from synchunt.trace import vocab
from synchunt.trace.schema import ALL_FIELDS, LOOSE_NO_ARGS, ROWS_READ, FieldSet
from synchunt.trace.table import CODED, COLUMNS, FLOAT_KEYS, IDS, INT_KEYS, first_appearance_codes, value_mask

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_MISSING_RAW = (b"", b"null")
# Column → the argument attribute it is read from, for the int and string arguments.
_ARG_OF = {c.name: c.arg for c in COLUMNS if c.arg is not None}

class Coded(msgspec.Struct):
    """A column of codes into ``values`` (-1: missing)."""

    codes: np.ndarray
    values: list[Any]


class ColumnChunk(msgspec.Struct):
    events: int  # events of every kind in the slice
    numeric: dict[str, np.ndarray]
    coded: dict[str, Coded]  # strings, raw arguments and ids
    threads: list[tuple[Any, Any, str]] = msgspec.field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.numeric["ts"])


def reduce_fast(events: list[Any], fields: FieldSet = ALL_FIELDS) -> ColumnChunk:
    """Columns of events decoded with the fast (typed) shapes."""
    # One pass codes every event's (phase, name, category, pid, tid) at once: the phase filter, the thread names
    # and four columns then come from those few distinct keys (and a gather of the rows' key codes each).
    key_codes, keys = first_appearance_codes(map(_KEY, events), len(events))
    threads = _thread_names(_pick(events, _rows_of(key_codes, [key[:2] == _THREAD_NAME for key in keys])))
    complete = events
    if not all(key[0] == "X" for key in keys):
        rows = _rows_of(key_codes, [key[0] == "X" for key in keys])
        complete = _pick(events, rows)
        keys_complete, keys = [key[0] == "X" for key in keys], [key for key in keys if key[0] == "X"]
        key_codes = (np.cumsum(keys_complete, dtype=np.int64) - 1)[key_codes[rows]]
    n = len(complete)
    numeric = {"ts": np.fromiter(map(_TS, complete), np.float64, n),
               "dur": np.fromiter(map(_DUR, complete), np.float64, n)}
    coded = {name: _by_key(coder([key[position] for key in keys]), key_codes)
             for name, position, coder in (("name", 1, _code), ("cat", 2, _code), ("pid", 3, _ids), ("tid", 4, _ids))}
    rows_read = _Rows(fields, coded, n)
    for key in INT_KEYS:
        if key not in fields.left_out:
            numeric[key] = rows_read.fill(key, lambda chosen, k=key: _int_column(chosen, _ARG_GETTERS[k]), complete,
                                          np.full(n, -1, dtype=np.int64))
    stack = _ARG_GETTERS["call_stack"]
    # Torch 2 writes no "Call stack" argument (stacks are python_function events): a count of the missing ones (one
    # loop in C) costs less than coding a column of nothing.
    has_stacks = countOf(map(stack, complete), None) != n
    coded["call_stack"] = _code(map(stack, complete), n) if has_stacks else Coded(np.full(n, -1, np.int32), [])
    coded["sync_kind"] = rows_read.coded(
        "sync_kind", lambda chosen: _code(map(_ARG_GETTERS["sync_kind"], chosen), len(chosen)), complete)
    for key in ("input_types", "concrete_inputs"):
        if key not in fields.left_out:
            get = _ARG_GETTERS[key]
            coded[key] = rows_read.coded(
                key, lambda chosen, get=get: _code_raw(map(bytes, map(get, chosen)), len(chosen)), complete)
    return ColumnChunk(len(events), numeric, coded, threads)


def _rows_of(key_codes: np.ndarray, per_key: list[bool]) -> np.ndarray:
    """The rows whose key is one of those marked."""
    if not any(per_key):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.array(per_key, dtype=bool)[key_codes])


def _pick(items: list[Any], rows: np.ndarray) -> list[Any]:
    """``items`` at ``rows`` (ascending): indexed when they are few, else filtered by a mask (one pass in C)."""
    if len(rows) * 4 < len(items):
        return [items[i] for i in rows.tolist()]
    mask = np.zeros(len(items), dtype=bool)
    mask[rows] = True
    return list(compress(items, mask.tolist()))


def _by_key(per_key: Coded, key_codes: np.ndarray) -> Coded:
    """A column coded per distinct key, as codes per row."""
    return Coded(per_key.codes[key_codes], per_key.values)


class _Rows:
    """For the ``analysis`` field set: the rows each argument column is read on (None: every row)."""

    def __init__(self, fields: FieldSet, coded: dict[str, Coded], n: int) -> None:
        self.n = n
        self._chosen: dict[str, np.ndarray | None] = {}
        if fields.name == "all":
            return
        cat = coded["cat"]
        categories = [vocab.LEGACY_CATEGORIES.get(c, c) for c in cat.values]
        for key, read_on in ROWS_READ.items():
            self._chosen[key] = self._where(cat, [c in read_on for c in categories])
        names = coded["name"]
        self._chosen["concrete_inputs"] = self._where(names, [v in fields.inputs_of for v in names.values])

    def _where(self, column: Coded, per_value: list[bool]) -> np.ndarray | None:
        if all(per_value):
            return None
        return np.flatnonzero(value_mask(column.codes, per_value))

    def pick(self, key: str, items: list[Any]) -> tuple[np.ndarray | None, list[Any]]:
        chosen = self._chosen.get(key)
        if chosen is None:
            return None, items
        return chosen, _pick(items, chosen)

    def fill(self, key: str, column: Any, items: list[Any], out: np.ndarray) -> np.ndarray:
        chosen, picked = self.pick(key, items)
        if chosen is None:
            return column(picked)
        if len(chosen):
            out[chosen] = column(picked)
        return out

    def coded(self, key: str, column: Any, items: list[Any]) -> Coded:
        chosen, picked = self.pick(key, items)
        if chosen is None:
            return column(picked)
        part = column(picked)
        codes = np.full(self.n, -1, dtype=np.int32)
        codes[chosen] = part.codes
        return Coded(codes, part.values)


def reduce_loose(events: list[Any], fields: FieldSet = ALL_FIELDS) -> ColumnChunk:
    """Columns of events decoded with the loose shapes: every value checked and converted in Python (every
    column on every row, whatever the field set asks: a loose trace is rare and small)."""
    phases = [e.ph if isinstance(e.ph, str) else "" for e in events]
    complete = list(compress(events, map("X".__eq__, phases)))
    args = [e.args or LOOSE_NO_ARGS for e in complete]
    n = len(complete)
    left_out = fields.left_out
    dur = np.fromiter((_float(e.dur) for e in complete), np.float64, n)
    numeric = {"ts": np.fromiter((_float(e.ts) for e in complete), np.float64, n),
               "dur": np.where(np.isfinite(dur), dur, 0.0)}
    for key in INT_KEYS:
        if key not in left_out:
            numeric[key] = np.fromiter((_int(getattr(a, _ARG_OF[key])) for a in args), np.int64, n)
    coded = {
        "name": _code([e.name if isinstance(e.name, str) else _text(e.name) for e in complete]),
        "cat": _code([e.cat if isinstance(e.cat, str) else "" for e in complete]),
        "pid": _ids([e.pid for e in complete]), "tid": _ids([e.tid for e in complete]),
        "sync_kind": _code([a.cuda_sync_kind if isinstance(a.cuda_sync_kind, str) else None for a in args]),
        "call_stack": _code([a.call_stack if isinstance(a.call_stack, str) else None for a in args]),
    }
    for key in ("input_types", "concrete_inputs"):
        if key not in left_out:
            coded[key] = _code_raw([bytes(getattr(a, _ARG_OF[key])) for a in args])
    threads = _thread_names(e for e, phase in zip(events, phases, strict=True)
                            if phase == "M" and e.name == "thread_name")
    return ColumnChunk(len(events), numeric, coded, threads)


def merge(chunks: list[ColumnChunk], fields: FieldSet = ALL_FIELDS) -> dict[str, Any]:
    """One set of columns from the chunks, in order: numeric arrays, and (codes, values) per coded column.

    Each column is joined and the chunks' parts of it released before the next, so the peak is the columns plus
    one column, not twice the columns."""
    columns: dict[str, Any] = {}
    left_out = fields.left_out
    for key in (k for k in (*FLOAT_KEYS, *INT_KEYS) if k not in left_out):
        parts = [c.numeric.pop(key) for c in chunks]
        columns[key] = _concat(parts, np.float64 if key in FLOAT_KEYS else np.int64)
    for key in (k for k in (*CODED, *IDS) if k not in left_out):
        normalize = vocab.LEGACY_CATEGORIES if key == "cat" else None
        columns[key] = _merge_coded([c.coded.pop(key) for c in chunks], normalize)
    return columns


def _merge_coded(parts: list[Coded], normalize: dict[str, str] | None) -> tuple[np.ndarray, list[Any]]:
    """Each part's codes re-coded into one vocabulary, written in place into the column (no part copied twice)."""
    index: dict[Any, int] = {}
    codes = np.empty(sum(len(part.codes) for part in parts), dtype=np.int32)
    start = 0
    for part in parts:
        stop = start + len(part.codes)
        if part.values:
            values = [normalize.get(v, v) for v in part.values] if normalize else part.values
            mapping = np.array([index.setdefault(v, len(index)) for v in values] + [-1], dtype=np.int32)
            # code -1 wraps to the trailing -1: missing stays missing
            np.take(mapping, part.codes, out=codes[start:stop], mode="wrap")
        else:
            codes[start:stop] = -1  # no values: every row missing
        start = stop
    return codes, list(index)


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _code(values: Iterable[Any], count: int | None = None) -> Coded:
    """Codes by first appearance; None is missing (-1)."""
    codes, distinct = first_appearance_codes(values, count)
    return _drop(Coded(codes.astype(np.int32), distinct), [v is None for v in distinct])


def _code_raw(values: Iterable[bytes], count: int | None = None) -> Coded:
    """Raw JSON arguments: absent or null is missing."""
    codes, distinct = first_appearance_codes(values, count)
    return _drop(Coded(codes.astype(np.int32), distinct), [v in _MISSING_RAW for v in distinct])


def _drop(coded: Coded, missing: list[bool]) -> Coded:
    """The same column with the values marked missing turned into code -1 (the others keep their order)."""
    if not any(missing):
        return coded
    keep = [not m for m in missing]
    remap = np.where(keep, np.cumsum(keep, dtype=np.int32) - 1, -1).astype(np.int32)
    return Coded(np.append(remap, np.int32(-1))[coded.codes],
                 [v for v, k in zip(coded.values, keep, strict=True) if k])


def _ids(values: Iterable[Any], count: int | None = None) -> Coded:
    """Kineto ids are ints, sometimes strings ("0x0", "Spans"): ints where possible, else the text."""
    values = values if isinstance(values, list) else list(values)
    try:
        codes, distinct = first_appearance_codes(values)
    except TypeError:  # an unhashable id (a list, in a loose trace): each one as its text
        codes, distinct = first_appearance_codes([_plain_id(v) for v in values])
    if all(type(v) is int and _INT64_MIN <= v <= _INT64_MAX for v in distinct):
        return Coded(codes.astype(np.int32), distinct)
    converted = [_plain_id(v) for v in distinct]
    remap, unique = first_appearance_codes(converted)  # "16" and 16 are one id
    return Coded(remap.astype(np.int32)[codes], unique)


def _plain_id(value: Any) -> Any:
    return value if type(value) is int and _INT64_MIN <= value <= _INT64_MAX else _id(value)


def _int_column(args: list[Any], getter: attrgetter) -> np.ndarray:
    n = len(args)
    try:
        return np.fromiter(map(getter, args), np.int64, n)
    except (TypeError, ValueError, OverflowError):  # None, a string id, or beyond int64
        pass
    values = list(map(getter, args))
    try:  # nulls only: as floats (None → NaN) in C, exact while every id is below 2**53
        floats = np.array(values, dtype=np.float64)
        finite = np.isfinite(floats)
        if not finite.any() or np.abs(floats[finite]).max() < 2.0**53:
            return np.where(finite, floats, -1).astype(np.int64)
    except (TypeError, ValueError, OverflowError):
        pass
    return np.fromiter(map(_int, values), np.int64, n)


def _id(value: Any) -> Any:
    number = _int(value, missing=None)
    return number if number is not None else (value.strip() if isinstance(value, str) else _text(value))


def _int(value: Any, missing: Any = -1) -> Any:
    if isinstance(value, bool) or value is None:
        return missing
    if isinstance(value, float):
        value = int(value) if math.isfinite(value) and value.is_integer() else None
    elif isinstance(value, str):
        try:
            value = int(value.strip(), 0)
        except ValueError:
            return missing
    if isinstance(value, int) and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return missing


def _float(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        return math.nan
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float
            return math.nan
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return math.nan
    return math.nan


def _text(value: Any) -> str:
    text = repr(value) if not isinstance(value, int | float) else str(value)
    return text if len(text) <= 200 else text[:200] + "…"


def _thread_names(events: Iterable[Any]) -> list[tuple[Any, Any, str]]:
    """(pid, tid, name) of ``thread_name`` metadata events."""
    names = []
    for e in events:
        value = e.args.name if e.args is not None else None
        names.append((_id(e.pid), _id(e.tid), str(value) if value is not None else ""))
    return names


_TS, _DUR = attrgetter("ts"), attrgetter("dur")
_KEY = attrgetter("ph", "name", "cat", "pid", "tid")
_THREAD_NAME = ("M", "thread_name")
# Column → the getter of its argument, from the event (the argument columns and the sync kind).
_ARG_GETTERS = {key: attrgetter(f"args.{arg}") for key, arg in _ARG_OF.items()}


def code_values(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """(codes, values) of ``values`` (None is missing), as ``build`` takes them: for columns from other sources."""
    coded = _code(values)
    return coded.codes, coded.values


def id_column(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Kineto ids coded as ``build`` takes them: ints, or the text where an id is not a number."""
    coded = _ids(values)
    return coded.codes, coded.values

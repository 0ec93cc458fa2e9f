"""Decoded events → columns: numbers as numpy arrays, strings and raw arguments as codes into a vocabulary.

A `ColumnChunk` is what one slice of the event array reduces to (picklable, so worker processes can build it);
`merge` joins chunks into the trace's columns, re-coding each chunk's vocabulary into one. Only complete events
(``ph == "X"``) become rows; ``thread_name`` metadata events are kept aside for the thread table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np

from synchunt.trace import vocab
from synchunt.trace.schema import LOOSE_NO_ARGS

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_NUMERIC = ("ts", "dur", "correlation", "external_id", "python_id", "python_parent_id", "stream", "bytes")
CODED = ("name", "cat", "sync_kind", "input_types", "concrete_inputs", "call_stack")
_MISSING_RAW = (b"", b"null")


@dataclass
class Coded:
    """A column of codes into ``values`` (-1: missing)."""

    codes: np.ndarray
    values: list[Any]


@dataclass
class ColumnChunk:
    events: int  # events of every kind in the slice
    numeric: dict[str, np.ndarray]
    coded: dict[str, Coded]
    ids: dict[str, np.ndarray]  # pid, tid: int64, or object when some id is a string
    threads: list[tuple[Any, Any, str]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.numeric["ts"])


def reduce_fast(events: list[Any]) -> ColumnChunk:
    """Columns of events decoded with the fast (typed) shapes."""
    phases = list(map(_PH, events))
    complete = list(compress(events, map("X".__eq__, phases)))
    args = list(map(_ARGS, complete))
    n = len(complete)
    numeric = {"ts": np.fromiter(map(_TS, complete), np.float64, n),
               "dur": np.fromiter(map(_DUR, complete), np.float64, n)}
    for key in ("correlation", "external_id", "python_id", "python_parent_id", "bytes"):
        numeric[key] = _int_column(list(map(attrgetter(key), args)))
    numeric["stream"] = _int_column(list(map(_STREAM, args)))
    coded = {
        "name": _code(list(map(_NAME, complete))),
        "cat": _code(list(map(_CAT, complete))),
        "sync_kind": _code(list(map(_SYNC_KIND, args))),
        "input_types": _code_raw(list(map(bytes, map(_INPUT_TYPE, args)))),
        "concrete_inputs": _code_raw(list(map(bytes, map(_CONCRETE, args)))),
        "call_stack": _code(list(map(_CALL_STACK, args))),
    }
    ids = {"pid": _id_column(list(map(_PID, complete))), "tid": _id_column(list(map(_TID, complete)))}
    return ColumnChunk(len(events), numeric, coded, ids, _thread_names(events, phases))


def reduce_loose(events: list[Any]) -> ColumnChunk:
    """Columns of events decoded with the loose shapes: every value checked and converted in Python."""
    phases = [e.ph if isinstance(e.ph, str) else "" for e in events]
    complete = list(compress(events, map("X".__eq__, phases)))
    args = [e.args or LOOSE_NO_ARGS for e in complete]
    n = len(complete)
    dur = np.fromiter((_float(e.dur) for e in complete), np.float64, n)
    numeric = {"ts": np.fromiter((_float(e.ts) for e in complete), np.float64, n),
               "dur": np.where(np.isfinite(dur), dur, 0.0)}
    for key in ("correlation", "external_id", "python_id", "python_parent_id", "bytes", "stream"):
        numeric[key] = np.fromiter((_int(getattr(a, key)) for a in args), np.int64, n)
    coded = {
        "name": _code([e.name if isinstance(e.name, str) else _text(e.name) for e in complete]),
        "cat": _code([e.cat if isinstance(e.cat, str) else "" for e in complete]),
        "sync_kind": _code([a.cuda_sync_kind if isinstance(a.cuda_sync_kind, str) else None for a in args]),
        "input_types": _code_raw([bytes(a.input_type) for a in args]),
        "concrete_inputs": _code_raw([bytes(a.concrete_inputs) for a in args]),
        "call_stack": _code([a.call_stack if isinstance(a.call_stack, str) else None for a in args]),
    }
    ids = {"pid": _object_ids([e.pid for e in complete]), "tid": _object_ids([e.tid for e in complete])}
    return ColumnChunk(len(events), numeric, coded, ids, _thread_names(events, phases))


def merge(chunks: list[ColumnChunk]) -> dict[str, Any]:
    """One set of columns from the chunks, in order: numeric arrays, ids, and (codes, values) per coded column."""
    columns: dict[str, Any] = {}
    for key in _NUMERIC:
        columns[key] = _concat([c.numeric[key] for c in chunks], np.float64 if key in ("ts", "dur") else np.int64)
    for key in ("pid", "tid"):
        parts = [c.ids[key] for c in chunks]
        if any(p.dtype == object for p in parts):
            parts = [p.astype(object) for p in parts]
        columns[key] = _concat(parts, np.int64)
    for key in CODED:
        normalize = vocab.LEGACY_CATEGORIES if key == "cat" else None
        columns[key] = _merge_coded([c.coded[key] for c in chunks], normalize)
    return columns


def _merge_coded(parts: list[Coded], normalize: dict[str, str] | None) -> tuple[np.ndarray, list[Any]]:
    index: dict[Any, int] = {}
    recoded = []
    for part in parts:
        if not len(part.codes):
            continue
        values = [normalize.get(v, v) for v in part.values] if normalize else part.values
        mapping = np.array([index.setdefault(v, len(index)) for v in values] + [-1], dtype=np.int32)
        recoded.append(mapping[part.codes])  # code -1 picks the trailing -1: missing stays missing
    codes = np.concatenate(recoded) if recoded else np.zeros(0, dtype=np.int32)
    return codes, list(index)


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _code(values: list[Any]) -> Coded:
    """Codes by first appearance; None is missing (-1)."""
    distinct = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(distinct)}
    if None in index:
        index[None] = -1
        distinct = [v for v in distinct if v is not None]
        index.update({v: i for i, v in enumerate(distinct)})
    return Coded(np.fromiter(map(index.__getitem__, values), np.int32, len(values)), distinct)


def _code_raw(values: list[bytes]) -> Coded:
    """Raw JSON arguments: absent or null is missing."""
    coded = _code(values)
    if any(v in _MISSING_RAW for v in coded.values):
        keep = [v not in _MISSING_RAW for v in coded.values]
        remap = np.cumsum(keep, dtype=np.int32) - 1
        remap = np.where(keep, remap, -1).astype(np.int32)
        coded = Coded(np.append(remap, np.int32(-1))[coded.codes], [v for v, k in zip(coded.values, keep,
                                                                                      strict=True) if k])
    return coded


def _int_column(values: list[Any]) -> np.ndarray:
    try:
        return np.fromiter(values, np.int64, len(values))
    except (TypeError, ValueError, OverflowError):  # None, a string id, or beyond int64
        pass
    try:  # nulls only: as floats (None → NaN) in C, exact while every id is below 2**53
        floats = np.array(values, dtype=np.float64)
        finite = np.isfinite(floats)
        if not finite.any() or np.abs(floats[finite]).max() < 2.0**53:
            return np.where(finite, floats, -1).astype(np.int64)
    except (TypeError, ValueError, OverflowError):
        pass
    return np.fromiter(map(_int, values), np.int64, len(values))


def _id_column(values: list[Any]) -> np.ndarray:
    try:
        return np.fromiter(values, np.int64, len(values))
    except (TypeError, ValueError, OverflowError):
        return _object_ids(values)


def _object_ids(values: list[Any]) -> np.ndarray:
    """Kineto ids are ints, sometimes strings ("0x0", "Spans"): ints where possible, else the text."""
    converted = [v if type(v) is int and _INT64_MIN <= v <= _INT64_MAX else _id(v) for v in values]
    if all(isinstance(v, int) for v in converted):
        return np.array(converted, dtype=np.int64)
    out = np.empty(len(converted), dtype=object)
    out[:] = converted
    return out


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


def _thread_names(events: list[Any], phases: list[str]) -> list[tuple[Any, Any, str]]:
    names = []
    for e in compress(events, map("M".__eq__, phases)):
        if e.name == "thread_name":
            value = e.args.name if e.args is not None else None
            names.append((_id(e.pid), _id(e.tid), str(value) if value is not None else ""))
    return names


_PH, _ARGS, _TS, _DUR = attrgetter("ph"), attrgetter("args"), attrgetter("ts"), attrgetter("dur")
_NAME, _CAT, _PID, _TID = attrgetter("name"), attrgetter("cat"), attrgetter("pid"), attrgetter("tid")
_STREAM, _SYNC_KIND, _CALL_STACK = attrgetter("stream"), attrgetter("cuda_sync_kind"), attrgetter("call_stack")
_INPUT_TYPE, _CONCRETE = attrgetter("input_type"), attrgetter("concrete_inputs")


def code_values(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """(codes, values) of ``values`` (None is missing), as ``build`` takes them: for columns from other sources."""
    coded = _code(values)
    return coded.codes, coded.values


def id_column(values: list[Any]) -> np.ndarray:
    """Kineto ids as int64 (or, where some are text, an object array)."""
    return _id_column(values)

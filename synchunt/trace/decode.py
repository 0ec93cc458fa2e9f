"""Kineto JSON → columns, without a Python dict per event.

msgspec decodes each event into a small typed struct that keeps only the fields synchunt reads; the bulky
argument fields (`Input Dims`, `Concrete Inputs`) stay raw bytes until asked for, and unknown arguments are
skipped by the decoder. Columns are then built with one list comprehension each.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from synchunt.errors import TraceError
from synchunt.trace import vocab


class _Args(msgspec.Struct):
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name=vocab.ARG_EXTERNAL_ID)
    python_id: Any = msgspec.field(default=None, name=vocab.ARG_PYTHON_ID)
    python_parent_id: Any = msgspec.field(default=None, name=vocab.ARG_PYTHON_PARENT_ID)
    input_type: Any = msgspec.field(default=None, name=vocab.ARG_INPUT_TYPE)
    concrete_inputs: msgspec.Raw = msgspec.field(default=None, name=vocab.ARG_CONCRETE_INPUTS)
    call_stack: Any = msgspec.field(default=None, name=vocab.ARG_CALL_STACK)
    stream: Any = None
    device: Any = None
    kind: Any = None
    bytes: Any = None
    cuda_sync_kind: Any = None
    wait_on_stream: Any = None
    name: Any = None  # metadata events: thread_name / process_name
    labels: Any = None


class _Event(msgspec.Struct):
    ph: str = ""
    name: Any = ""
    cat: Any = ""
    pid: Any = 0
    tid: Any = 0
    ts: Any = None
    dur: Any = None
    args: _Args | None = None


class _File(msgspec.Struct):
    traceEvents: list[_Event] = msgspec.field(default_factory=list)


_EVENTS_DECODER = msgspec.json.Decoder(_File)
_TOP_DECODER = msgspec.json.Decoder(dict[str, msgspec.Raw])
_EMPTY_ARGS = _Args()


@dataclass(frozen=True)
class DecodedTrace:
    """Columns of every event plus the file's top-level metadata (everything but `traceEvents`)."""

    columns: dict[str, np.ndarray | list[Any]]
    metadata: dict[str, Any]


def read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TraceError(f"cannot read trace {path}: {error.strerror or error}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise TraceError(f"{path}: not a valid gzip file ({error})") from None
    return data


def decode(path: Path) -> DecodedTrace:
    """Decode a Kineto trace file (plain or gzip JSON) into columns."""
    data = read_bytes(path)
    try:
        top = _TOP_DECODER.decode(data)
        parsed = _EVENTS_DECODER.decode(data)
    except msgspec.DecodeError as error:
        raise TraceError(f"{path}: not a Kineto trace ({error})") from None
    except msgspec.ValidationError as error:
        raise TraceError(f"{path}: unexpected trace layout ({error})") from None
    if "traceEvents" not in top:
        raise TraceError(f"{path}: not a Kineto trace (no traceEvents)")
    metadata = {key: msgspec.json.decode(raw) for key, raw in top.items() if key != "traceEvents"}
    return DecodedTrace(columns=_columns(parsed.traceEvents), metadata=metadata)


def _number(value: Any) -> float:
    if value is None:
        return np.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def _int_or_minus_one(value: Any) -> int:
    if value is None or isinstance(value, bool):
        return -1
    if isinstance(value, int):
        return value
    try:
        return int(value, 0) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        return -1


def _columns(events: list[_Event]) -> dict[str, np.ndarray | list[Any]]:
    args = [e.args or _EMPTY_ARGS for e in events]
    categories = [e.cat if isinstance(e.cat, str) else "" for e in events]
    categories = [vocab.LEGACY_CATEGORIES.get(c, c) for c in categories]
    return {
        "ph": [e.ph for e in events],
        "name": [e.name if isinstance(e.name, str) else str(e.name) for e in events],
        "cat": categories,
        "pid": [e.pid for e in events],
        "tid": [e.tid for e in events],
        "ts": np.fromiter((_number(e.ts) for e in events), dtype=np.float64, count=len(events)),
        "dur": np.fromiter((_number(e.dur) for e in events), dtype=np.float64, count=len(events)),
        "correlation": np.fromiter((_int_or_minus_one(a.correlation) for a in args), np.int64, len(args)),
        "external_id": np.fromiter((_int_or_minus_one(a.external_id) for a in args), np.int64, len(args)),
        "python_id": np.fromiter((_int_or_minus_one(a.python_id) for a in args), np.int64, len(args)),
        "python_parent_id": np.fromiter((_int_or_minus_one(a.python_parent_id) for a in args), np.int64,
                                        len(args)),
        "stream": np.fromiter((_int_or_minus_one(a.stream) for a in args), np.int64, len(args)),
        "input_types": [a.input_type for a in args],
        "concrete_inputs": [a.concrete_inputs for a in args],
        "call_stack": [a.call_stack for a in args],
        "sync_kind": [a.cuda_sync_kind for a in args],
        "bytes": np.fromiter((_int_or_minus_one(a.bytes) for a in args), np.int64, len(args)),
        "meta_name": [a.name for a in args],
    }

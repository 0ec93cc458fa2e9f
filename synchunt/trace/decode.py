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

_NAN = float("nan")


class _Args(msgspec.Struct):
    """The arguments synchunt reads; the decoder skips every other key without building objects for it."""

    correlation: int | None = None
    external_id: int | None = msgspec.field(default=None, name=vocab.ARG_EXTERNAL_ID)
    python_id: int | None = msgspec.field(default=None, name=vocab.ARG_PYTHON_ID)
    python_parent_id: int | None = msgspec.field(default=None, name=vocab.ARG_PYTHON_PARENT_ID)
    input_type: Any = msgspec.field(default=None, name=vocab.ARG_INPUT_TYPE)
    concrete_inputs: msgspec.Raw = msgspec.field(default=None, name=vocab.ARG_CONCRETE_INPUTS)
    call_stack: str | None = msgspec.field(default=None, name=vocab.ARG_CALL_STACK)
    stream: Any = None  # an int, or a string such as "0x0" in ROCm traces
    bytes: Any = None
    cuda_sync_kind: str | None = None
    name: Any = None  # metadata events: thread_name / process_name


class _Event(msgspec.Struct):
    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: Any = 0
    tid: Any = 0
    ts: float = _NAN
    dur: float = 0.0
    args: _Args | None = None


class _LooseArgs(_Args):
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name=vocab.ARG_EXTERNAL_ID)
    python_id: Any = msgspec.field(default=None, name=vocab.ARG_PYTHON_ID)
    python_parent_id: Any = msgspec.field(default=None, name=vocab.ARG_PYTHON_PARENT_ID)
    call_stack: Any = msgspec.field(default=None, name=vocab.ARG_CALL_STACK)
    cuda_sync_kind: Any = None


class _LooseEvent(msgspec.Struct):
    """The fallback for traces whose fields do not have Kineto's usual types (strings for numbers, …)."""

    ph: Any = ""
    name: Any = ""
    cat: Any = ""
    pid: Any = 0
    tid: Any = 0
    ts: Any = None
    dur: Any = None
    args: _LooseArgs | None = None


# Top-level keys Kineto (and synchunt's capture) write besides the events.
_METADATA_KEYS = ("schemaVersion", "deviceProperties", "distributedInfo", "traceName", "displayTimeUnit",
                  "baseTimeNanoseconds", "trace_id", "with_stack", "record_shapes", "with_flops", "with_modules",
                  "profile_memory", "host_name", "cupti_version", "cuda_runtime_version", "cuda_driver_version",
                  "hip_runtime_version", "roctracer_version", "deviceType", vocab.SYNCHUNT_METADATA_KEY)


def _file_type(event_type: type) -> type:
    fields = [(key, Any, None) for key in _METADATA_KEYS]
    fields.append(("traceEvents", list[event_type] | None, None))
    return msgspec.defstruct("_File", fields)


_FAST_DECODER = msgspec.json.Decoder(_file_type(_Event))
_LOOSE_DECODER = msgspec.json.Decoder(_file_type(_LooseEvent))
_EMPTY_ARGS = _LooseArgs()


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
    """Decode a Kineto trace file (plain or gzip JSON) into columns, in one pass over the bytes."""
    data = read_bytes(path)
    try:
        parsed = _FAST_DECODER.decode(data)
        fast = True
    except msgspec.ValidationError:
        fast = False
    except msgspec.DecodeError as error:
        raise TraceError(f"{path}: not a Kineto trace ({error})") from None
    if not fast:
        try:
            parsed = _LOOSE_DECODER.decode(data)
        except msgspec.DecodeError as error:
            raise TraceError(f"{path}: not a Kineto trace ({error})") from None
    if parsed.traceEvents is None:
        raise TraceError(f"{path}: not a Kineto trace (no traceEvents)")
    metadata = {key: getattr(parsed, key) for key in _METADATA_KEYS if getattr(parsed, key) is not None}
    events = parsed.traceEvents
    return DecodedTrace(columns=_fast_columns(events) if fast else _loose_columns(events), metadata=metadata)


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


def _ints(values: list[Any]) -> np.ndarray:
    try:
        return np.array([-1 if v is None else v for v in values], dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return np.fromiter((_int_or_minus_one(v) for v in values), dtype=np.int64, count=len(values))


def _fast_columns(events: list[Any]) -> dict[str, np.ndarray | list[Any]]:
    args = [e.args or _EMPTY_ARGS for e in events]
    return {
        "ph": [e.ph for e in events],
        "name": [e.name for e in events],
        "cat": [vocab.LEGACY_CATEGORIES.get(e.cat, e.cat) for e in events],
        "pid": [e.pid for e in events],
        "tid": [e.tid for e in events],
        "ts": np.array([e.ts for e in events], dtype=np.float64),
        "dur": np.array([e.dur for e in events], dtype=np.float64),
        **_arg_columns(args),
    }


def _loose_columns(events: list[Any]) -> dict[str, np.ndarray | list[Any]]:
    args = [e.args or _EMPTY_ARGS for e in events]
    categories = [e.cat if isinstance(e.cat, str) else "" for e in events]
    return {
        "ph": [e.ph if isinstance(e.ph, str) else "" for e in events],
        "name": [e.name if isinstance(e.name, str) else str(e.name) for e in events],
        "cat": [vocab.LEGACY_CATEGORIES.get(c, c) for c in categories],
        "pid": [e.pid for e in events],
        "tid": [e.tid for e in events],
        "ts": np.fromiter((_number(e.ts) for e in events), dtype=np.float64, count=len(events)),
        "dur": np.nan_to_num(np.fromiter((_number(e.dur) for e in events), dtype=np.float64, count=len(events))),
        **_arg_columns(args),
    }


def _arg_columns(args: list[Any]) -> dict[str, np.ndarray | list[Any]]:
    return {
        "correlation": _ints([a.correlation for a in args]),
        "external_id": _ints([a.external_id for a in args]),
        "python_id": _ints([a.python_id for a in args]),
        "python_parent_id": _ints([a.python_parent_id for a in args]),
        "stream": _ints([a.stream for a in args]),
        "input_types": [a.input_type for a in args],
        "concrete_inputs": [a.concrete_inputs for a in args],
        "call_stack": [a.call_stack for a in args],
        "sync_kind": [a.cuda_sync_kind for a in args],
        "bytes": _ints([a.bytes for a in args]),
        "meta_name": [a.name for a in args],
    }

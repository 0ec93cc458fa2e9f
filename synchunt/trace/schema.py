"""The typed shapes msgspec decodes a Kineto trace into: only the fields synchunt reads.

The fast shapes fix Kineto's usual types (so msgspec validates in C and builds no dict per event); the loose
shapes take anything, for traces that write strings for numbers and the like. Every other argument is skipped
by the decoder. ``Input type`` and ``Concrete Inputs`` stay raw JSON. Structs are untracked by the garbage
collector (``gc=False``): they hold only decoded JSON values, which cannot form cycles.

Two field sets (`FieldSet`): ``all`` (every column of the trace model) and ``analysis`` (what detection and
attribution read, where they read it), which decodes and reduces faster.
"""

from __future__ import annotations

from typing import Any

import msgspec

from synchunt.trace import vocab

NAN = float("nan")
EMPTY_RAW = msgspec.Raw(b"")  # an absent raw argument (hashable bytes after bytes(), unlike None)


class FastArgs(msgspec.Struct, gc=False, frozen=True):
    correlation: int | None = -1
    external_id: int | None = msgspec.field(default=-1, name=vocab.ARG_EXTERNAL_ID)
    python_id: int | None = msgspec.field(default=-1, name=vocab.ARG_PYTHON_ID)
    python_parent_id: int | None = msgspec.field(default=-1, name=vocab.ARG_PYTHON_PARENT_ID)
    input_type: msgspec.Raw = msgspec.field(default=EMPTY_RAW, name=vocab.ARG_INPUT_TYPE)
    concrete_inputs: msgspec.Raw = msgspec.field(default=EMPTY_RAW, name=vocab.ARG_CONCRETE_INPUTS)
    call_stack: str | None = msgspec.field(default=None, name=vocab.ARG_CALL_STACK)
    stream: int | str | None = -1  # an int, or a string such as "0x0" in ROCm traces
    bytes: int | None = -1
    cuda_sync_kind: str | None = None
    name: Any = None  # metadata events: thread_name / process_name


NO_ARGS = FastArgs()


def _event(name: str, args: type, no_args: Any) -> type:
    """An event shape: Kineto's usual types for the fields every event has, and ``args`` (``no_args`` when
    absent)."""
    return msgspec.defstruct(name, [("ph", str, ""), ("name", str, ""), ("cat", str, ""), ("pid", int | str, 0),
                                    ("tid", int | str, 0), ("ts", float, NAN), ("dur", float, 0.0),
                                    ("args", args, no_args)], gc=False)


FastEvent = _event("FastEvent", FastArgs, NO_ARGS)


class AnalysisArgs(msgspec.Struct, gc=False, frozen=True):
    correlation: int | None = -1
    concrete_inputs: msgspec.Raw = msgspec.field(default=EMPTY_RAW, name=vocab.ARG_CONCRETE_INPUTS)
    call_stack: str | None = msgspec.field(default=None, name=vocab.ARG_CALL_STACK)
    stream: int | str | None = -1
    cuda_sync_kind: str | None = None
    name: Any = None


ANALYSIS_NO_ARGS = AnalysisArgs()


AnalysisEvent = _event("AnalysisEvent", AnalysisArgs, ANALYSIS_NO_ARGS)


class LooseArgs(msgspec.Struct, gc=False, frozen=True):
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name=vocab.ARG_EXTERNAL_ID)
    python_id: Any = msgspec.field(default=None, name=vocab.ARG_PYTHON_ID)
    python_parent_id: Any = msgspec.field(default=None, name=vocab.ARG_PYTHON_PARENT_ID)
    input_type: msgspec.Raw = msgspec.field(default=EMPTY_RAW, name=vocab.ARG_INPUT_TYPE)
    concrete_inputs: msgspec.Raw = msgspec.field(default=EMPTY_RAW, name=vocab.ARG_CONCRETE_INPUTS)
    call_stack: Any = msgspec.field(default=None, name=vocab.ARG_CALL_STACK)
    stream: Any = None
    bytes: Any = None
    cuda_sync_kind: Any = None
    name: Any = None


LOOSE_NO_ARGS = LooseArgs()


class LooseEvent(msgspec.Struct, gc=False):
    ph: Any = ""
    name: Any = ""
    cat: Any = ""
    pid: Any = 0
    tid: Any = 0
    ts: Any = None
    dur: Any = None
    args: LooseArgs | None = None


# Top-level keys Kineto (and synchunt's capture) write besides the events.
METADATA_KEYS = ("schemaVersion", "deviceProperties", "distributedInfo", "traceName", "displayTimeUnit",
                 "baseTimeNanoseconds", "trace_id", "with_stack", "record_shapes", "with_flops", "with_modules",
                 "profile_memory", "host_name", "cupti_version", "cuda_runtime_version", "cuda_driver_version",
                 "hip_runtime_version", "roctracer_version", "deviceType", vocab.SYNCHUNT_METADATA_KEY)


def _file_type(events: Any) -> type:
    fields: list[Any] = [(key, Any, None) for key in METADATA_KEYS]
    fields.append(("traceEvents", events, None))
    return msgspec.defstruct("TraceFile", fields, gc=False)


# The whole file with its events skipped (for a head and tail around an empty event list), or decoded.
METADATA_DECODER = msgspec.json.Decoder(_file_type(msgspec.Raw))
LOOSE_FILE_DECODER = msgspec.json.Decoder(_file_type(list[LooseEvent] | None))
LOOSE_EVENTS_DECODER = msgspec.json.Decoder(list[LooseEvent])
FIELD_SETS = ("all", "analysis")
_FAST = {"all": FastEvent, "analysis": AnalysisEvent}
FAST_EVENTS_DECODERS = {fields: msgspec.json.Decoder(list[event]) for fields, event in _FAST.items()}
FAST_FILE_DECODERS = {fields: msgspec.json.Decoder(_file_type(list[event] | None)) for fields, event in _FAST.items()}
# The columns each field set leaves out.
LEFT_OUT: dict[str, frozenset[str]] = {
    "all": frozenset(),
    "analysis": frozenset({"external_id", "python_id", "python_parent_id", "bytes", "input_types"}),
}
# analysis: the only categories whose events carry these columns for detection and attribution (-1 or missing
# elsewhere): what a runtime call launched, the stream of a device activity or sync record, a sync record's kind.
ROWS_READ: dict[str, frozenset[str]] = {
    "correlation": vocab.RUNTIME_CATEGORIES | vocab.DEVICE_ACTIVITY_CATEGORIES | {vocab.CUDA_SYNC},
    "stream": vocab.DEVICE_ACTIVITY_CATEGORIES | {vocab.CUDA_SYNC},
    "sync_kind": frozenset({vocab.CUDA_SYNC}),
}


class FieldSet(msgspec.Struct, frozen=True):
    """Which columns a decode fills. ``all``: every column of the trace model, on every event. ``analysis``:
    what detection and attribution read, where they read it — no external or Python ids, byte counts or input
    types; correlation ids, streams and sync kinds only on the categories of `ROWS_READ`; ``Concrete Inputs``
    only on the events named in ``inputs_of`` (the ops whose catalogue patterns have a condition)."""

    name: str = "all"
    inputs_of: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.name not in FIELD_SETS:
            raise ValueError(f"unknown field set {self.name!r}; use one of {', '.join(FIELD_SETS)}")

    @property
    def key(self) -> str:
        """What the cache key records of it."""
        return self.name if self.name == "all" else f"{self.name}:{','.join(sorted(self.inputs_of))}"

    @property
    def left_out(self) -> frozenset[str]:
        return LEFT_OUT[self.name]


ALL_FIELDS = FieldSet()


def metadata_of(parsed: Any) -> dict[str, Any]:
    return {key: getattr(parsed, key) for key in METADATA_KEYS if getattr(parsed, key) is not None}

"""Families that keep the JSON valid but not the types: wrong types per field, numeric extremes."""

from __future__ import annotations

import random
from typing import Any

import hostile_kineto as k
from hostile_case import ANY_EXIT, Case
from hostile_cmd import rotate, trace_case

_MISSING = object()
# Wrong values for a field: every JSON type, the edges of numbers, strings that look like numbers.
WRONG_VALUES: dict[str, Any] = {
    "null": None, "true": True, "false": False, "zero": 0, "minus-one": -1, "half": 1.5, "empty": "", "word": "x",
    "hex": "0x1f", "digits": "12", "list": [], "list-int": [1], "dict": {}, "dict-int": {"a": 1}, "big": 1e308,
    "minus-big": -1e308, "int-400-digits": 10**400, "minus-int-400": -(10**400), "nan-word": "nan",
    "inf-word": "inf", "deep-list": [[[[["x"]]]]], "missing": _MISSING,
}
# The subset each event field gets (every JSON type once, plus the edges that broke decoders before).
EVENT_VALUES = ("null", "true", "minus-one", "half", "empty", "word", "hex", "list", "dict-int", "big",
                "int-400-digits", "nan-word", "missing")
_TOP_VALUES = ("null", "false", "zero", "minus-one", "word", "list", "list-int", "dict", "dict-int", "big",
               "int-400-digits", "deep-list")
RAW_5000_DIGITS = "@@5000 DIGITS@@"
EVENT_FIELDS = ("ph", "name", "cat", "pid", "tid", "ts", "dur", "args")
ARG_FIELDS = ("External id", "Input type", "Concrete Inputs", "Call stack", "Python id", "Python parent id",
              "correlation", "stream", "bytes", "cuda_sync_kind")
TOP_FIELDS = ("schemaVersion", "deviceProperties", "distributedInfo", "displayTimeUnit", "baseTimeNanoseconds",
              "traceName", "synchunt", "with_stack", "deviceType")
SYNCHUNT_FIELDS = ("threads", "target", "params", "device", "profiled_thread", "torch")


def cases(rng: random.Random) -> list[Case]:
    return [*type_cases(), *numeric_cases()]


def _set(target: dict, key: str, value: Any) -> None:
    if value is _MISSING:
        target.pop(key, None)
    else:
        target[key] = value


def _events_named(doc: k.Doc, name: str) -> list[dict]:
    return [e for e in doc["traceEvents"] if e.get("name") == name]


def type_cases() -> list[Case]:
    """Each field the decoder reads, on the event that carries the sync, set to each wrong value."""
    family = "types"
    out: list[Case] = []
    index = 0
    targets = (("cpu", "aten::nonzero", EVENT_FIELDS + ARG_FIELDS[:6]),
               ("gpu", "cudaStreamSynchronize", EVENT_FIELDS + ARG_FIELDS[6:]),
               ("gpu", "Memcpy DtoH (Device -> Pageable)", ("ph", "cat", "pid", "tid", "ts", "correlation",
                                                            "stream", "bytes")),
               ("cpu", "thread_name", ("pid", "tid", "name", "args", "meta-name")))
    for base, event_name, fields in targets:
        for field in fields:
            for label in EVENT_VALUES:
                value = WRONG_VALUES[label]
                doc = k.base_doc(base)
                for event in _events_named(doc, event_name):
                    if field in EVENT_FIELDS or (event_name == "thread_name" and field == "name"):
                        _set(event, field, value)
                    elif field == "meta-name":
                        _set(event["args"], "name", value)
                    else:
                        _set(event["args"], field, value)
                tag = event_name.split()[0].replace("::", "-")
                out.append(trace_case(family, f"{base}-{tag}-{field.replace(' ', '_')}@{label}", k.dumps(doc),
                                      rotate(index)))
                index += 1
    for field in TOP_FIELDS:
        for label in _TOP_VALUES:
            doc = k.cpu_doc()
            _set(doc, field, WRONG_VALUES[label])
            out.append(_metadata_case(family, f"top-{field}@{label}", doc, index))
            index += 1
    for field in SYNCHUNT_FIELDS:
        for label in _TOP_VALUES:
            doc = k.cpu_doc()
            doc["synchunt"][field] = WRONG_VALUES[label]
            out.append(_metadata_case(family, f"synchunt-{field}@{label}", doc, index))
            index += 1
    for label in ("list", "list-int", "dict-int", "word", "null", "deep-list"):  # thread names inside `threads`
        doc = k.cpu_doc()
        doc["synchunt"]["threads"] = {"1": WRONG_VALUES[label]}
        out.append(_metadata_case(family, f"synchunt-thread-name@{label}", doc, index))
        index += 1
    for label in ("list", "dict", "word", "zero", "null", "big", "int-400-digits"):
        doc = k.cpu_doc()
        doc["traceEvents"] = WRONG_VALUES[label]
        out.append(trace_case(family, f"top-traceEvents@{label}", k.dumps(doc), rotate(index)))
        index += 1
    for label in ("null", "zero", "word", "list", "deep-list"):  # an element of traceEvents that is not an object
        doc = k.cpu_doc()
        doc["traceEvents"].insert(3, WRONG_VALUES[label])
        out.append(trace_case(family, f"event-not-object@{label}", k.dumps(doc), rotate(index)))
        index += 1
    return out


def _metadata_case(family: str, name: str, doc: k.Doc, index: int) -> Case:
    """Metadata that carries no event: refusing it is allowed, but an analysis must keep the verdict."""
    command = rotate(index)
    if command == "analyze-json":
        return trace_case(family, name, k.dumps(doc), command, exits=frozenset({0, 2}), verdict=k.CPU_VERDICT)
    if command.startswith("gate"):
        return trace_case(family, name, k.dumps(doc), command, exits=frozenset({1, 2}))
    return trace_case(family, name, k.dumps(doc), command)


def _shifted(doc: k.Doc, offset: float) -> k.Doc:
    for event in doc["traceEvents"]:
        if event.get("ph") == "X":
            event["ts"] += offset
    return doc


def _mapped(doc: k.Doc, field: str, value: Any, *, phase: str = "X") -> k.Doc:
    for event in doc["traceEvents"]:
        if event.get("ph") == phase:
            event[field] = value
    return doc


def numeric_cases() -> list[Case]:
    """Edges of numbers: overflow, underflow, huge integers, negative and enormous durations, odd line numbers."""
    family = "numeric"
    keep = {"exits": frozenset({0}), "verdict": k.CPU_VERDICT}
    variants: list[tuple[str, k.Doc, dict]] = [
        ("shift-negative", _shifted(k.cpu_doc(), -1e6), keep),
        ("shift-epoch-us", _shifted(k.cpu_doc(), 1.7e15), keep),
        ("ts-max-float", _mapped(k.cpu_doc(), "ts", 1.7976931348623157e308), {}),
        ("ts-min-float", _mapped(k.cpu_doc(), "ts", -1.7976931348623157e308), {}),
        ("ts-subnormal", _mapped(k.cpu_doc(), "ts", 5e-324), {}),
        ("ts-all-equal", _mapped(_mapped(k.cpu_doc(), "ts", 7), "dur", 0), {}),
        ("ts-negative-zero", _mapped(k.cpu_doc(), "ts", -0.0), {}),
        ("dur-max-float", _mapped(k.cpu_doc(), "dur", 1.7976931348623157e308), {}),
        ("dur-minus-max-float", _mapped(k.cpu_doc(), "dur", -1.7976931348623157e308), {}),
        ("dur-negative", _mapped(k.cpu_doc(), "dur", -5), {}),
        ("dur-subnormal", _mapped(k.cpu_doc(), "dur", 5e-324), {}),
        ("pid-2^63", _mapped(k.cpu_doc(), "pid", 2**63), {}),
        ("pid-minus-2^63-1", _mapped(k.cpu_doc(), "pid", -(2**63) - 1), {}),
        ("tid-2^64", _mapped(k.cpu_doc(), "tid", 2**64), {}),
        ("tid-400-digits", _mapped(_mapped(k.cpu_doc(), "tid", 10**400), "tid", 10**400, phase="M"), {}),
        ("pid-float", _mapped(k.cpu_doc(), "pid", 1.5), {}),
        ("tid-huge-float", _mapped(k.cpu_doc(), "tid", 1e300), {}),
        ("rank-5000-digits", {**k.cpu_doc(), "distributedInfo": {"rank": RAW_5000_DIGITS}}, {}),
        ("rank-negative", {**k.cpu_doc(), "distributedInfo": {"rank": -3}}, {}),
        ("rank-string-5000", {**k.cpu_doc(), "distributedInfo": {"rank": "7" * 5000}}, {}),
        ("rank-float", {**k.cpu_doc(), "distributedInfo": {"rank": 1e308}}, {}),
        ("base-time-huge", {**k.cpu_doc(), "baseTimeNanoseconds": 10**400}, {}),
    ]
    for label, value in (("huge-line", "model.py(99999999999999999999999999): forward"),
                         ("negative-line", "model.py(-1): forward"), ("float-line", "model.py(1e3): forward"),
                         ("zero-line", "model.py(0): forward"), ("no-line", "model.py: forward")):
        doc = k.cpu_doc()
        _events_named(doc, "model.py(12): forward")[0]["name"] = value
        variants.append((label, doc, {}))
    gpu_ids = {"correlation-2^64": 2**64, "correlation-400-digits": 10**400, "correlation-negative": -8}
    for label, value in gpu_ids.items():
        doc = k.gpu_doc()
        for event in doc["traceEvents"]:
            if event.get("args", {}).get("correlation") in (7, 8):
                event["args"]["correlation"] = value
        variants.append((label, doc, {}))
    for label, value in (("external-id-2^63", 2**63), ("external-id-400-digits", 10**400),
                         ("python-id-huge", 10**400), ("bytes-huge", 10**400)):
        doc = k.cpu_doc()
        key = {"external": "External id", "python": "Python id", "bytes": "bytes"}[label.split("-")[0]]
        for event in doc["traceEvents"]:
            if event.get("ph") == "X":
                event["args"][key] = value
        variants.append((label, doc, {}))
    mixed = k.mixed_doc()
    for event in mixed["traceEvents"]:
        if event.get("name") == "cudaStreamSynchronize":
            event["dur"] = 1e308
    variants.append(("mixed-stall-1e308", mixed, {}))
    out: list[Case] = []
    for label, doc, expect in variants:
        # json refuses to print ints over 4,300 digits: the 5,000-digit rank goes in as text
        data = k.dumps(doc).replace(f'"{RAW_5000_DIGITS}"'.encode(), b"7" * 5000)
        for command in ("analyze-json", "analyze-text", "gate-sarif", "gate-junit", "report"):
            rules = expect if command == "analyze-json" else {}
            out.append(trace_case(family, label, data, command, **{"exits": ANY_EXIT, **rules}))
    return out

"""Mutations that keep every event: the verdict (counts, rules, call sites; the gate's exit) must not move.

Other whitespace, reordered keys, shuffled events, duplicated metadata, escaped ASCII, exponent floats, unknown
extra keys, gzip instead of plain: a tool that changes its answer on any of these cannot be trusted on the rest.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import hostile_kineto as k
from hostile_case import Builder, Case
from hostile_cmd import trace_case

Mutation = Callable[[k.Doc, random.Random], bytes]


def _reversed_keys(value: object) -> object:
    if isinstance(value, dict):
        return {key: _reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(item) for item in value]
    return value


def _shuffled(doc: k.Doc, rng: random.Random) -> bytes:
    events = list(doc["traceEvents"])
    rng.shuffle(events)
    return k.dumps({**doc, "traceEvents": events})


def _duplicate_metadata(doc: k.Doc, rng: random.Random) -> bytes:
    metadata = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    return k.dumps({**doc, "traceEvents": metadata + doc["traceEvents"] + metadata})


def _duplicate_top_keys(doc: k.Doc, rng: random.Random) -> bytes:
    text = k.dumps(doc)
    return b'{"schemaVersion":0,"displayTimeUnit":"ns",' + text[1:]  # the later value of each key stands


def _escaped_ascii(doc: k.Doc, rng: random.Random) -> bytes:
    text = json.dumps(doc, ensure_ascii=True)
    return re.sub(r'"(aten|cuda|model)', lambda m: f'"\\u{ord(m.group(1)[0]):04x}' + m.group(1)[1:], text).encode()


def _exponent_floats(doc: k.Doc, rng: random.Random) -> bytes:
    for event in doc["traceEvents"]:
        for key in ("ts", "dur"):
            if isinstance(event.get(key), int) and event[key] > 0:
                event[key] = float(event[key])
    text = json.dumps(doc)
    return re.sub(r'("(?:ts|dur)": )(\d+)\.0\b', lambda m: f"{m.group(1)}{m.group(2)}e0", text).encode()


def _unknown_keys(doc: k.Doc, rng: random.Random) -> bytes:
    for event in doc["traceEvents"]:
        event["x-hostile"] = {"nested": [1, 2, {"a": None}]}
        event.setdefault("args", {})["Hostile arg"] = "ignored"
    return k.dumps({"x-before": [1, 2, 3], **doc, "x-after": {"k": "v"}})


def _with_non_ascii_names(doc: k.Doc, rng: random.Random) -> bytes:
    """The thread and process names in other scripts (written raw as UTF-8): names do not enter the verdict."""
    for event in doc["traceEvents"]:
        if event.get("ph") == "M" and isinstance(event.get("args", {}).get("name"), str):
            event["args"]["name"] += " 调度器 ☃"
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


MUTATIONS: dict[str, Mutation] = {
    "indent-1": lambda doc, rng: json.dumps(doc, indent=1).encode(),
    "indent-4": lambda doc, rng: json.dumps(doc, indent=4).encode(),
    "indent-tab": lambda doc, rng: json.dumps(doc, indent="\t").encode(),
    "spacey": lambda doc, rng: json.dumps(doc, separators=(" ,  ", " :  ")).encode(),
    "crlf": lambda doc, rng: json.dumps(doc, indent=2).replace("\n", "\r\n").encode(),
    "trailing-newlines": lambda doc, rng: k.dumps(doc) + b"\n\n\r\n",
    "sorted-keys": lambda doc, rng: json.dumps(doc, sort_keys=True).encode(),
    "reversed-keys": lambda doc, rng: k.dumps(_reversed_keys(doc)),
    "shuffled-events": _shuffled,
    "duplicate-metadata": _duplicate_metadata,
    "duplicate-top-keys": _duplicate_top_keys,
    "escaped-ascii": _escaped_ascii,
    "exponent-floats": _exponent_floats,
    "unknown-keys": _unknown_keys,
    "non-ascii-names": _with_non_ascii_names,
    "gzip": lambda doc, rng: gzip.compress(k.dumps(doc), mtime=0),
    "gzip-indented": lambda doc, rng: gzip.compress(json.dumps(doc, indent=2).encode(), compresslevel=1, mtime=0),
}
BASES = ("cpu", "gpu", "mixed", "hicache-dcp-masked-cpu", "hicache-dcp-sliced-cpu")
_GZIPPED = ("gzip", "gzip-indented")


def cases(rng: random.Random) -> list[Case]:
    family = "verdict"
    out: list[Case] = []
    for base in BASES:
        verdict = k.base_verdict(base)
        gate_exit = frozenset({1 if verdict["syncs"] else 0})
        label = base.replace("hicache-dcp-", "").replace("-cpu", "")
        original = _lazy("t.json", base, lambda doc, rng: k.dumps(doc))
        out.append(trace_case(family, f"{label}-original", original, exits=frozenset({0}), verdict=verdict))
        for name, mutate in MUTATIONS.items():
            filename = "t.json.gz" if name in _GZIPPED else "t.json"
            data = _lazy(filename, base, mutate, seed=f"{base}:{name}")
            out.append(trace_case(family, f"{label}-{name}", data, filename=filename, exits=frozenset({0}),
                                  verdict=verdict))
            out.append(trace_case(family, f"{label}-{name}", data, "gate-text", filename=filename, exits=gate_exit))
        for command in ("report", "analyze-text", "gate-github", "gate-junit", "compare-text"):
            exits = gate_exit if command.startswith("gate") else frozenset({0})
            out.append(trace_case(family, f"{label}-original", original, command, exits=exits))
    return out


def _lazy(filename: str, base: str, mutate: Mutation, seed: str = "") -> Builder:
    """Mutate when the case runs, not when the corpus is listed (the samples are megabytes)."""
    def build(folder: Path) -> None:
        (folder / filename).write_bytes(mutate(k.base_doc(base), random.Random(seed)))
    return build

"""A checker for the Chrome trace-event format, as far as the synchunt track uses it (phases, ids, flows that
start and end inside a slice, counters), so that tests can say what is wrong with an annotated trace."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

PHASES = frozenset("XBEiIsftCMbenOND")
INSTANT_SCOPES = frozenset("tpg")


def load_events(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def problems(events: list[dict[str, Any]], category: str) -> list[str]:
    """Everything wrong with the events of ``category`` (the flows, instants and counters it added)."""
    found = []
    slices: dict[tuple[Any, Any], list[tuple[float, float]]] = defaultdict(list)
    for event in events:
        if event.get("ph") == "X":
            start = float(event["ts"])
            slices[(event["pid"], event["tid"])].append((start, start + float(event.get("dur", 0))))
    flows: dict[tuple[Any, Any, Any], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    other_ids = {e.get("id") for e in events if e.get("ph") in ("s", "t", "f") and e.get("cat") != category}
    for event in events:
        phase = event.get("ph")
        if not isinstance(phase, str) or phase not in PHASES:
            found.append(f"unknown phase {phase!r}")
            continue
        if "pid" not in event:
            found.append(f"{phase} event without pid")
        if event.get("cat") != category:
            continue
        if not isinstance(event.get("ts"), int | float):
            found.append(f"{phase} event without a numeric ts")
        if phase == "i" and event.get("s") not in INSTANT_SCOPES:
            found.append(f"instant with scope {event.get('s')!r}")
        if phase == "C" and not (isinstance(event.get("args"), dict) and event["args"]
                                 and all(isinstance(v, int | float) for v in event["args"].values())):
            found.append(f"counter without numeric args: {event.get('args')!r}")
        if phase in ("s", "f"):
            if not isinstance(event.get("id"), int | str):
                found.append(f"flow {phase} without an id")
            flows[(event.get("cat"), event.get("name"), event.get("id"))][phase].append(event)
    for key, ends in flows.items():
        if len(ends["s"]) != 1 or len(ends["f"]) != 1:
            found.append(f"flow {key}: {len(ends['s'])} starts, {len(ends['f'])} ends")
            continue
        start, finish = ends["s"][0], ends["f"][0]
        if finish.get("bp") != "e":
            found.append(f"flow {key}: end without bp 'e'")
        if float(finish["ts"]) < float(start["ts"]):
            found.append(f"flow {key}: ends before it starts")
        if key[2] in other_ids:
            found.append(f"flow {key}: id shared with a flow of the original trace")
        for end in (start, finish):
            if not any(lo <= float(end["ts"]) <= hi for lo, hi in slices[(end["pid"], end["tid"])]):
                found.append(f"flow {key}: {end['ph']} at {end['ts']} binds to no slice on {end['pid']}/{end['tid']}")
    return found

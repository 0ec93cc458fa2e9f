"""The synchunt track as trace events: an instant per sync, a flow arrow to each activity it waited for, and a
counter of cumulative stall per process (Chrome trace-event format, as Perfetto and chrome://tracing read it).

Flow arrows start on the blocked thread at the blocking call's start (``s`` binds to the enclosing slice, the
call) and end inside the waited-for activity, no earlier than the start (``f`` with ``bp: "e"`` binds to the
enclosing slice at its timestamp; a flow must not go back in time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synchunt.annotate.model import SyncMark

CATEGORY = "synchunt"
FLOW_NAME = "synchunt: waited on"
COUNTER_NAME = "synchunt cumulative stall"
TRACK_NAME = "synchunt syncs"
# The synchunt track's thread id inside each host process: above any Linux thread id (pid_max ≤ 2^22) and any
# stream id, so it never merges with a real thread.
TRACK_TID = 0x53594E43


def track_events(marks: Sequence[SyncMark], first_flow_id: int) -> list[dict[str, Any]]:
    """Every event of the synchunt track, flows numbered from ``first_flow_id``."""
    ordered = sorted(marks, key=lambda m: m.ts_us)
    events: list[dict[str, Any]] = []
    for pid in dict.fromkeys(m.pid for m in ordered):
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": TRACK_TID, "args": {"name": TRACK_NAME}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": TRACK_TID,
                       "args": {"sort_index": -1}})
    flow_id = first_flow_id
    cumulative: dict[Any, float] = {}
    for mark in ordered:
        events.append(_instant(mark))
        for target in mark.waited_on:
            end_ts = target.ts_us + target.dur_us
            if end_ts < mark.ts_us:
                continue  # ended before the sync was called: an arrow to it would go back in time
            events.append({"ph": "s", "cat": CATEGORY, "name": FLOW_NAME, "id": flow_id, "pid": mark.pid,
                           "tid": mark.tid, "ts": mark.ts_us})
            events.append({"ph": "f", "bp": "e", "cat": CATEGORY, "name": FLOW_NAME, "id": flow_id,
                           "pid": target.pid, "tid": target.tid,
                           "ts": (max(mark.ts_us, target.ts_us) + end_ts) / 2})
            flow_id += 1
        if mark.pid not in cumulative:
            cumulative[mark.pid] = 0.0
            events.append(_counter(mark.pid, mark.ts_us, 0.0))
        cumulative[mark.pid] += mark.stall_us
        events.append(_counter(mark.pid, mark.ts_us + mark.dur_us, cumulative[mark.pid]))
    return events


def _instant(mark: SyncMark) -> dict[str, Any]:
    args: dict[str, Any] = {"rule": mark.rule, "title": mark.title, "call site": mark.call_site or "unknown",
                            "fix": mark.fix, "stall (µs)": round(mark.stall_us, 3),
                            "thread": f"{mark.pid}/{mark.tid}"}
    if mark.op:
        args["op"] = mark.op
    if mark.idle_us is not None:
        args["device idle caused (µs)"] = round(mark.idle_us, 3)
    if mark.waited_on:
        args["waited on"] = [f"{t.name} ({t.dur_us:g} µs)" for t in mark.waited_on]
    where = f" at {mark.call_site}" if mark.call_site else ""
    return {"ph": "i", "s": "t", "cat": CATEGORY, "name": f"{mark.rule} {mark.title}{where}", "pid": mark.pid,
            "tid": TRACK_TID, "ts": mark.ts_us, "args": args}


def _counter(pid: Any, ts: float, value: float) -> dict[str, Any]:
    return {"ph": "C", "cat": CATEGORY, "name": COUNTER_NAME, "pid": pid, "ts": ts,
            "args": {"stall (µs)": round(value, 3)}}

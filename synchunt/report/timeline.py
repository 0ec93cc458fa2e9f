"""The timeline's data: scope and op lanes of the threads that matter, every sync, GPU stream lanes, the rest
decimated.

A lane holds non-overlapping intervals: one per nesting level of ``record_function`` scopes (``start_loading``,
``layer_k``) and one for the outermost ops of each thread, then one per GPU stream (``synchunt.report.device``).
Non-sync events beyond ``budget`` are dropped, shortest first (they are invisible until zoomed in anyway), except
the scopes and op that enclose a sync; device activities have a budget of their own.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synchunt.attribute import Analysis, Sync
from synchunt.report.device import DeviceLanes, device_lanes
from synchunt.trace import Trace, vocab

DEFAULT_BUDGET = 4000
MAX_SCOPE_LANES = 16  # the outermost nesting levels of record_function scopes get a lane each
MAX_THREADS = 12  # host threads drawn (those with the most syncs); a lane set per thread
MAX_MARKED = 2000  # syncs marked (the longest stalls); a browser draws that many markers, not 100,000
_OP_CATEGORIES = (vocab.CPU_OP, vocab.RUNTIME)
SHORT_THREAD = 20  # lane labels: a thread name longer than this is cut (the full name is in every hover)
SHORT_KIND = 18


@dataclass(frozen=True)
class Timeline:
    """Times in ms from the first event of the threads shown. ``lanes`` are the full lane names (``labels``: the
    same, shortened for the axis). ``bars``: lane, start, duration, name, kind ("scope", "op", "sync-op": an op
    enclosing a sync; on GPU lanes "kernel", "memcpy", "memset", "waited-on": work a sync waited for).
    ``gaps``: the device idle each sync caused. ``syncs``: one row per sync (never decimated)."""

    title: str
    lanes: list[str]
    labels: list[str]
    bars: pd.DataFrame
    gaps: pd.DataFrame
    syncs: pd.DataFrame
    shown: int
    total: int
    device_shown: int = 0
    device_total: int = 0
    streams: int = 0  # GPU streams with activity in the stretch shown
    stream_lanes: int = 0
    threads: int = 0  # host threads with syncs
    thread_lanes: int = 0  # ... of which drawn
    syncs_total: int = 0  # syncs on the threads drawn (``syncs`` holds those marked)
    off_axis: int = 0  # guard-only syncs on threads without any timed sync: not drawn (no time to place them at)

    @property
    def decimated(self) -> bool:
        return self.shown < self.total or self.device_shown < self.device_total

    def sync_focus(self) -> tuple[float, float] | None:
        """The initial view: the stretch holding the syncs, the work they waited for and the idle they caused,
        when it fills under a third of the timeline (with room on both sides for the syncs' labels)."""
        if self.syncs.empty or self.bars.empty:
            return None
        start = float(self.bars["start_ms"].min())
        end = float((self.bars["start_ms"] + self.bars["dur_ms"]).max())
        ends = [self.syncs["t_ms"].max(), self.syncs["wait_end_ms"].max(),
                (self.gaps["start_ms"] + self.gaps["dur_ms"]).max() if len(self.gaps) else None]
        first = float(self.syncs["t_ms"].min())
        last = max(float(value) for value in ends if value is not None and not pd.isna(value))
        if end <= start or (last - first) > (end - start) / 3:
            return None
        margin = max((last - first) * 0.08, (end - start) * 0.01)
        return max(start, first - margin), min(end, last + margin)

    def note(self) -> str:
        parts = [f"all {self.total} scope and op events shown" if self.shown == self.total else
                 f"decimated: {self.shown} of {self.total} scope and op events shown (the longest, and every one "
                 f"enclosing a marked sync); all {len(self.syncs)} syncs shown"]
        placed = int(self.syncs["by_order"].sum()) if "by_order" in self.syncs else 0
        if placed:
            parts.append(f"{placed} {'sync' if placed == 1 else 'syncs'} seen by the runtime guard only, placed by "
                         "order among the thread's syncs (the trace has no event for them)")
        if self.off_axis:
            parts.append(f"{self.off_axis} {'sync' if self.off_axis == 1 else 'syncs'} seen by the runtime guard "
                         "only, on threads where the trace has no sync to place them by: kept off the axis (the "
                         "table lists them)")
        if len(self.syncs) < self.syncs_total:
            parts[0] = parts[0].removesuffix(f"; all {len(self.syncs)} syncs shown")
            parts.append(f"{len(self.syncs)} of {self.syncs_total} syncs marked (the longest stalls)")
        if self.device_total:
            parts.append(f"all {self.device_total} device activities shown" if self.device_shown == self.device_total
                         else f"{self.device_shown} of {self.device_total} device activities shown (the longest, and "
                              f"all the work the syncs waited for)")
        if self.thread_lanes < self.threads:
            parts.append(f"{self.thread_lanes} of {self.threads} threads with syncs shown (those with the most "
                         f"syncs)")
        if self.stream_lanes < self.streams:
            parts.append(f"{self.stream_lanes} of {self.streams} GPU streams shown (those the syncs waited on, then "
                         f"the busiest)")
        if self.sync_focus() is not None:
            parts.append("zoomed to the syncs: double-click the plot for the whole timeline")
        return " · ".join(parts)


def build_timeline(trace: Trace, analysis: Analysis, *, thread: str | None = None,
                   budget: int = DEFAULT_BUDGET) -> Timeline:
    events = trace.events
    mine = (analysis.syncs["trace"].astype(str) == str(trace.path)).to_numpy()
    records = [record for record, keep in zip(analysis.records, mine, strict=True) if keep]
    syncs = _placed(analysis.syncs[mine].assign(
        record=pd.Series(records, index=analysis.syncs.index[mine], dtype=object)))
    unplaced = np.isnan(syncs["ts_us"].to_numpy(dtype=float))
    off_axis, syncs = int(unplaced.sum()), syncs[~unplaced]
    lanes_of, threads = _relevant_threads(trace, syncs, thread)
    syncs = syncs[pd.Series(list(zip(syncs["pid"], syncs["tid"], strict=True)), index=syncs.index).isin(lanes_of)]
    syncs_total = len(syncs)
    if syncs_total > MAX_MARKED:
        syncs = syncs.loc[syncs["stall_us"].sort_values(ascending=False, kind="stable").index[:MAX_MARKED]]
        syncs = syncs.sort_index()
    relevant = np.zeros(len(events), dtype=bool)
    for pid, tid in lanes_of:
        relevant |= (events["pid"] == pid).to_numpy() & (events["tid"] == tid).to_numpy()
    # Time zero is the first event of the threads shown, not of the whole file (other threads start earlier).
    origin = float(events["ts"][relevant].min()) if relevant.any() else 0.0
    until = float(events["end"][relevant].max()) if relevant.any() else None
    device = device_lanes(trace, records, origin, until)
    cats = events["cat"].astype(str).to_numpy(dtype=object)
    is_scope = cats == vocab.USER_ANNOTATION
    is_op = np.isin(cats, _OP_CATEGORIES)
    scope_level = _ancestor_count(events, is_scope)
    under_op = _ancestor_count(events, is_op) > 0
    lanes: list[str] = []
    labels: list[str] = []
    pieces: list[pd.DataFrame] = []
    sync_rows: list[pd.DataFrame] = []

    def lane(full: str, short: str) -> str:
        lanes.append(_unique(full, lanes))
        labels.append(short)
        return lanes[-1]

    for (pid, tid), name in lanes_of.items():
        short = _short(name.removeprefix("thread "), SHORT_THREAD)
        here = (events["pid"] == pid).to_numpy() & (events["tid"] == tid).to_numpy()
        thread_syncs = syncs[(syncs["pid"] == pid) & (syncs["tid"] == tid)]
        for level in sorted(set(scope_level[here & is_scope].tolist()))[:MAX_SCOPE_LANES]:
            rows = events[here & is_scope & (scope_level == level)]
            kind = _lane_label(rows["name"].astype(str))
            pieces.append(_bars(rows, lane(f"{name} · {kind}", f"{short} · {_short(kind, SHORT_KIND)}"), "scope",
                                thread_syncs, origin))
        pieces.append(_bars(events[here & is_op & ~under_op], lane(f"{name} · ops", f"{short} · ops"), "op",
                            thread_syncs, origin))
        sync_rows.append(_sync_rows(thread_syncs, lane(f"{name} · syncs", f"{short} · syncs"), origin, device))
    for name in device.lanes:
        lane(name, name)
    bars = pd.concat(pieces, ignore_index=True) if pieces else _bars(events.iloc[:0], "", "op", syncs, origin)
    total = len(bars)
    bars = _decimate(bars, budget)
    device_bars = _decimate(device.bars, budget)
    marks = pd.concat(sync_rows, ignore_index=True) if sync_rows else _sync_rows(syncs.iloc[:0], "", origin, device)
    return Timeline(title=str(trace.path), lanes=lanes, labels=labels,
                    bars=pd.concat([bars, device_bars], ignore_index=True), gaps=device.gaps, syncs=marks,
                    shown=len(bars), total=total, device_shown=len(device_bars), device_total=device.total,
                    streams=device.streams, stream_lanes=len(device.lanes), threads=threads,
                    thread_lanes=len(lanes_of) if threads else 0, syncs_total=syncs_total, off_axis=off_axis)


def _relevant_threads(trace: Trace, syncs: pd.DataFrame,
                      thread: str | None) -> tuple[dict[tuple[Any, Any], str], int]:
    """The threads to draw and how many threads have syncs: those with syncs (at most ``MAX_THREADS``, the
    most syncs first); else the one asked for, the profiled one, or the busiest (in that order)."""
    counts = syncs.groupby(["pid", "tid", "thread"], sort=False, dropna=False).size()
    if len(counts):
        busiest = sorted(counts.items(), key=lambda item: (-item[1], str(item[0][2])))[:MAX_THREADS]
        found = {(p, t): str(n) for (p, t, n), _ in busiest}
        return dict(sorted(found.items(), key=lambda item: item[1])), len(counts)
    names = {(p, t): trace.thread_name(p, t) for p, t in trace.threads[["pid", "tid"]].itertuples(index=False)}
    wanted = thread or trace.synchunt.get("profiled_thread")
    for key, name in names.items():
        if wanted is not None and (name == str(wanted) or str(key[1]) == str(wanted)):
            return {key: name}, 0
    ops = trace.events[trace.events["cat"].astype(str) == vocab.CPU_OP]
    if ops.empty:
        return {}, 0
    pid, tid = ops.groupby(["pid", "tid"]).size().idxmax()
    return {(pid, tid): trace.thread_name(pid, tid)}, 0


def _ancestor_count(events: pd.DataFrame, flag: np.ndarray) -> np.ndarray:
    """For every event, how many of its enclosing host events have ``flag`` set (one vector step per depth)."""
    parent = events["parent"].to_numpy()
    depth = events["depth"].to_numpy()
    count = np.zeros(len(events), dtype=np.int64)
    for level in np.unique(depth):
        index = np.flatnonzero((depth == level) & (parent >= 0))
        if len(index):
            above = parent[index]
            count[index] = count[above] + flag[above]
    return count


def _lane_label(names: pd.Series) -> str:
    """``layer_0 … layer_26`` → ``layer_k``; at most two patterns named."""
    patterns = Counter(re.sub(r"\d+", "k", name) for name in names)
    shown = [pattern for pattern, _ in patterns.most_common(2)]
    return " / ".join(shown) + (" / …" if len(patterns) > 2 else "")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _unique(label: str, taken: list[str]) -> str:
    candidate, number = label, 2
    while candidate in taken:
        candidate, number = f"{label} ({number})", number + 1
    return candidate


def _placed(syncs: pd.DataFrame) -> pd.DataFrame:
    """The syncs with a time for each where one can be given: a sync only the runtime guard saw has no trace event,
    so it is placed by its order among its thread's syncs (at the one before it, else the one after), and marked
    ``by_order``. On a thread where no sync has a trace time it keeps NaN: the caller keeps it off the axis."""
    missing = syncs["ts_us"].isna().to_numpy()
    times = syncs["ts_us"].to_numpy(dtype=float, na_value=np.nan).copy()
    if missing.any():
        threads: dict[tuple[str, str], list[int]] = {}
        for position, key in enumerate(zip(syncs["pid"].astype(str), syncs["tid"].astype(str), strict=True)):
            threads.setdefault(key, []).append(position)
        for positions in threads.values():
            times[positions] = pd.Series(times[positions]).ffill().bfill().to_numpy(dtype=float)
    return syncs.assign(ts_us=times, by_order=missing)


def _bars(rows: pd.DataFrame, lane: str, kind: str, syncs: pd.DataFrame, origin: float) -> pd.DataFrame:
    start = rows["ts"].to_numpy(dtype=float)
    end = rows["end"].to_numpy(dtype=float)
    encloses = _encloses_sync(start, end, syncs["ts_us"].to_numpy(dtype=float))
    kinds = np.where(encloses & (kind == "op"), "sync-op", kind)
    return pd.DataFrame({"lane": lane, "start_ms": (start - origin) / 1e3, "dur_ms": (end - start) / 1e3,
                         "name": rows["name"].astype(str).to_numpy(dtype=object), "kind": kinds,
                         "keep": encloses})


def _encloses_sync(start: np.ndarray, end: np.ndarray, sync_ts: np.ndarray) -> np.ndarray:
    """Which intervals (non-overlapping within a lane) contain a sync's timestamp."""
    hit = np.zeros(len(start), dtype=bool)
    if not len(start) or not len(sync_ts):
        return hit
    order = np.argsort(start, kind="stable")
    slot = np.searchsorted(start[order], sync_ts, side="right") - 1
    inside = (slot >= 0) & (end[order][np.clip(slot, 0, None)] >= sync_ts)
    hit[order[slot[inside]]] = True
    return hit


def _decimate(bars: pd.DataFrame, budget: int) -> pd.DataFrame:
    if len(bars) <= budget:
        return bars.drop(columns="keep")
    rank = bars.assign(priority=bars["keep"].astype(int)).sort_values(["priority", "dur_ms"], ascending=False,
                                                                        kind="stable")
    kept = rank.iloc[:max(budget, int(bars["keep"].sum()))].sort_index()
    return kept.drop(columns=["keep", "priority"]).reset_index(drop=True)


def _sync_rows(syncs: pd.DataFrame, lane: str, origin: float, device: DeviceLanes) -> pd.DataFrame:
    """One row per sync: where it is, what it cost, a short label, and where the work it waited for ended."""
    records: list[Sync] = list(syncs["record"]) if "record" in syncs else []
    waits = [_last_wait(record, device, origin) for record in records]
    return pd.DataFrame({
        "lane": lane, "t_ms": (syncs["ts_us"].to_numpy(dtype=float) - origin) / 1e3,
        "stall_us": syncs["stall_us"].to_numpy(dtype=float),
        "op_chain": [" › ".join(chain) or runtime for chain, runtime in zip(syncs["op_chain"], syncs["runtime"],
                                                                           strict=True)],
        "label": [f"{r.rule} {(r.op_chain[0] if r.op_chain else r.runtime).rsplit('::', 1)[-1]}" for r in records],
        "site": syncs["site"].astype(str).to_numpy(dtype=object),
        "rule": syncs["rule"].astype(str).to_numpy(dtype=object),
        "scope": syncs["scope"].fillna("").astype(str).to_numpy(dtype=object),
        "confirmed": syncs["confirmed"].astype(bool).to_numpy(),
        "idle_us": [r.device_idle_us for r in records],
        "idle_reason": [_uncharged_reason(r) for r in records],
        "delay_us": [r.collective_delay_us for r in records],
        "waited_on": [_waited_text(r) for r in records],
        "wait_lane": [lane for lane, _ in waits], "wait_end_ms": [end for _, end in waits],
        "by_order": syncs["by_order"].astype(bool).to_numpy(),
    }, columns=MARKER_COLUMNS)


# One row per sync marker on the timeline (``by_order``: placed by its order, the trace has no event for it).
MARKER_COLUMNS = ["lane", "t_ms", "stall_us", "op_chain", "label", "site", "rule", "scope", "confirmed", "idle_us",
                  "idle_reason", "delay_us", "waited_on", "wait_lane", "wait_end_ms", "by_order"]


def _waited_text(record: Sync) -> str:
    impact = record.impact
    if impact is None or not impact.waited_on:
        return ""
    last = impact.waited_on[-1]
    more = f" and {impact.waited_on_count - 1} more" if impact.waited_on_count > 1 else ""
    return f"{last.name} on stream {last.stream}{more}"


def _uncharged_reason(record: Sync) -> str:
    """Why no idle was charged, when none was (the first gap's reason)."""
    impact = record.impact
    if impact is None or (impact.device_idle_us or 0) > 0 or not impact.idle:
        return ""
    return impact.idle[0].reason


def _last_wait(record: Sync, device: DeviceLanes, origin: float) -> tuple[str | None, float | None]:
    impact = record.impact
    if impact is None or not impact.waited_on:
        return None, None
    last = max(impact.waited_on, key=lambda a: a.start_us + a.dur_us)
    lane = device.lane_of(last.device, last.stream)
    return (lane, (last.start_us + last.dur_us - origin) / 1e3) if lane else (None, None)

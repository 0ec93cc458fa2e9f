"""The timeline's data: scope and op lanes of the threads that matter, every sync, the rest decimated.

A lane holds non-overlapping intervals: one per nesting level of ``record_function`` scopes (``start_loading``,
``layer_k``) and one for the outermost ops of each thread. Non-sync events beyond ``budget`` are dropped,
shortest first (they are invisible until zoomed in anyway), except the scopes and op that enclose a sync.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synchunt.attribute import Analysis
from synchunt.trace import Trace, vocab

DEFAULT_BUDGET = 4000
_OP_CATEGORIES = (vocab.CPU_OP, vocab.RUNTIME)


@dataclass(frozen=True)
class Timeline:
    """Times in ms from the first event of the threads shown. ``bars``: lane, start, duration, name, kind
    ("scope", "op" or "sync-op": an op enclosing a sync). ``syncs``: one row per sync (never decimated)."""

    title: str
    lanes: list[str]
    bars: pd.DataFrame
    syncs: pd.DataFrame
    shown: int
    total: int

    @property
    def decimated(self) -> bool:
        return self.shown < self.total

    def sync_focus(self) -> tuple[float, float] | None:
        """The initial view: the stretch holding the syncs, when they fill under a third of the timeline."""
        if self.syncs.empty or self.bars.empty:
            return None
        start = float(self.bars["start_ms"].min())
        end = float((self.bars["start_ms"] + self.bars["dur_ms"]).max())
        first, last = float(self.syncs["t_ms"].min()), float(self.syncs["t_ms"].max())
        if end <= start or (last - first) > (end - start) / 3:
            return None
        margin = max((last - first) * 0.05, (end - start) * 0.005)
        return max(start, first - margin), min(end, last + margin)

    def note(self) -> str:
        parts = [f"all {self.total} scope and op events shown" if not self.decimated else
                 f"decimated: {self.shown} of {self.total} scope and op events shown (the longest, and every one "
                 f"enclosing a sync); all {len(self.syncs)} syncs shown"]
        if self.sync_focus() is not None:
            parts.append("zoomed to the syncs: double-click the plot for the whole timeline")
        return " · ".join(parts)


def build_timeline(trace: Trace, analysis: Analysis, *, thread: str | None = None,
                   budget: int = DEFAULT_BUDGET) -> Timeline:
    events = trace.events
    syncs = analysis.syncs[analysis.syncs["trace"].astype(str) == str(trace.path)]
    lanes_of = _relevant_threads(trace, syncs, thread)
    relevant = np.zeros(len(events), dtype=bool)
    for pid, tid in lanes_of:
        relevant |= (events["pid"] == pid).to_numpy() & (events["tid"] == tid).to_numpy()
    # Time zero is the first event of the threads shown, not of the whole file (other threads start earlier).
    origin = float(events["ts"][relevant].min()) if relevant.any() else 0.0
    cats = events["cat"].astype(str).to_numpy(dtype=object)
    is_scope = cats == vocab.USER_ANNOTATION
    is_op = np.isin(cats, _OP_CATEGORIES)
    scope_level = _ancestor_count(events, is_scope)
    under_op = _ancestor_count(events, is_op) > 0
    lanes: list[str] = []
    pieces: list[pd.DataFrame] = []
    sync_rows: list[pd.DataFrame] = []
    for (pid, tid), full_name in lanes_of.items():
        name = full_name if len(full_name) <= 40 else full_name[:39] + "…"
        here = (events["pid"] == pid).to_numpy() & (events["tid"] == tid).to_numpy()
        thread_syncs = syncs[(syncs["pid"] == pid) & (syncs["tid"] == tid)]
        levels = sorted(set(scope_level[here & is_scope].tolist()))
        for level in levels:
            rows = events[here & is_scope & (scope_level == level)]
            label = f"{name} · {_lane_label(rows['name'].astype(str))}"
            lanes.append(_unique(label, lanes))
            pieces.append(_bars(rows, lanes[-1], "scope", thread_syncs, origin))
        ops = events[here & is_op & ~under_op]
        lanes.append(_unique(f"{name} · ops", lanes))
        pieces.append(_bars(ops, lanes[-1], "op", thread_syncs, origin))
        lanes.append(_unique(f"{name} · syncs", lanes))
        sync_rows.append(_sync_rows(thread_syncs, lanes[-1], origin))
    bars = pd.concat(pieces, ignore_index=True) if pieces else _bars(events.iloc[:0], "", "op", syncs, origin)
    total = len(bars)
    bars = _decimate(bars, budget)
    marks = pd.concat(sync_rows, ignore_index=True) if sync_rows else _sync_rows(syncs.iloc[:0], "", origin)
    return Timeline(title=str(trace.path), lanes=lanes, bars=bars, syncs=marks, shown=len(bars), total=total)


def _relevant_threads(trace: Trace, syncs: pd.DataFrame, thread: str | None) -> dict[tuple[Any, Any], str]:
    """Threads with syncs; else the one asked for, the profiled one, or the busiest (in that order)."""
    found = {(p, t): str(n) for p, t, n in syncs[["pid", "tid", "thread"]].drop_duplicates().itertuples(index=False)}
    if found:
        return dict(sorted(found.items(), key=lambda item: item[1]))
    names = {(p, t): trace.thread_name(p, t) for p, t in trace.threads[["pid", "tid"]].itertuples(index=False)}
    wanted = thread or trace.synchunt.get("profiled_thread")
    for key, name in names.items():
        if wanted is not None and (name == str(wanted) or str(key[1]) == str(wanted)):
            return {key: name}
    ops = trace.events[trace.events["cat"].astype(str) == vocab.CPU_OP]
    if ops.empty:
        return {}
    pid, tid = ops.groupby(["pid", "tid"]).size().idxmax()
    return {(pid, tid): trace.thread_name(pid, tid)}


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


def _unique(label: str, taken: list[str]) -> str:
    candidate, number = label, 2
    while candidate in taken:
        candidate, number = f"{label} ({number})", number + 1
    return candidate


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


def _sync_rows(syncs: pd.DataFrame, lane: str, origin: float) -> pd.DataFrame:
    return pd.DataFrame({
        "lane": lane, "t_ms": (syncs["ts_us"].to_numpy(dtype=float) - origin) / 1e3,
        "stall_us": syncs["stall_us"].to_numpy(dtype=float),
        "op_chain": [" › ".join(chain) or runtime for chain, runtime in zip(syncs["op_chain"], syncs["runtime"],
                                                                           strict=True)],
        "site": syncs["site"].astype(str).to_numpy(dtype=object),
        "rule": syncs["rule"].astype(str).to_numpy(dtype=object),
        "scope": syncs["scope"].fillna("").astype(str).to_numpy(dtype=object),
        "confirmed": syncs["confirmed"].astype(bool).to_numpy(),
    })

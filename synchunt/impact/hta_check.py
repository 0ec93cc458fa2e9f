"""Cross-check synchunt's idle figures against HTA's idle time breakdown (its ``host_wait`` category).

HTA splits each stream's gaps between consecutive device activities into *host wait* (the next activity's
runtime call started after the previous one ended: the host was late), *kernel wait* (a gap shorter than
``consecutive_kernel_delay``) and *other*. A gap synchunt charges to a sync ends at an activity that the
blocked thread launched after the sync returned, so HTA must see that activity's gap as host wait, and the gap
synchunt measures (from the end of the waited-on work on that device) can only be shorter than HTA's (from the
previous activity on the same stream) or equal: equal when the waited-on work ran on that stream.

HTA's totals come from its public ``get_idle_time_breakdown``; to compare gap by gap, its rule is applied to its
own parsed activities (``get_trace``), and that replica is checked against HTA's totals (``replica_agrees``).
HTA is not imported here: the ``TraceAnalysis`` is handed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from synchunt.impact.model import SyncImpact

HOST_WAIT = "host_wait"
_DEVICE_CATEGORIES = ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset")
SAME_GAP = "the same gap"
LONGER_IN_HTA = "HTA's gap is longer: it starts at the previous activity on the stream, which ended earlier"
NOT_HOST_WAIT = "HTA does not count this gap as host wait"
SHORTER_IN_HTA = "HTA's gap is shorter than synchunt's"
NOT_IN_HTA = "HTA has no activity at this gap's end"


class GapCheck(msgspec.Struct, frozen=True):
    """One gap synchunt charged to a sync, next to HTA's gap before the same activity."""

    sync: int  # position in the impacts
    device: int | str
    stream: int
    synchunt_idle_us: float
    hta_idle_us: float | None
    hta_category: str | None
    verdict: str


class StreamCheck(msgspec.Struct, frozen=True):
    """Per stream: HTA's idle breakdown and the idle synchunt charged to syncs on that stream."""

    stream: int
    hta_host_wait_us: float
    hta_kernel_wait_us: float
    hta_other_us: float
    synchunt_idle_us: float
    replica_agrees: bool


class HtaCrossCheck(msgspec.Struct, frozen=True):
    streams: tuple[StreamCheck, ...]
    gaps: tuple[GapCheck, ...]

    @property
    def synchunt_idle_us(self) -> float:
        return float(sum(s.synchunt_idle_us for s in self.streams))

    @property
    def hta_host_wait_us(self) -> float:
        return float(sum(s.hta_host_wait_us for s in self.streams))

    @property
    def agree(self) -> bool:
        """Every charged gap is one of HTA's host-wait gaps, no longer than it, and the replica matches HTA."""
        return all(g.verdict in (SAME_GAP, LONGER_IN_HTA) for g in self.gaps) and \
            all(s.replica_agrees for s in self.streams)


def cross_check(analysis: Any, impacts: Sequence[SyncImpact], *, rank: int | None = None,
                consecutive_kernel_delay: int = 30) -> HtaCrossCheck:
    """Compare ``impacts`` (measured on the same trace) with HTA's idle breakdown of ``analysis``'s ``rank``.

    ``consecutive_kernel_delay`` is HTA's threshold, in the trace's time unit (µs with
    ``HTA_DISABLE_NS_ROUNDING=1``).
    """
    trace = analysis.t
    ranks = sorted(trace.traces)
    rank = ranks[0] if rank is None else rank
    gaps_table = hta_gaps(trace.get_trace(rank), trace.symbol_table.get_sym_table(), float(trace.min_ts),
                          consecutive_kernel_delay)
    if gaps_table.attrs["activities"] == 0:  # HTA's breakdown fails on a trace without device activities
        breakdown = pd.DataFrame(columns=["stream", "idle_category", "idle_time"])
    else:
        breakdown, _ = analysis.get_idle_time_breakdown(ranks=[rank], visualize=False,
                                                        consecutive_kernel_delay=consecutive_kernel_delay)
    gap_checks = _gap_checks(impacts, gaps_table)
    charged: dict[int, float] = {}
    for check in gap_checks:
        charged[check.stream] = charged.get(check.stream, 0.0) + check.synchunt_idle_us
    streams = []
    for stream in sorted(set(breakdown["stream"].astype(int)) | set(charged)):
        hta = breakdown[breakdown["stream"].astype(int) == stream].groupby("idle_category")["idle_time"].sum()
        mine = gaps_table[gaps_table["stream"] == stream].groupby("category")["idle"].sum()
        agrees = all(abs(float(hta.get(k, 0.0)) - float(mine.get(k, 0.0))) <= 0.01 + 1e-9 * abs(float(hta.get(k, 0)))
                     for k in set(hta.index) | set(mine.index))
        streams.append(StreamCheck(stream=stream, hta_host_wait_us=float(hta.get(HOST_WAIT, 0.0)),
                                   hta_kernel_wait_us=float(hta.get("kernel_wait", 0.0)),
                                   hta_other_us=float(hta.get("other", 0.0)),
                                   synchunt_idle_us=charged.get(stream, 0.0), replica_agrees=agrees))
    return HtaCrossCheck(streams=tuple(streams), gaps=tuple(gap_checks))


def hta_gaps(frame: pd.DataFrame, symbols: Sequence[str], min_ts: float,
             consecutive_kernel_delay: float) -> pd.DataFrame:
    """HTA's gaps, one row per device activity after the first on its stream: device, stream, start (absolute
    µs), previous end, idle and HTA's category for it."""
    names = list(symbols)
    category_ids = [names.index(c) for c in _DEVICE_CATEGORIES if c in names]
    activities = frame[frame["stream"].ne(-1) & frame["cat"].isin(category_ids)]
    runtime_ts = frame.set_index("index")["ts"]
    launch = activities["index_correlation"].map(runtime_ts)
    table = pd.DataFrame({"device": activities["pid"].to_numpy(), "stream": activities["stream"].astype(int),
                          "ts": activities["ts"].to_numpy(dtype=np.float64), "dur": activities["dur"].to_numpy(),
                          "launch": launch.where(activities["index_correlation"] >= 0).to_numpy(dtype=np.float64)})
    table = table.sort_values(["stream", "ts"], kind="stable")
    table["prev_end"] = (table["ts"] + table["dur"]).groupby(table["stream"]).shift(1)
    table["idle"] = table["ts"] - table["prev_end"]
    host_wait = table["launch"] > table["prev_end"]
    table["category"] = np.where(host_wait, HOST_WAIT,
                                 np.where(table["idle"] < consecutive_kernel_delay, "kernel_wait", "other"))
    table = table[table["prev_end"].notna()].copy()
    table["start_us"] = table["ts"] + min_ts
    table = table.reset_index(drop=True)
    table.attrs["activities"] = len(activities)
    return table


def _gap_checks(impacts: Sequence[SyncImpact], gaps: pd.DataFrame) -> list[GapCheck]:
    by_start = {(str(d), int(s), round(float(t), 3)): (float(i), str(c)) for d, s, t, i, c in zip(
        gaps["device"], gaps["stream"], gaps["start_us"], gaps["idle"], gaps["category"], strict=True)}
    checks = []
    for number, impact in enumerate(impacts):
        for gap in impact.idle:
            if not gap.charged or gap.next_activity is None:
                continue
            nxt = gap.next_activity
            found = by_start.get((str(nxt.device), nxt.stream, round(nxt.start_us, 3)))
            if found is None:
                verdict = NOT_IN_HTA
            elif found[1] != HOST_WAIT:
                verdict = NOT_HOST_WAIT
            elif abs(found[0] - gap.idle_us) <= 1e-3:
                verdict = SAME_GAP
            else:
                verdict = LONGER_IN_HTA if found[0] > gap.idle_us else SHORTER_IN_HTA
            checks.append(GapCheck(sync=number, device=gap.device, stream=nxt.stream, synchunt_idle_us=gap.idle_us,
                                   hta_idle_us=found[0] if found else None,
                                   hta_category=found[1] if found else None, verdict=verdict))
    return checks

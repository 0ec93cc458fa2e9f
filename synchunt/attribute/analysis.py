"""The analysis model: attributed syncs from one or more traces, grouped by call site, versioned as JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from synchunt.attribute.enrich import ATTRIBUTED_COLUMNS, attribute
from synchunt.detect import Mode, detect
from synchunt.errors import TraceError, UsageError
from synchunt.sites import PROFILER_STEP, Frame, FrameFilter, site_label
from synchunt.trace import Trace, load_traces, vocab
from synchunt.trace.decode import read_bytes

SCHEMA = "synchunt.analysis/1"


@dataclass(frozen=True)
class TraceInfo:
    path: str
    rank: int | None
    device_activity: bool
    mode: str
    start_us: float
    end_us: float
    synchunt: dict[str, Any] = field(default_factory=dict)
    threads: tuple[str, ...] | None = None  # every thread name and tid seen, for checking --thread
    scopes: tuple[str, ...] | None = None  # every record_function name (ProfilerStep#N aside), for --scope

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rank": self.rank, "device_activity": self.device_activity, "mode": self.mode,
                "start_us": self.start_us, "end_us": self.end_us, "synchunt": self.synchunt,
                "threads": None if self.threads is None else list(self.threads),
                "scopes": None if self.scopes is None else list(self.scopes)}


@dataclass(frozen=True, eq=False)
class Analysis:
    """Attributed syncs. ``syncs`` has one row per sync (``ATTRIBUTED_COLUMNS``); ``call_sites`` groups them."""

    traces: tuple[TraceInfo, ...]
    syncs: pd.DataFrame
    filters: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def call_sites(self) -> pd.DataFrame:
        """One row per call site: count, total and max stall, rules, ops, scopes, threads (most stall first)."""
        columns = ["site", "file", "line", "function", "count", "confirmed", "latent", "stall_us", "max_stall_us",
                   "rules", "ops", "scopes", "threads"]
        if self.syncs.empty:
            return pd.DataFrame(columns=columns)
        rows = []
        for site, group in self.syncs.groupby(site_labels(self.syncs), sort=False):
            first = group.iloc[0]
            rows.append({
                "site": site, "file": first["file"], "line": first["line"], "function": first["function"],
                "count": len(group), "confirmed": int(group["confirmed"].sum()),
                "latent": int((~group["confirmed"]).sum()), "stall_us": float(group["stall_us"].sum()),
                "max_stall_us": float(group["stall_us"].max()), "rules": sorted(set(group["rule"])),
                "ops": sorted(set(group["op"])), "scopes": group["scope"].value_counts(sort=False).to_dict(),
                "threads": sorted(set(group["thread"].astype(str))),
            })
        table = pd.DataFrame(rows, columns=columns)
        return table.sort_values(["stall_us", "count"], ascending=False, kind="stable").reset_index(drop=True)

    @property
    def summary(self) -> dict[str, Any]:
        confirmed = int(self.syncs["confirmed"].sum()) if len(self.syncs) else 0
        return {"syncs": len(self.syncs), "confirmed": confirmed, "latent": len(self.syncs) - confirmed,
                "stall_us": float(self.syncs["stall_us"].sum()) if len(self.syncs) else 0.0,
                "max_stall_us": float(self.syncs["stall_us"].max()) if len(self.syncs) else 0.0}

    def filter(self, *, thread: str | None = None, scope: str | None = None) -> Analysis:
        """Only syncs on ``thread`` (name or tid) and/or inside ``scope`` (a record_function name)."""
        _check_known("thread", thread, [info.threads for info in self.traces])
        _check_known("scope", scope, [info.scopes for info in self.traces])
        rows = self.syncs
        if thread is not None:
            by_name = rows["thread"].astype(str) == thread
            by_tid = rows["tid"].astype(str) == thread
            rows = rows[by_name | by_tid]
        if scope is not None:
            rows = rows[rows["scope_chain"].map(lambda chain: scope in chain)]
        filters = {**self.filters, **{k: v for k, v in {"thread": thread, "scope": scope}.items() if v is not None}}
        return Analysis(self.traces, rows.reset_index(drop=True), filters)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON contract (``schema: synchunt.analysis/1``)."""
        syncs = []
        for row in self.syncs.itertuples(index=False):
            syncs.append({
                "rule": row.rule, "kind": row.kind, "confirmed": bool(row.confirmed), "op": row.op,
                "op_chain": list(row.op_chain), "runtime": row.runtime,
                "thread": {"tid": _plain(row.tid), "pid": _plain(row.pid), "name": row.thread},
                "ts_us": row.ts_us, "stall_us": row.stall_us, "stall_source": row.stall_source,
                "call_site": {"file": row.file, "line": _plain(row.line), "function": row.function},
                "stack": list(row.stack), "scope": row.scope, "scope_chain": list(row.scope_chain),
                "step": row.step, "waited_on": row.waited_on, "direction": row.direction,
                "rank": _plain(row.rank), "trace": row.trace,
            })
        sites = []
        for row in self.call_sites.itertuples(index=False):
            sites.append({"site": row.site, "file": row.file, "line": _plain(row.line), "function": row.function,
                          "count": int(row.count), "confirmed": int(row.confirmed), "latent": int(row.latent),
                          "stall_us": row.stall_us, "max_stall_us": row.max_stall_us, "rules": list(row.rules),
                          "ops": list(row.ops), "scopes": dict(row.scopes), "threads": list(row.threads)})
        return {"schema": SCHEMA, "traces": [t.as_dict() for t in self.traces], "filters": dict(self.filters),
                "summary": self.summary, "syncs": syncs, "call_sites": sites}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Analysis:
        """Rebuild an analysis from its JSON form (re-render without re-parsing the traces)."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise TraceError(f"not a synchunt analysis (expected schema {SCHEMA!r})")
        traces = tuple(TraceInfo(**{k: t.get(k) for k in ("path", "rank", "device_activity", "mode", "start_us",
                                                          "end_us")}, synchunt=t.get("synchunt") or {},
                                 threads=_names_or_none(t.get("threads")), scopes=_names_or_none(t.get("scopes")))
                       for t in data.get("traces", []))
        rows = []
        for s in data.get("syncs", []):
            site = s.get("call_site") or {}
            thread = s.get("thread") or {}
            rows.append({"rule": s["rule"], "kind": s["kind"], "confirmed": s["confirmed"], "op": s["op"],
                         "op_chain": s.get("op_chain", []), "runtime": s.get("runtime", ""),
                         "pid": thread.get("pid"), "tid": thread.get("tid"), "thread": thread.get("name"),
                         "ts_us": s["ts_us"], "stall_us": s["stall_us"], "stall_source": s.get("stall_source"),
                         "file": site.get("file"), "line": site.get("line"), "function": site.get("function"),
                         "stack": s.get("stack", []), "scope": s.get("scope", ""),
                         "scope_chain": s.get("scope_chain", []), "step": s.get("step"),
                         "waited_on": s.get("waited_on"), "direction": s.get("direction"), "rank": s.get("rank"),
                         "trace": s.get("trace")})
        return cls(traces, pd.DataFrame(rows, columns=ATTRIBUTED_COLUMNS), dict(data.get("filters") or {}))


def site_labels(syncs: pd.DataFrame) -> pd.Series:
    """A readable key per sync's call site: ``file:line function``, or the op when no Python frame is known."""
    def frame(row: Any) -> Frame | None:
        if not (isinstance(row.file, str) and row.file):
            return None
        return Frame(row.file, int(row.line) if pd.notna(row.line) else 0, row.function)
    labels = [site_label(frame(r), r.op) for r in syncs.itertuples(index=False)]
    return pd.Series(labels, index=syncs.index, dtype=object)


def analyze(sources: Trace | Analysis | str | Path | Iterable[Trace | Analysis | str | Path], *,
            mode: Mode | str = Mode.AUTO,
            thread: str | None = None, scope: str | None = None,
            frame_filter: FrameFilter | None = None) -> Analysis:
    """Detect and attribute every sync in the given traces (paths, per-rank folders or loaded traces).

    A source may also be a saved analysis (``--format json`` output), which is read back as it was: reports and
    gates re-render it without the traces. ``thread``/``scope`` must name a thread/scope the traces have, and
    ``mode="confirmed"`` needs device activity: a typo must not turn a gate green.
    """
    traces, saved = load_sources(sources)
    mode = Mode(mode)
    if saved and mode is not Mode.AUTO and any(info.mode != mode.value for a in saved for info in a.traces):
        raise UsageError(f"a saved analysis keeps the mode it was made with; analyze the traces for "
                         f"--mode {mode.value}")
    if mode is Mode.CONFIRMED and traces and not any(t.device_activity for t in traces):
        raise UsageError("--mode confirmed needs runtime evidence, and these traces have no device activity; "
                         "use --mode auto or latent for CPU-only traces")
    frame_filter = frame_filter or FrameFilter()
    infos = [info for a in saved for info in a.traces]
    frames = [a.syncs for a in saved if len(a.syncs)]
    for trace in traces:
        detection = detect(trace, mode)
        events = trace.events
        infos.append(TraceInfo(path=str(trace.path), rank=trace.rank, device_activity=trace.device_activity,
                               mode=detection.mode.value,
                               start_us=float(events["ts"].min()) if len(events) else 0.0,
                               end_us=float(events["end"].max()) if len(events) else 0.0, synchunt=trace.synchunt,
                               threads=_thread_labels(trace), scopes=_scope_names(trace)))
        frames.append(attribute(trace, detection, frame_filter))
    non_empty = [f for f in frames if len(f)]
    syncs = pd.concat(non_empty, ignore_index=True) if non_empty else pd.DataFrame(columns=ATTRIBUTED_COLUMNS)
    result = Analysis(tuple(infos), syncs.reset_index(drop=True), {"mode": mode.value})
    return result.filter(thread=thread, scope=scope) if thread is not None or scope is not None else result


_ANALYSIS_HEAD = re.compile(rb'^\s*\{\s*"schema"\s*:\s*"synchunt\.analysis/')


def load_sources(sources: Any) -> tuple[list[Trace], list[Analysis]]:
    """Traces and saved analyses from paths (trace files, per-rank folders, ``--format json`` analyses) and
    already-loaded objects; a saved analysis is recognised by its ``schema``."""
    items: list[Any] = [sources] if isinstance(sources, Trace | Analysis | str | Path) else list(sources)
    traces = [s for s in items if isinstance(s, Trace)]
    saved: list[Analysis] = [s for s in items if isinstance(s, Analysis)]
    paths: list[Path] = []
    for item in items:
        if isinstance(item, Trace | Analysis):
            continue
        path = Path(item)
        if path.is_file() and _ANALYSIS_HEAD.match(read_bytes(path)[:256]):
            saved.append(Analysis.from_json(json.loads(read_bytes(path))))
        else:
            paths.append(path)
    if paths or not (traces or saved):
        traces.extend(load_traces(paths))
    return traces, saved


def _thread_labels(trace: Trace) -> tuple[str, ...]:
    host = trace.events["cat"].isin(vocab.HOST_CATEGORIES)
    labels = {str(t) for t in trace.events.loc[host, "tid"].unique()}
    labels |= {str(t) for t in trace.threads["tid"]} | set(trace.threads["name"].astype(str))
    labels |= {str(trace.thread_name(p, t)) for p, t in trace.events.loc[host, ["pid", "tid"]].drop_duplicates()
               .itertuples(index=False)}
    return tuple(sorted(labels))


def _scope_names(trace: Trace) -> tuple[str, ...]:
    names = trace.events.loc[trace.events["cat"] == vocab.USER_ANNOTATION, "name"].astype(str).unique()
    return tuple(sorted(n for n in names if not PROFILER_STEP.match(n)))


def _check_known(what: str, value: str | None, per_trace: list[tuple[str, ...] | None]) -> None:
    """A filter must name something the traces have; unknowable (an older saved analysis) is not checked."""
    if value is None or any(names is None for names in per_trace):
        return
    known = sorted({name for names in per_trace for name in names or ()})
    if value in known:
        return
    if not known:
        raise UsageError(f"no {what} {value!r}: these traces have no {what}s")
    listing = ", ".join(known[:12]) + (f", … ({len(known) - 12} more)" if len(known) > 12 else "")
    raise UsageError(f"no {what} {value!r} in these traces; {what}s: {listing}")


def _names_or_none(value: Any) -> tuple[str, ...] | None:
    return tuple(str(v) for v in value) if isinstance(value, list) else None


def _plain(value: Any) -> Any:
    """numpy scalars → Python scalars for JSON."""
    if value is None:
        return None
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value

"""``analyze()``: detect and attribute every sync in the given traces, then filter by thread or scope."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path

import msgspec
import numpy as np

from synchunt.attribute.enrich import attribute, set_aside_calls
from synchunt.attribute.guard_merge import guard_sequence, merge_guard
from synchunt.attribute.lines import exact_lines
from synchunt.attribute.model import Analysis, Collectives, PartialRead, Sync, TraceInfo
from synchunt.attribute.rewrites import site_rewrites
from synchunt.attribute.sources import split_sources
from synchunt.attribute.via_lines import exact_via_lines
from synchunt.attribute.warmup import mark_warmup
from synchunt.detect import Mode, analysis_fields, detect
from synchunt.errors import UsageError
from synchunt.impact.collectives import collective_kernels, earliest_collectives
from synchunt.rules.device_branches import branch_note
from synchunt.sites import PROFILER_STEP, FrameFilter
from synchunt.trace import LoadOptions, Trace, host_lanes, map_traces, vocab
from synchunt.trace.table import compact

Source = Trace | Analysis | str | Path


def analyze(sources: Source | Iterable[Source], *, mode: Mode | str = Mode.AUTO, thread: str | None = None,
            scope: str | None = None, frame_filter: FrameFilter | None = None,
            load: LoadOptions | None = None) -> Analysis:
    """Detect and attribute every sync in the given traces (paths, per-rank folders or loaded traces).

    A source may also be a saved analysis (``--format json`` output), which is read back as it was: reports and
    gates re-render it without the traces. ``thread``/``scope`` must name a thread/scope the traces have, and
    ``mode="confirmed"`` needs device activity: a typo must not turn a gate green. ``load`` says how paths are
    loaded (worker processes, a dask cluster, the cache): each trace is analysed where it was loaded, and only
    its (small) analysis comes back.
    """
    traces, saved, paths = split_sources(sources)
    mode = Mode(mode)
    if saved and mode is not Mode.AUTO and any(info.mode != mode.value for a in saved for info in a.traces):
        raise UsageError(f"a saved analysis keeps the mode it was made with; analyze the traces for "
                         f"--mode {mode.value}")
    one = partial(analyze_trace, mode=mode, frame_filter=frame_filter or FrameFilter())
    parts = [one(trace) for trace in traces]
    if paths:
        parts += map_traces(paths, one, replace(load or LoadOptions(cache=False), fields=analysis_fields()))
    fresh = [info for part in parts for info in part.traces]
    if mode is Mode.CONFIRMED and fresh and not any(info.device_activity for info in fresh):
        raise UsageError("--mode confirmed needs runtime evidence, and these traces have no device activity; "
                         "use --mode auto or latent for CPU-only traces")
    everything = [*saved, *parts]
    infos = tuple(info for a in everything for info in a.traces)
    records = with_collective_delays(infos, tuple(record for a in everything for record in a.records))
    result = Analysis(infos, records, {"mode": mode.value})
    return filter_analysis(result, thread=thread, scope=scope)


def analyze_trace(trace: Trace, *, mode: Mode, frame_filter: FrameFilter) -> Analysis:
    """One loaded trace's analysis (picklable through ``functools.partial``: workers run it)."""
    detection = detect(trace, mode)
    info = trace_info(trace, detection.mode.value, set_aside_calls(trace, detection))
    bound = frame_filter.for_trace(trace.synchunt)
    records = mark_warmup(attribute(trace, detection, bound), detection.records, trace)
    profiled = trace.synchunt.get("profiled_thread")
    thread = next((r.thread for r in records if r.thread.name == profiled), None)
    merged = merge_guard(records, guard_sequence(trace.synchunt), trace=str(trace.path), rank=trace.rank,
                         thread=thread, frame_filter=bound, confirmed_only=detection.mode is Mode.CONFIRMED)
    if merged.dropped or merged.diverged:
        info = msgspec.structs.replace(info, host_resident=merged.dropped, guard_diverged=merged.diverged)
    records = exact_via_lines(exact_lines(merged.records, trace, guard_lines=not merged.diverged), trace, bound)
    if detection.mode is Mode.LATENT:
        records = with_device_branches(records)
    rewrites = site_rewrites(records, trace)
    if rewrites:
        info = msgspec.structs.replace(info, rewrites=rewrites)
    return Analysis((info,), records, {"mode": mode.value})


def with_device_branches(records: tuple[Sync, ...]) -> tuple[Sync, ...]:
    """Latent syncs whose stack runs through a reviewed device branch, marked with what a GPU run does there."""
    notes: dict[tuple, str | None] = {}
    out = []
    for record in records:
        note = notes.get(record.stack, ...)
        if note is ...:
            note = notes[record.stack] = branch_note([(frame.file, frame.function) for frame in record.stack])
        out.append(record if note is None else msgspec.structs.replace(record, device_branch=note))
    return tuple(out)


def trace_info(trace: Trace, mode: str, set_aside: tuple = ()) -> TraceInfo:
    events = len(trace)
    partial_read = getattr(trace, "partial", None)
    return TraceInfo(path=str(trace.path), rank=trace.rank, device_activity=trace.device_activity, mode=mode,
                     start_us=float(trace.column("ts").min()) if events else 0.0,
                     end_us=float(trace.column("end").max()) if events else 0.0, synchunt=dict(trace.synchunt),
                     threads=_thread_labels(trace), scopes=_scope_names(trace), events=events,
                     ops=int(trace.in_categories((vocab.CPU_OP, vocab.RUNTIME)).sum()),
                     set_aside=set_aside,
                     partial=None if partial_read is None else PartialRead(
                         bytes_read=partial_read.bytes_read, events_read=partial_read.events_read,
                         reason=partial_read.reason),
                     collectives=_trace_collectives(trace), devices=_device_names(trace.metadata))


def _device_names(metadata: dict) -> tuple[str, ...]:
    """The distinct device names a Kineto trace's ``deviceProperties`` lists, in order (nothing when absent)."""
    listed = metadata.get("deviceProperties")
    names = [entry.get("name") for entry in listed if isinstance(entry, dict)] if isinstance(listed, list) else []
    return tuple(dict.fromkeys(name for name in names if isinstance(name, str) and name))


def _trace_collectives(trace: Trace) -> Collectives | None:
    starts, kernels = collective_kernels(trace)
    if not kernels:
        return None
    names = tuple(dict.fromkeys(kernels))
    number = {name: k for k, name in enumerate(names)}
    return Collectives(names=names, kernels=tuple(number[name] for name in kernels),
                       start_us=tuple(float(t) for t in starts))


def with_collective_delays(infos: tuple[TraceInfo, ...], records: tuple[Sync, ...]) -> tuple[Sync, ...]:
    """Each confirmed sync's ``collective_delay_us``: how much later than the earliest rank its rank started the
    first collective after the sync returned (matched by ordinal, as ``synchunt.impact.collective_delays``).

    Only among two or more traces with collectives and distinct known ranks: the ranks of one job. Traces of two
    runs (a before and an after, or rank 0 twice) have nothing to match."""
    ranked = [(info.path, info.rank, info.collectives) for info in infos if info.collectives is not None]
    ranks = [rank for _, rank, _ in ranked]
    if len(ranked) < 2 or None in ranks or len(set(ranks)) != len(ranks):
        return records
    per_rank = {path: (np.asarray(c.start_us, dtype=np.float64), [c.names[k] for k in c.kernels])
                for path, _, c in ranked}
    earliest = earliest_collectives([per_rank[path] for path, _, _ in ranked], [int(rank or 0) for rank in ranks])
    out = []
    for record in records:
        collectives = per_rank.get(record.trace)
        if collectives is None:
            out.append(record)
            continue
        out.append(msgspec.structs.replace(record, collective_delay_us=_delay(record, *collectives, earliest)))
    return tuple(out)


def _delay(record: Sync, starts: np.ndarray, names: list[str],
           earliest: dict[int, tuple[str, float, int, int]]) -> float | None:
    returned = record.impact.returned_us if record.confirmed and record.impact is not None else None
    if returned is None:
        return None
    ordinal = int(np.searchsorted(starts, returned, side="left"))
    match = earliest.get(ordinal) if ordinal < len(starts) else None
    if match is None or match[0] != names[ordinal]:
        return None
    return float(starts[ordinal]) - match[1]


def filter_analysis(analysis: Analysis, *, thread: str | None = None, scope: str | None = None) -> Analysis:
    """Only syncs on ``thread`` (name or tid) and/or inside ``scope`` (a record_function name); a filter that
    names nothing the traces have is a usage error (``UsageError``), not an empty, green result."""
    if thread is None and scope is None:
        return analysis
    _check_known("thread", thread, [info.threads for info in analysis.traces])
    _check_known("scope", scope, [info.scopes for info in analysis.traces])
    kept = tuple(r for r in analysis.records
                 if (thread is None or thread in (r.thread.name, str(r.thread.tid)))
                 and (scope is None or scope in r.scope_chain))
    chosen = {k: v for k, v in {"thread": thread, "scope": scope}.items() if v is not None}
    return analysis.with_records(kept, **chosen)


def _thread_labels(trace: Trace) -> tuple[str, ...]:
    # Only threads with events: a name from metadata alone would let a filter select nothing and pass.
    lanes = host_lanes(trace)
    labels = {str(t) for _, t in lanes} | {str(trace.thread_name(p, t)) for p, t in lanes}
    return tuple(sorted(labels))


def _scope_names(trace: Trace) -> tuple[str, ...]:
    """The ``record_function`` scopes that enclose at least one event: a filter on an empty one has nothing to
    judge, so it is refused like a scope the trace does not have."""
    is_scope = trace.in_categories((vocab.USER_ANNOTATION,))
    if not is_scope.any():  # no scope at all: nothing to climb (nor the parent column to read)
        return ()
    parents = trace.column("parent")
    encloses = np.zeros(len(trace), dtype=bool)
    # Every parent of an event that is not a scope encloses an event; so does every ancestor of such a parent,
    # and an ancestor above a parent that is not a scope is that parent's parent, marked here too. What is left
    # is the climb above the marked scopes, one level per step over ever fewer of them.
    encloses[parents[~is_scope & (parents >= 0)]] = True
    frontier = np.flatnonzero(encloses & is_scope)
    while len(frontier):
        above = parents[frontier]
        above = above[above >= 0]
        frontier = above[~encloses[above]]
        encloses[frontier] = True
    names = [str(n) for n in trace.names[compact(trace.name_codes[is_scope & encloses])[0]]]
    return tuple(sorted(n for n in names if not PROFILER_STEP.match(n)))


def _check_known(what: str, value: str | None, per_trace: list[tuple[str, ...] | None]) -> None:
    """A filter must name something the traces have; unknowable (an older saved analysis) is not checked."""
    if value is None or any(names is None for names in per_trace):
        return
    known = sorted({name for names in per_trace for name in names or ()})
    if value in known:
        return
    holding = " holding events" if what == "scope" else ""
    if not known:
        raise UsageError(f"no {what} {value!r}: these traces have no {what}s{holding}")
    if what == "thread":  # a thread is named by its name or its id: say which is which
        names, ids = [k for k in known if not k.isdigit()], [k for k in known if k.isdigit()]
        parts = [f"threads: {_listed(names)}"] if names else []
        parts += [f"thread ids: {_listed(sorted(ids, key=int))}"] if ids else []
        raise UsageError(f"no thread {value!r} in these traces; {'; '.join(parts)}")
    raise UsageError(f"no {what} {value!r}{holding} in these traces; {what}s: {_listed(known)}")


def _listed(items: list[str]) -> str:
    return ", ".join(items[:12]) + (f", … ({len(items) - 12} more)" if len(items) > 12 else "")

"""One sync, one record: what the capture's runtime guard pass saw, joined with what the trace shows.

``synchunt profile`` runs the step again under the guard and keeps its records with the trace, in the order the
syncs happened. The guard knows the exact line of every frame, and sees host reads a CPU trace cannot show
(``.tolist()``, ``.cpu()``). Both signals see the same syncs in the same order, so they are joined per sync, never
added together: on the profiled thread, the k-th trace sync of a rule at a function meets the k-th guard record of
that rule at that function (by where each happens, under one frame filter); a trace sync without Python frames
meets the next guard record of its rule left unmatched. A joined sync keeps the trace's timing and evidence and
takes the guard's exact lines (``line_source: runtime``); what only one signal saw is marked so. A sync only the
guard saw has no trace timestamp (``ts_us`` is ``None``) and keeps its place in the thread's order.

Under the shadow device the guard also records the catalogue ops it saw on host-resident data (``residency:
host``): those are not syncs on a GPU, so the trace sync they meet is dropped, and counted in ``dropped`` (as is a
host-resident record no trace sync meets).

The guard pass runs after the recorded steps, so a step whose path depends on state (every other call evicts) can
sync elsewhere in it. On a CPU-only trace, where every rule the guard sees in a latent form shows in the trace too,
the two passes must agree on how many syncs of each such rule each function made; where they do not, the guard
pass took another path: its lines are not given to the trace's syncs, and its records of rules the trace would
have shown are left out (counted in ``diverged``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from synchunt.attribute.model import GUARD_ONLY_STALL, CallSite, Sync, Thread
from synchunt.rules import get_rule
from synchunt.sites import Frame, FrameFilter
from synchunt.trace.vocab import GUARD_PASS_KEY

HOST_RESIDENT = "host"


class GuardRecord(msgspec.Struct, frozen=True):
    """One record of the capture's guard pass, as stored in the trace (identical records once, with a count)."""

    rule: str
    op: str
    file: str
    line: int
    function: str
    stack: tuple[Frame, ...] = ()
    thread: str = ""
    latent: bool = True
    allowed: bool = False
    count: int = 1
    residency: str | None = None  # "device" or "host" where the guard knew (the shadow device); None: unknown
    shadow: bool = False  # the device placement was emulated (the shadow device)

    @property
    def frames(self) -> tuple[Frame, ...]:
        return self.stack or (Frame(self.file, self.line, self.function),)


class GuardPassRecords(msgspec.Struct, frozen=True):
    """The guard pass as stored: distinct records and, per sync in the order they happened, its record."""

    records: list[Any] = msgspec.field(default_factory=list)
    sequence: list[int] | None = None


def guard_sequence(metadata: Mapping[str, Any]) -> tuple[GuardRecord, ...]:
    """The guard pass's syncs in the order they happened (none when absent or malformed). A trace written before
    the order was stored gives each record ``count`` times, in the stored order."""
    guard = metadata.get(GUARD_PASS_KEY)
    if not isinstance(guard, dict) or not isinstance(guard.get("records"), list):
        return ()
    stored: list[GuardRecord | None] = []
    for raw in guard["records"]:
        try:
            stored.append(msgspec.convert(raw, GuardRecord))
        except (msgspec.ValidationError, TypeError):
            stored.append(None)  # a record we cannot read is skipped, never fatal: the trace itself is the evidence
    sequence = guard.get("sequence")
    if isinstance(sequence, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in sequence):
        picked = (stored[i] for i in sequence if 0 <= i < len(stored))
    else:
        picked = (record for record in stored if record is not None
                  for _ in range(max(0, min(int(record.count), 1_000_000))))
    return tuple(record for record in picked if record is not None)


class Merged(msgspec.Struct, frozen=True):
    records: tuple[Sync, ...]
    dropped: int = 0  # syncs the shadow device saw on host-resident data
    diverged: int = 0  # guard records the recorded steps did not make (the guard pass took another path)


DIVERGED_NOTE = ("the guard pass, run after the recorded steps, took another path than they did (its syncs differ "
                 "from the trace's), so its lines are not used here")


def merge_guard(records: Sequence[Sync], guard: Sequence[GuardRecord], *, trace: str, rank: int | None,
                thread: Thread | None, frame_filter: FrameFilter, confirmed_only: bool = False) -> Merged:
    """``records`` joined with the guard's syncs ``guard`` (in the order they happened on ``thread``, the profiled
    one), plus the syncs only the guard saw (only those it saw on a device when ``confirmed_only``: a confirmed-mode
    analysis reports no latent sync)."""
    if not guard:
        return Merged(tuple(records))
    name = thread.name if thread is not None else guard[0].thread
    mine = [i for i, sync in enumerate(records) if sync.thread.name == name]
    places = [frame_filter.locate(record.frames) for record in guard]
    other_path = not confirmed_only and _diverged([records[i] for i in mine], guard, places)
    if other_path:
        return _trace_kept(records, guard, places, frame_filter, trace=trace, rank=rank, thread=thread)
    match = _align([records[i] for i in mine], guard, places)  # position in `mine` -> guard position
    met = {guard_index: mine[position] for position, guard_index in match.items()}
    out: list[tuple[float, int, Sync]] = []  # (order key, tie-break, sync)
    drop = 0
    matched_at = {mine[position]: guard_index for position, guard_index in match.items()}
    for index, sync in enumerate(records):
        guard_index = matched_at.get(index)
        if guard_index is None:
            out.append((_order(sync), len(out), sync))
            continue
        record = guard[guard_index]
        if record.shadow and record.residency == HOST_RESIDENT:
            drop += 1
            continue
        out.append((_order(sync), len(out), _joined(sync, record, places[guard_index], frame_filter)))
    anchor = float("-inf")
    for guard_index, record in enumerate(guard):
        if guard_index in met:
            anchor = _order(records[met[guard_index]])
            continue
        if record.allowed:
            continue
        if record.shadow and record.residency == HOST_RESIDENT:
            drop += 1
            continue
        if confirmed_only and record.latent:
            continue
        sync = _guard_only(record, places[guard_index], frame_filter, trace=trace, rank=rank,
                           thread=thread or Thread(tid=None, pid=None, name=record.thread))
        out.append((anchor, len(out), sync))
    out.sort(key=lambda item: (item[0], item[1]))
    return Merged(tuple(sync for _, _, sync in out), dropped=drop)


def _trace_shows(rule: str) -> bool:
    """A rule a CPU-only trace shows wherever the guard sees it (its latent form)."""
    return get_rule(rule).latent_in_traces


def _diverged(syncs: Sequence[Sync], guard: Sequence[GuardRecord],
              places: Sequence[tuple[Frame | None, Frame | None]]) -> bool:
    """Whether the guard pass made other syncs than the recorded steps: per (rule, file, function), for rules a
    CPU trace shows, the counts differ (syncs without a place in the trace are not compared)."""
    if any(sync.call_site is None for sync in syncs):
        return False
    seen: dict[tuple[str, str, str], int] = defaultdict(int)
    for sync in syncs:
        if _trace_shows(sync.rule):
            site = sync.call_site
            assert site is not None
            seen[(sync.rule, site.file, site.function)] += 1
    guarded: dict[tuple[str, str, str], int] = defaultdict(int)
    for record, (site, _) in zip(guard, places, strict=True):
        if site is not None and _trace_shows(record.rule):  # allowed and host-resident ones too: the trace shows them
            guarded[(record.rule, site.file, site.function)] += 1
    return seen != guarded


def _trace_kept(records: Sequence[Sync], guard: Sequence[GuardRecord],
                places: Sequence[tuple[Frame | None, Frame | None]], frame_filter: FrameFilter, *, trace: str,
                rank: int | None, thread: Thread | None) -> Merged:
    """The trace's syncs as they are (lines left to the source, with the reason), and of the guard's only what
    the trace cannot show (a copy, ``.tolist()``), placed after them: its other records belong to another path."""
    kept = [msgspec.structs.replace(sync, call_site=msgspec.structs.replace(sync.call_site, line_note=DIVERGED_NOTE))
            if sync.call_site is not None and sync.call_site.line_source == "def" else sync for sync in records]
    diverged = drop = 0
    for record, place in zip(guard, places, strict=True):
        if record.allowed:
            continue
        if record.shadow and record.residency == HOST_RESIDENT:
            drop += 1
        elif _trace_shows(record.rule):
            diverged += 1
        else:
            kept.append(_guard_only(record, place, frame_filter, trace=trace, rank=rank,
                                    thread=thread or Thread(tid=None, pid=None, name=record.thread)))
    return Merged(tuple(kept), dropped=drop, diverged=diverged)


def _order(sync: Sync) -> float:
    return sync.ts_us if sync.ts_us is not None else float("-inf")


def _align(syncs: Sequence[Sync], guard: Sequence[GuardRecord],
           places: Sequence[tuple[Frame | None, Frame | None]]) -> dict[int, int]:
    """Trace position → guard position: per (rule, file, function) of where each happens, the k-th meets the k-th;
    then trace syncs without a Python frame meet the guard records of their rule left over, in order."""
    waiting: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for guard_index, (record, (site, _)) in enumerate(zip(guard, places, strict=True)):
        if site is not None:
            waiting[(record.rule, site.file, site.function)].append(guard_index)
    taken: dict[tuple[str, str, str], int] = defaultdict(int)
    match: dict[int, int] = {}
    for position, sync in enumerate(syncs):
        site = sync.call_site
        if site is None:
            continue
        key = (sync.rule, site.file, site.function)
        queue = waiting.get(key)
        if queue and taken[key] < len(queue):
            match[position] = queue[taken[key]]
            taken[key] += 1
    used = set(match.values())
    left: dict[str, list[int]] = defaultdict(list)
    for guard_index, record in enumerate(guard):
        if guard_index not in used:
            left[record.rule].append(guard_index)
    for position, sync in enumerate(syncs):
        if sync.call_site is None and left.get(sync.rule):
            match[position] = left[sync.rule].pop(0)
    return match


def _site(frame: Frame | None, frame_filter: FrameFilter, *, def_line: int | None = None) -> CallSite | None:
    if frame is None:
        return None
    return CallSite(frame.file, frame.line, frame.function, def_line=def_line, line_source="runtime",
                    user=frame_filter.is_user(frame.file))


def _joined(sync: Sync, record: GuardRecord, place: tuple[Frame | None, Frame | None],
            frame_filter: FrameFilter) -> Sync:
    site, via = place
    known = sync.call_site
    def_line = known.def_line if known is not None and site is not None and known.function == site.function else None
    via_def = sync.via.def_line if sync.via is not None and via is not None and sync.via.function == via.function \
        else None
    return msgspec.structs.replace(
        sync, call_site=_site(site, frame_filter, def_line=def_line) or known,
        via=_site(via, frame_filter, def_line=via_def), stack=tuple(frame_filter.shown_stack(record.frames)),
        signals=("trace", "guard"))


def _guard_only(record: GuardRecord, place: tuple[Frame | None, Frame | None], frame_filter: FrameFilter, *,
                trace: str, rank: int | None, thread: Thread) -> Sync:
    site, via = place
    return Sync(rule=record.rule, kind=get_rule(record.rule).kind.value, confirmed=not record.latent, op=record.op,
                op_chain=(record.op,), runtime="", thread=thread, ts_us=None, stall_us=0.0,
                stall_source=GUARD_ONLY_STALL, call_site=_site(site, frame_filter),
                stack=tuple(frame_filter.shown_stack(record.frames)), scope="", scope_chain=(), step=None, impact=None,
                direction=None, rank=rank, trace=trace, signals=("guard",), via=_site(via, frame_filter))

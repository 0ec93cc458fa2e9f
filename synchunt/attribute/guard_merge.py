"""Merging what the runtime guard saw during a capture with what the trace shows.

``synchunt profile`` runs the step again under the guard and keeps its records with the trace. The guard knows
the exact line of each sync, and sees host reads a CPU trace cannot show (``.tolist()``, ``.cpu()``): a trace
sync whose site (file, function) and rule the guard also saw gets the guard's line (``line_source: runtime``)
and both signals; syncs only the guard saw are added, marked as such, with no stall measured.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from synchunt.attribute.model import CallSite, Sync, Thread
from synchunt.rules import get_rule
from synchunt.sites import Frame
from synchunt.trace.vocab import GUARD_PASS_KEY


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


def guard_records(metadata: Mapping[str, Any]) -> tuple[GuardRecord, ...]:
    """The guard pass's records from a trace's synchunt metadata (none when absent or malformed)."""
    guard = metadata.get(GUARD_PASS_KEY)
    if not isinstance(guard, dict) or not isinstance(guard.get("records"), list):
        return ()
    records = []
    for raw in guard["records"]:
        try:
            records.append(msgspec.convert(raw, GuardRecord))
        except (msgspec.ValidationError, TypeError):
            continue  # a record we cannot read is skipped, never fatal: the trace itself is the evidence
    return tuple(records)


def merge_guard(records: Sequence[Sync], guard: Sequence[GuardRecord], *, trace: str, rank: int | None,
                thread: Thread | None, confirmed_only: bool = False) -> tuple[Sync, ...]:
    """``records`` with exact lines and signals from ``guard``, plus the syncs only the guard saw (only those it
    saw on a device when ``confirmed_only``: a confirmed-mode analysis reports no latent sync)."""
    if not guard:
        return tuple(records)
    by_key: dict[tuple[str, str, str], list[GuardRecord]] = defaultdict(list)
    for record in guard:
        by_key[(record.file, record.function, record.rule)].append(record)
    seen: dict[tuple[str, str, str], int] = defaultdict(int)
    merged = []
    for sync in records:
        site = sync.call_site
        key = (site.file, site.function, sync.rule) if site else None
        matches = by_key.get(key) if key else None
        if not matches:
            merged.append(sync)
            continue
        seen[key] += 1  # type: ignore[index]
        lines = sorted({m.line for m in matches})
        exact = CallSite(site.file, lines[0], site.function, def_line=site.def_line, line_source="runtime") \
            if len(lines) == 1 else site  # several lines in one function: keep the function's, say def
        merged.append(msgspec.structs.replace(sync, call_site=exact, signals=("trace", "guard")))
    for key, matches in by_key.items():
        if confirmed_only:
            matches = [m for m in matches if not m.latent]
            if not matches:
                continue
        extra = sum(m.count for m in matches if not m.allowed) - seen.get(key, 0)
        if extra <= 0:
            continue
        first = next(m for m in matches if not m.allowed)
        merged.extend(_guard_only(first, trace=trace, rank=rank, thread=thread) for _ in range(extra))
    return tuple(merged)


def _guard_only(record: GuardRecord, *, trace: str, rank: int | None, thread: Thread | None) -> Sync:
    return Sync(rule=record.rule, kind=get_rule(record.rule).kind.value, confirmed=not record.latent, op=record.op,
                op_chain=(record.op,), runtime="", thread=thread or Thread(tid=None, pid=None, name=record.thread),
                ts_us=0.0, stall_us=0.0, stall_source="not measured (seen by the guard only)",
                call_site=CallSite(record.file, record.line, record.function, line_source="runtime"),
                stack=record.stack, scope="", scope_chain=(), step=None, impact=None, direction=None, rank=rank,
                trace=trace, signals=("guard",))

"""The gate's decision: which syncs the baseline allows, how many remain against the budget, and whether the
baseline itself has gone stale or expired."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cached_property

from synchunt.attribute import Analysis, Sync
from synchunt.errors import UsageError
from synchunt.gate.baseline import Baseline, BaselineEntry, sync_key
from synchunt.sites import NO_SCOPE


@dataclass(frozen=True)
class EntryUsage:
    """How one baseline entry fared: ``matched`` syncs had its key, ``allowed`` of them fit its ``max``."""

    entry: BaselineEntry
    matched: int
    allowed: int
    expired: bool

    @property
    def stale(self) -> bool:
        """Nothing matched: the sync it allowed is gone, so the entry should be removed."""
        return self.matched == 0

    @property
    def over_limit(self) -> int:
        return self.matched - self.allowed

    @property
    def status(self) -> str:
        states = [name for name, on in (("stale", self.stale), ("expired", self.expired),
                                        (f"{self.over_limit} over max", self.over_limit > 0)) if on]
        return ", ".join(states) or "ok"


@dataclass(frozen=True)
class ThreadScope:
    """The syncs of one thread under one outermost scope, split by what the gate did with them (a thread the run
    was about and that had no sync has one group, scope ``ALL_SCOPES``, with neither)."""

    thread: str
    scope: str
    counted: tuple[Sync, ...]
    allowed: tuple[Sync, ...]


ALL_SCOPES = "(all scopes)"


@dataclass(frozen=True, eq=False)
class GateResult:
    """The gate over one analysis. ``allowed_by`` gives, per record of ``analysis.records``, the index of the
    baseline entry that allowed it, or ``None`` when the sync counts against ``budget``."""

    analysis: Analysis
    budget: int
    allowed_by: tuple[int | None, ...]
    usage: tuple[EntryUsage, ...] = ()
    strict: bool = False
    baseline_path: str | None = None
    today: dt.date = field(default_factory=dt.date.today)
    idle_budget_us: float | None = None
    missing_evidence: tuple[str, ...] = ()  # why there is nothing to judge (exit 2), e.g. a trace with no events
    allow_partial: bool = False
    set_aside_by_config: int = 0  # syncs [tool.synchunt] keeps the gate from counting

    @cached_property
    def counted(self) -> tuple[Sync, ...]:
        """The syncs the baseline does not allow (what the budget is checked against)."""
        return tuple(r for r, index in zip(self.analysis.records, self.allowed_by, strict=True) if index is None)

    @cached_property
    def allowed(self) -> tuple[Sync, ...]:
        return tuple(r for r, index in zip(self.analysis.records, self.allowed_by, strict=True) if index is not None)

    @cached_property
    def counted_analysis(self) -> Analysis:
        """The counted syncs as an analysis of their own, for the analysis renderers."""
        return self.analysis.with_records(self.counted)

    @cached_property
    def thread_scopes(self) -> tuple[ThreadScope, ...]:
        """Per thread and outermost scope, sorted; threads the run was about (``--thread``, the profiled thread of
        a synchunt capture) appear even without syncs."""
        groups: dict[tuple[str, str], tuple[list[Sync], list[Sync]]] = {}
        for sync, allowed_by in zip(self.analysis.records, self.allowed_by, strict=True):
            chain = sync.scope_chain
            counted, allowed = groups.setdefault((sync.thread.name, chain[0] if chain else NO_SCOPE), ([], []))
            (counted if allowed_by is None else allowed).append(sync)
        with_syncs = {thread for thread, _ in groups}
        for thread in self._expected_threads():
            if thread not in with_syncs:
                groups[(thread, ALL_SCOPES)] = ([], [])
        return tuple(ThreadScope(thread, scope, tuple(counted), tuple(allowed))
                     for (thread, scope), (counted, allowed) in sorted(groups.items()))

    def _expected_threads(self) -> list[str]:
        threads = []
        if self.analysis.filters.get("thread"):
            threads.append(str(self.analysis.filters["thread"]))
        for info in self.analysis.traces:
            profiled = info.synchunt.get("profiled_thread")
            if profiled and profiled not in threads:
                threads.append(str(profiled))
        return threads

    @property
    def counted_idle_us(self) -> float | None:
        """The device idle the counted syncs caused (``None``: unknown, no counted sync was measured)."""
        return self.counted_analysis.totals.device_idle_us

    @property
    def over_idle_budget(self) -> bool:
        return self.idle_budget_us is not None and (self.counted_idle_us or 0.0) > self.idle_budget_us

    @property
    def over_budget(self) -> bool:
        return len(self.counted) > self.budget or self.over_idle_budget

    @property
    def judged(self) -> bool:
        """Whether the inputs held evidence to judge (a green gate on nothing is no green)."""
        return not self.missing_evidence

    @property
    def stale_entries(self) -> tuple[EntryUsage, ...]:
        return tuple(usage for usage in self.usage if usage.stale)

    @property
    def expired_entries(self) -> tuple[EntryUsage, ...]:
        return tuple(usage for usage in self.usage if usage.expired)

    @property
    def baseline_problems(self) -> tuple[EntryUsage, ...]:
        """Stale or expired entries: reported always, failing the gate with ``strict``."""
        return tuple(usage for usage in self.usage if usage.stale or usage.expired)

    @property
    def passed(self) -> bool:
        return self.judged and not self.over_budget and not (self.strict and self.baseline_problems)

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failed, 2 nothing to judge."""
        if not self.judged:
            return 2
        return 0 if self.passed else 1


def evaluate(analysis: Analysis, *, max_syncs: int = 0, baseline: Baseline | None = None, strict: bool = False,
             today: dt.date | None = None, max_idle_us: float | None = None,
             allow_partial: bool = False) -> GateResult:
    """Gate ``analysis``: syncs matched by a baseline entry (up to its ``max``, earliest first) are allowed, the
    rest count against ``max_syncs`` (and their device idle against ``max_idle_us``). ``today`` decides expiry
    (the local date when not given). Inputs without evidence (no usable events, a cut trace unless
    ``allow_partial``, a capture whose profiled thread recorded nothing) make the result "nothing to judge"."""
    if max_syncs < 0:
        raise UsageError(f"the sync budget must be 0 or more, got {max_syncs}")
    if max_idle_us is not None and not max_idle_us >= 0:
        raise UsageError(f"the idle budget must be 0 µs or more, got {max_idle_us}")
    today = today or dt.date.today()
    entries = baseline.entries if baseline else ()
    positions = {entry.key: position for position, entry in enumerate(entries)}
    records = analysis.records
    allowed_by: list[int | None] = [None] * len(records)
    matched = [0] * len(entries)
    allowed = [0] * len(entries)
    keys = [sync_key(record) for record in records]
    # Earliest first: each trace's records are in the order the syncs happened (guard-only ones, which have no
    # trace time, included).
    for row_number in sorted(range(len(keys)), key=lambda number: records[number].trace):
        position = positions.get(keys[row_number])
        if position is None:
            continue
        matched[position] += 1
        limit = entries[position].max_count
        if limit is None or allowed[position] < limit:
            allowed[position] += 1
            allowed_by[row_number] = position
    usage = tuple(EntryUsage(entry, matched[i], allowed[i], entry.is_expired(today)) for i, entry in enumerate(entries))
    return GateResult(analysis, max_syncs, tuple(allowed_by), usage, strict,
                      str(baseline.path) if baseline and baseline.path else None, today, max_idle_us,
                      missing_evidence(analysis, allow_partial=allow_partial, idle_budget=max_idle_us is not None),
                      allow_partial)


def missing_evidence(analysis: Analysis, *, allow_partial: bool = False, idle_budget: bool = False) -> tuple[str, ...]:
    """Why ``analysis`` cannot be judged, one reason per trace that lacks evidence (empty: it can be)."""
    reasons = []
    if not analysis.traces:
        reasons.append("no trace was analysed")
    with_syncs = {sync.trace for sync in analysis.records}
    for info in analysis.traces:
        if info.events is not None and info.events == 0:
            reasons.append(f"{info.path}: no usable events were read")
        elif info.ops == 0 and info.path not in with_syncs:
            reasons.append(f"{info.path}: no PyTorch operator or runtime call was recorded (nothing ran that could "
                           "sync: did the profiled code run any torch op?)")
        elif info.partial is not None and not allow_partial:
            reasons.append(f"{info.path}: partial trace ({info.partial.reason}; {info.partial.events_read} events "
                           "read before the cut); pass --allow-partial to judge what was read")
        profiled = (info.synchunt or {}).get("profiled_thread")
        if profiled and info.threads is not None and str(profiled) not in info.threads:
            reasons.append(f"{info.path}: the profiled thread {profiled!r} recorded no events (the profiling window "
                           "captured nothing)")
    if idle_budget and not any(info.device_activity for info in analysis.traces):
        reasons.append("an idle budget needs device activity, and these traces have none")
    return tuple(reasons)

"""The analysis model: attributed syncs as typed records; DataFrames are views of them for pandas users.

Every field is typed (``msgspec.Struct``), so a missing value is ``None`` — never NaN — and the JSON contract
(``synchunt.analysis/3``, see ``synchunt.attribute.document``) is generated from these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal

import msgspec

from synchunt.detect.model import SetAside
from synchunt.findings import Rewrite
from synchunt.impact.model import SyncImpact
from synchunt.sites import Frame, site_key, site_label
from synchunt.trace.source import PartialRead  # the trace's note, kept as it is in the analysis
from synchunt.trace.vocab import SHADOW_KEY
from synchunt.units import format_us

LineSource = Literal["exact", "def", "runtime"]
Phase = Literal["steady", "warm-up"]


class Thread(msgspec.Struct, frozen=True):
    """The host thread a sync happened on: Kineto's ids and the best name known (the Python thread name when
    synchunt's capture recorded it)."""

    tid: int | str | None
    pid: int | str | None
    name: str


class CallSite(msgspec.Struct, frozen=True):
    """A frame of a sync: where it happens (the innermost frame outside torch, a library's or the user's) or the
    user's frame that led there. ``line`` is the line that synced when ``line_source`` is ``"exact"`` (found in
    the source) or ``"runtime"`` (seen running: by the runtime guard, or in an older trace's Call stack); with
    ``"def"`` it is the function's first line, all a Python function event records, and ``line_note`` says why
    no exact line is known. ``def_line`` is that first line when known. ``user`` is false for a library's file
    (an installed package, not the user's project)."""

    file: str
    line: int
    function: str
    def_line: int | None = None
    line_source: LineSource = "def"
    user: bool = True
    line_note: str | None = None

    @property
    def frame(self) -> Frame:
        return Frame(self.file, self.line, self.function)


# The stall source of a sync no trace event times (seen by the runtime guard only): its stall is unknown, not zero.
GUARD_ONLY_STALL = "not measured (seen by the guard only)"


class Sync(msgspec.Struct, frozen=True):
    """One attributed sync: what (rule, op chain, runtime calls), where (thread, call site, the user's frame that
    led there, stack, scopes, step, rank, trace) and what it cost (the host stall; for confirmed syncs,
    ``impact``: the work it waited on and the device idle it caused).

    One sync is one record, whatever saw it: ``signals`` says which did (the trace, the capture's runtime guard
    pass, both). ``ts_us`` is ``None`` for a sync only the guard saw (the trace has no event for it); such syncs
    keep their place in the thread's order among the others. ``phase`` tells warm-up (initialization, the first
    calls) from steady state."""

    rule: str
    kind: str
    confirmed: bool
    op: str
    op_chain: tuple[str, ...]
    runtime: str
    thread: Thread
    ts_us: float | None
    stall_us: float
    stall_source: str
    call_site: CallSite | None
    stack: tuple[Frame, ...]
    scope: str
    scope_chain: tuple[str, ...]
    step: str | None
    impact: SyncImpact | None
    direction: str | None
    rank: int | None
    trace: str
    signals: tuple[str, ...] = ("trace",)  # what saw it: the trace, the runtime guard (during a capture), both
    # Across ranks: how much later than the earliest rank this rank entered its next collective after the sync
    # (µs, the stall propagated to every peer); None when unknown (one rank, latent, no matched collective).
    collective_delay_us: float | None = None
    # The user's frame that led to a sync happening in library code (None: it happens in the user's own code, or
    # no user frame was recorded).
    via: CallSite | None = None
    phase: Phase = "steady"
    # On a CPU-only trace: the reviewed device branch its stack runs through (``synchunt.rules.device_branches``),
    # saying what a GPU run does instead; None when none is known.
    device_branch: str | None = None

    @property
    def device_idle_us(self) -> float | None:
        """The device idle this sync caused (µs); ``None`` when unknown (latent syncs)."""
        return self.impact.device_idle_us if self.impact is not None else None

    @property
    def waited_on(self) -> str | None:
        """The last device activity the sync waited for, ``name (stream N)``."""
        if self.impact is None or not self.impact.waited_on:
            return None
        last = self.impact.waited_on[-1]
        return f"{last.name} (stream {last.stream})"

    @property
    def where(self) -> str:
        """Where the sync happens, as every output labels it (``file:line function``)."""
        return site_label(self.call_site.frame if self.call_site else None, self.op)

    @property
    def site(self) -> str:
        """The label every output uses for this sync's call site: where it happens, and the user's frame that led
        there (``transformers/generation/utils.py:396 _sample via serve.py:31 step``)."""
        return f"{self.where} via {self.via.frame.label}" if self.via is not None else self.where

    @property
    def site_key(self) -> str:
        """``file:function`` (stable across edits above the site), as baselines and comparisons match sites."""
        return site_key(self.call_site.file if self.call_site else None,
                        self.call_site.function if self.call_site else None)


class Collectives(msgspec.Struct, frozen=True):
    """One rank's collective kernels (NCCL/RCCL) in start order: the k-th is ``names[kernels[k]]`` and starts at
    ``start_us[k]``. Kept per trace so that ranks analysed apart can be matched by ordinal afterwards."""

    names: tuple[str, ...]
    kernels: tuple[int, ...]
    start_us: tuple[float, ...]


class SiteRewrite(msgspec.Struct, frozen=True):
    """The tailored rewrite (``synchunt.fixes``) of the sync of ``rule`` at ``file:line``."""

    file: str
    line: int
    rule: str
    rewrite: Rewrite


class TraceInfo(msgspec.Struct, frozen=True):
    """One analysed trace. ``threads``/``scopes`` list every thread (name and tid) and ``record_function`` scope
    it has, so that a filter naming something absent is refused; ``None`` when unknown (older analyses)."""

    path: str
    rank: int | None
    device_activity: bool
    mode: str
    start_us: float
    end_us: float
    synchunt: dict[str, Any] = msgspec.field(default_factory=dict)
    threads: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    events: int | None = None
    ops: int | None = None  # operator and runtime-call events: what any sync comes from (None: older analyses)
    set_aside: tuple[SetAside, ...] = ()
    partial: PartialRead | None = None
    collectives: Collectives | None = None  # None: the trace has no collective kernel
    devices: tuple[str, ...] = ()  # the accelerators Kineto's deviceProperties name ("NVIDIA H100 80GB HBM3")
    # Trace syncs left out because the shadow device saw their data on the host (not syncs on a GPU).
    host_resident: int = 0
    # Guard records not used: the guard pass, run after the recorded steps, made other syncs than they did.
    guard_diverged: int = 0
    rewrites: tuple[SiteRewrite, ...] = ()  # tailored rewrites of its exact call sites (suggestions: unchecked)

    @property
    def shadow_run(self) -> bool:
        """Captured under the shadow device (``--device shadow-cuda``)."""
        return isinstance(self.synchunt.get(SHADOW_KEY), dict)

    @property
    def shadow_unused(self) -> bool:
        """A shadow-cuda capture whose code made no device tensor: it ran as a CPU-only program."""
        shadow = self.synchunt.get(SHADOW_KEY)
        return isinstance(shadow, dict) and shadow.get("device_tensors") == 0

    @property
    def shadow_unfollowed(self) -> tuple[str, ...]:
        """``custom-op mylib::gather at kv.py:40 ×27: …``: each place the shadow device could not follow."""
        shadow = self.synchunt.get(SHADOW_KEY)
        notes = shadow.get("notes") if isinstance(shadow, dict) else None
        if not isinstance(notes, list):
            return ()
        return tuple(f"{n.get('kind')} {n.get('op')} at {n.get('file')}:{n.get('line')}"
                     f"{' ×' + str(n['count']) if isinstance(n.get('count'), int) and n['count'] > 1 else ''}: "
                     f"{n.get('detail')}" for n in notes if isinstance(n, dict))


class Summary(msgspec.Struct, frozen=True):
    """Totals. ``stall_us``, ``max_stall_us`` and ``device_idle_us`` are steady state's (warm-up apart);
    ``device_idle_us`` sums the syncs whose idle is known, ``None`` when none is (latent only)."""

    syncs: int
    confirmed: int
    latent: int
    stall_us: float
    max_stall_us: float
    device_idle_us: float | None = None
    warmup: int = 0  # of ``syncs``: warm-up (initialization, first calls), whose stall is apart in warmup_stall_us
    warmup_stall_us: float = 0.0
    collective_delay_us: float | None = None  # sum of the known delays of every sync; None when none is known
    warmup_unmeasured: int = 0  # of ``warmup``: no trace event times them (GUARD_ONLY_STALL), stall unknown

    def warmup_stall(self) -> str:
        """The warm-up syncs' stall as people read it: unknown, not zero, for the ones no trace event times."""
        if self.warmup and self.warmup_unmeasured == self.warmup:
            return "stall not measured: seen by the guard only"
        unmeasured = f", {self.warmup_unmeasured} not measured" if self.warmup_unmeasured else ""
        return f"{format_us(self.warmup_stall_us)} stall{unmeasured}"


class Detail(msgspec.Struct, frozen=True):
    """One line of a call site's summary (see :mod:`synchunt.attribute.fields`): a label and what its syncs held,
    most frequent first (``values``: the text and how many syncs held it; ``text``: the same as one line)."""

    field: str
    label: str
    values: tuple[tuple[str, int], ...]
    text: str


class CallPath(msgspec.Struct, frozen=True):
    """One distinct stack (innermost first) of a call site's syncs, with its op chain and rule, and how many;
    ``user`` says, per frame, whether it is in a file of the user's code."""

    frames: tuple[Frame, ...]
    op_chain: str
    rule: str
    count: int
    user: tuple[bool, ...] = ()


class SiteSummary(msgspec.Struct, frozen=True):
    """The syncs of one call site (where they happen, and via which user frame): counts, stall, rules, ops,
    scopes (scope → count) and threads; ``details`` are the lines every output shows for it, ``op_chains`` and
    ``paths`` its distinct op chains and stacks, most frequent first. ``warmup`` of its syncs are warm-up."""

    site: str
    key: str
    file: str | None
    line: int | None
    function: str | None
    line_source: str | None
    count: int
    confirmed: int
    latent: int
    stall_us: float
    max_stall_us: float
    rules: tuple[str, ...]
    ops: tuple[str, ...]
    scopes: dict[str, int]
    threads: tuple[str, ...]
    device_idle_us: float | None = None
    max_idle_us: float | None = None
    collective_delay_us: float | None = None  # sum of the known delays; None when none is known
    where: str = ""  # the label of where the syncs happen (``site`` adds the via)
    call_site: CallSite | None = None
    via: CallSite | None = None
    warmup: int = 0
    unmeasured: int = 0  # of its syncs, those no trace event times (GUARD_ONLY_STALL): stall unknown, not zero
    # The tailored rewrite of this site's line (one rule's), when a pattern fits: a suggestion until checked.
    rewrite: Rewrite | None = None
    details: tuple[Detail, ...] = ()
    op_chains: tuple[tuple[str, int], ...] = ()
    paths: tuple[CallPath, ...] = ()


class ScopeSummary(msgspec.Struct, frozen=True):
    """The syncs inside one ``record_function`` scope (``named`` is false for those outside any): how many, their
    stall, and how many at each call site."""

    scope: str
    count: int
    stall_us: float
    by_site: dict[str, int]
    named: bool = True


def known_sum(values: list[float | None]) -> float | None:
    """The sum of the values that are known; ``None`` when none is."""
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def summarize(records: tuple[Sync, ...]) -> Summary:
    """Totals: stall of steady state and of warm-up apart (a first call's initialization is not a loop's cost)."""
    steady = [r for r in records if r.phase == "steady"]
    confirmed = sum(1 for r in records if r.confirmed)
    stalls = [r.stall_us for r in steady]
    return Summary(syncs=len(records), confirmed=confirmed, latent=len(records) - confirmed,
                   stall_us=float(sum(stalls)), max_stall_us=float(max(stalls, default=0.0)),
                   device_idle_us=known_sum([r.device_idle_us for r in steady]),
                   warmup=len(records) - len(steady),
                   warmup_stall_us=float(sum(r.stall_us for r in records if r.phase != "steady")),
                   collective_delay_us=known_sum([r.collective_delay_us for r in records]),
                   warmup_unmeasured=sum(1 for r in records if r.phase != "steady"
                                         and r.stall_source == GUARD_ONLY_STALL))


class Analysis(msgspec.Struct, frozen=True, eq=False, dict=True):
    """Attributed syncs from one or more traces. ``records`` is the model; ``syncs`` (one row per sync) and
    ``call_sites`` (one row per site) are DataFrame views of it; ``sites`` the typed per-site summaries."""

    traces: tuple[TraceInfo, ...]
    records: tuple[Sync, ...]
    filters: Mapping[str, str] = msgspec.field(default_factory=dict)

    @cached_property
    def sites(self) -> tuple[SiteSummary, ...]:
        from synchunt.attribute.summary import group_sites

        return group_sites(self.records, [item for info in self.traces for item in info.rewrites])

    @cached_property
    def shared_details(self) -> tuple[Detail, ...]:
        """The detail lines every call site has alike: outputs say them once (each site keeps them in JSON)."""
        from synchunt.attribute.summary import shared_details

        return shared_details(self.sites)

    @cached_property
    def notes(self) -> tuple[str, ...]:
        """What a reader must know to judge these syncs (latent caveats, warm-up, host-resident data left out)."""
        from synchunt.attribute.summary import analysis_notes

        return analysis_notes(self.totals, sum(info.host_resident for info in self.traces),
                              unused_shadow=sum(info.shadow_unused for info in self.traces),
                              shadow=bool(self.traces) and all(info.shadow_run for info in self.traces),
                              unfollowed=tuple(line for info in self.traces for line in info.shadow_unfollowed),
                              guard_diverged=sum(info.guard_diverged for info in self.traces))

    @cached_property
    def scopes(self) -> tuple[ScopeSummary, ...]:
        """Per ``record_function`` scope (``(no scope)`` for the syncs outside any), in natural order."""
        from synchunt.attribute.summary import group_scopes

        return group_scopes(self.records)

    @cached_property
    def totals(self) -> Summary:
        return summarize(self.records)

    @property
    def summary(self) -> dict[str, Any]:
        """``totals`` as a plain dict: syncs, confirmed, latent, stall_us, max_stall_us."""
        return msgspec.structs.asdict(self.totals)

    @cached_property
    def syncs(self) -> Any:
        from synchunt.attribute.views import syncs_frame

        return syncs_frame(self.records)

    @cached_property
    def call_sites(self) -> Any:
        from synchunt.attribute.views import sites_frame

        return sites_frame(self.sites)

    def filter(self, *, thread: str | None = None, scope: str | None = None) -> Analysis:
        """Only syncs on ``thread`` (name or tid) and/or inside ``scope``; see :func:`filter_analysis`."""
        from synchunt.attribute.analyze import filter_analysis

        return filter_analysis(self, thread=thread, scope=scope)

    def with_records(self, records: tuple[Sync, ...], **filters: str) -> Analysis:
        """The same traces with other records (a filtered or counted subset)."""
        return Analysis(self.traces, tuple(records), {**self.filters, **filters})

    def to_json(self) -> dict[str, Any]:
        """The JSON contract as plain Python objects (``schema: synchunt.analysis/3``)."""
        from synchunt.attribute.document import to_builtins

        return to_builtins(self)

    @classmethod
    def from_json(cls, data: Any) -> Analysis:
        """Rebuild an analysis from its JSON form (``/2``, or the older ``/1``), validated field by field."""
        from synchunt.attribute.document import from_builtins

        return from_builtins(data)

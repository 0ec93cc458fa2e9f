"""Summaries of an analysis's syncs: one per call site and one per scope, everything the outputs show of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from synchunt.attribute.fields import site_details
from synchunt.attribute.model import (
    GUARD_ONLY_STALL,
    CallPath,
    Detail,
    ScopeSummary,
    SiteRewrite,
    SiteSummary,
    Summary,
    Sync,
    known_sum,
)
from synchunt.findings import Rewrite
from synchunt.sites import natural_key, scope_label
from synchunt.units import plural


def group_sites(records: tuple[Sync, ...], rewrites: Sequence[SiteRewrite] = ()) -> tuple[SiteSummary, ...]:
    """One summary per call site label (where the syncs happen, and via which user frame): most device idle
    caused first, then most stall, then most syncs (ties in first-seen order); sites whose idle is unknown
    (latent) order by stall after those with a known idle. Stall and idle are steady state's; warm-up syncs are
    counted, and their stall left out of the order."""
    groups: dict[str, list[Sync]] = {}
    labels: dict[tuple, str] = {}  # `Sync.site`, worked out once per call site, via and op
    for record in records:
        key = (record.call_site, record.via, record.op)
        label = labels.get(key)
        if label is None:
            label = labels[key] = record.site
        groups.setdefault(label, []).append(record)
    by_line = {(item.file, item.line, item.rule): item.rewrite for item in rewrites}
    sites = [_site(label, members, by_line) for label, members in groups.items()]
    return tuple(sorted(sites, key=lambda s: (s.device_idle_us is None, -(s.device_idle_us or 0.0), -s.stall_us,
                                              -s.count)))


def _site(label: str, members: list[Sync], rewrites: dict[tuple[str, int, str], Rewrite]) -> SiteSummary:
    first = members[0]
    site = first.call_site
    keys = [(site.file, site.line, rule) for rule in sorted({m.rule for m in members})] if site is not None else []
    rewrite = next((rewrites[key] for key in keys if key in rewrites), None)
    steady = [m for m in members if m.phase == "steady"] or members
    confirmed = sum(1 for m in members if m.confirmed)
    chains = Counter(_chain(m) for m in members)
    paths = Counter((m.stack, _chain(m), m.rule) for m in members)
    users = {m.call_site.file for m in members if m.call_site is not None and m.call_site.user} | {
        m.via.file for m in members if m.via is not None}
    return SiteSummary(
        site=label, key=first.site_key, file=site.file if site else None, line=site.line if site else None,
        function=site.function if site else None, line_source=site.line_source if site else None,
        count=len(members), confirmed=confirmed, latent=len(members) - confirmed,
        stall_us=float(sum(m.stall_us for m in steady)), max_stall_us=float(max(m.stall_us for m in steady)),
        rules=tuple(sorted({m.rule for m in members})), ops=tuple(sorted({m.op for m in members})),
        scopes=dict(Counter(m.scope for m in members)), threads=tuple(sorted({m.thread.name for m in members})),
        device_idle_us=known_sum([m.device_idle_us for m in steady]),
        max_idle_us=max((m.device_idle_us for m in steady if m.device_idle_us is not None), default=None),
        collective_delay_us=known_sum([m.collective_delay_us for m in members]),
        where=first.where, call_site=site, via=first.via, warmup=sum(1 for m in members if m.phase != "steady"),
        unmeasured=sum(1 for m in members if m.stall_source == GUARD_ONLY_STALL),
        rewrite=rewrite,
        details=site_details(members), op_chains=tuple(chains.most_common()),
        paths=tuple(CallPath(frames=stack, op_chain=chain, rule=rule, count=count,
                             user=tuple(frame.file in users for frame in stack))
                    for (stack, chain, rule), count in paths.most_common()))


_OWN = {"stack"}


def shared_details(sites: tuple[SiteSummary, ...]) -> tuple[Detail, ...]:
    """The detail lines every call site has alike (the same text): outputs say them once, above the sites (a
    call path is each site's own, however alike)."""
    if not sites:
        return ()
    common = {(d.field, d.text): d for d in sites[0].details if d.field not in _OWN}
    for site in sites[1:]:
        common = {key: detail for key, detail in common.items() if key in {(d.field, d.text) for d in site.details}}
    return tuple(common.values())


def _chain(record: Sync) -> str:
    return " › ".join(record.op_chain) or record.runtime


def group_scopes(records: tuple[Sync, ...]) -> tuple[ScopeSummary, ...]:
    """One summary per scope (``(no scope)`` for the syncs outside any), in natural order (``layer_2`` before
    ``layer_10``)."""
    groups: dict[str, list[Sync]] = {}
    for record in records:
        groups.setdefault(scope_label(record.scope), []).append(record)
    views = [ScopeSummary(scope=scope, count=len(group), stall_us=float(sum(r.stall_us for r in group)),
                          by_site=dict(Counter(r.site for r in group)), named=bool(group[0].scope))
             for scope, group in groups.items()]
    return tuple(sorted(views, key=lambda view: natural_key(view.scope)))


UNUSED_SHADOW_NOTE = ("the target put no tensor on the shadow device: it ran as a CPU-only program, so what it "
                      "reports (or finding no sync) says nothing of a GPU run; place its tensors with "
                      "`device=\"cuda\"` or `.to(device)` (a `device` parameter of the target is given `cuda`)")
LATENT_NOTE = ("latent: would sync on a GPU; the stall shown is the op's CPU time here, not a device wait. A CPU run "
               "follows the CPU's code paths: where code branches on the device (a library testing `x.is_cuda`, "
               "thresholds that differ by device such as torchvision's batched_nms) or a CUDA kernel reads the host "
               "inside C++ (torchvision::nms), a GPU run can sync where this one does not, and the other way round; "
               "blocking host-to-device copies (`torch.tensor(data, device=...)`, `host_tensor.to(device)`) are "
               "no-ops on a CPU run and never shown (`--device shadow-cuda` shows them)")
SHADOW_NOTE = ("shadow device: the code ran on the CPU with a GPU's device placement emulated (`--device "
               "shadow-cuda`): its tensors' devices, and the branches taken on them, are a GPU run's, and a sync is "
               "reported where device data reaches the host (blocking host-to-device copies included); the stall "
               "shown is the op's CPU time, not a device wait")
MAX_UNFOLLOWED_NOTES = 5


def analysis_notes(totals: Summary, host_resident: int = 0, unused_shadow: int = 0, *,
                   shadow: bool = False, unfollowed: tuple[str, ...] = (), guard_diverged: int = 0
                   ) -> tuple[str, ...]:
    """What a reader of the syncs ``totals`` sums must know to judge the counts: every output shows these.
    ``shadow``: every trace was captured under the shadow device; ``unfollowed``: what it could not follow, one
    line each."""
    notes = []
    if totals.latent:
        notes.append(SHADOW_NOTE if shadow else LATENT_NOTE)
    if totals.warmup:
        notes.append(f"{plural(totals.warmup, 'warm-up sync')} (initialization, first calls, a first step's "
                     f"one-time cost; {totals.warmup_stall()}) counted, their stall kept apart from the totals")
    if host_resident:
        notes.append(f"{plural(host_resident, 'op')} on host-resident data left out: the shadow device saw "
                     "their tensors on the host, where they do not sync on a GPU")
    if unused_shadow:
        notes.append(UNUSED_SHADOW_NOTE)
    if guard_diverged:
        notes.append(f"the guard pass, run after the recorded steps, took another path (its syncs differ from the "
                     f"trace's): its lines are not used and {plural(guard_diverged, 'guard record')} of syncs the "
                     "trace would show left out; the step's syncs depend on its state")
    for line in unfollowed[:MAX_UNFOLLOWED_NOTES]:
        notes.append(f"shadow device could not follow {line}")
    if len(unfollowed) > MAX_UNFOLLOWED_NOTES:
        notes.append(f"and {len(unfollowed) - MAX_UNFOLLOWED_NOTES} more places the shadow device could not "
                     "follow (the trace's `shadow` metadata lists them)")
    return tuple(notes)

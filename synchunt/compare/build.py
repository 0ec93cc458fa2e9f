"""Compare two analyses: match call sites (a site that moved within its function is the same site), count ops
and scopes on both sides."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from synchunt.attribute import Analysis, SiteSummary
from synchunt.compare.model import Comparison, CountDelta, Noise, Side, SiteDelta
from synchunt.sites import natural_key, scope_label


def compare(before: Analysis, after: Analysis, *, noise: Noise | None = None) -> Comparison:
    """``before`` and ``after`` side by side. ``noise`` is the user's floor; the noise itself is measured from the
    traces' repeats where they have them (see :func:`measured_noise`)."""
    return Comparison(before=_side(before), after=_side(after), sites=_site_deltas(before, after),
                      ops=_count_deltas(Counter(r.op for r in before.records), Counter(r.op for r in after.records)),
                      scopes=_count_deltas(Counter(scope_label(r.scope) for r in before.records),
                                           Counter(scope_label(r.scope) for r in after.records)),
                      noise=measured_noise(before, after, noise or Noise()))


def measured_noise(before: Analysis, after: Analysis, floor: Noise) -> Noise:
    """The noise of the stall totals. Latent syncs' stall is CPU time on this machine: no stall decides a
    change, counts do. Otherwise, where both sides repeat their work (two or more profiler steps), the noise is
    measured: the widest spread of one side's per-step stall, times its number of steps (how far the total of
    identical steps can move). Without repeats only the floor applies."""
    if not (before.totals.confirmed or after.totals.confirmed):
        return replace(floor, stall_judged=False,
                       basis="latent: the stall is the ops' CPU time on this machine, so the counts decide")
    spreads = [_step_spread(side) for side in (before, after)]
    if any(spread is None for spread in spreads):
        return replace(floor, basis="no repeats to measure the noise from (one profiler step a side): "
                                    "the floor applies")
    measured = max(spread for spread in spreads if spread is not None)
    steps = [len({(r.trace, r.step) for r in side.records if r.step is not None}) for side in (before, after)]
    return replace(floor, measured_us=measured,
                   basis=f"measured from repeats ({steps[0]} steps before, {steps[1]} after)")


def _step_spread(analysis: Analysis) -> float | None:
    """Per-step stall's spread (max − min) times the number of steps; ``None`` with fewer than two steps."""
    totals: dict[tuple[str, str], float] = {}
    for record in analysis.records:
        if record.step is not None:
            key = (record.trace, record.step)
            totals[key] = totals.get(key, 0.0) + record.stall_us
    if len(totals) < 2:
        return None
    return (max(totals.values()) - min(totals.values())) * len(totals)


def trace_labels(analysis: Analysis) -> tuple[str, ...]:
    """What each trace was: ``hicache-dcp masked (rank 0)``, or its path when synchunt did not capture it."""
    labels = []
    for info in analysis.traces:
        meta = info.synchunt or {}
        name = " ".join(str(v) for v in (meta.get("target"), meta.get("label")) if v) or info.path
        labels.append(f"{name} (rank {info.rank})" if info.rank is not None else name)
    return tuple(labels)


def _side(analysis: Analysis) -> Side:
    totals = analysis.totals
    return Side(threads=tuple(sorted({r.thread.name for r in analysis.records})), syncs=totals.syncs,
                confirmed=totals.confirmed, latent=totals.latent,
                stall_us=totals.stall_us, max_stall_us=totals.max_stall_us,
                traces=tuple(info.path for info in analysis.traces), labels=trace_labels(analysis),
                device_idle_us=totals.device_idle_us)


def _site_deltas(before: Analysis, after: Analysis) -> tuple[SiteDelta, ...]:
    old = {site.site: site for site in before.sites}
    new = {site.site: site for site in after.sites}
    pairs: list[tuple[SiteSummary | None, SiteSummary | None]] = [(old[s], new.pop(s)) for s in list(old) if s in new]
    matched = {pair[0].site for pair in pairs if pair[0] is not None}
    for label, site in old.items():
        if label in matched:
            continue
        # The same function, one line elsewhere: an edit moved the site, it is still the same site. It has the same
        # rules, or (one of them fixed) the only site there that shares a rule: a site of other rules in that
        # function is another line's sync (a mask fixed above an `.item()` that was kept).
        here = [s for s in new.values() if s.key == site.key and site.file]
        moved = [s for s in here if set(s.rules) == set(site.rules)] or [
            s for s in here if set(s.rules) & set(site.rules)]
        pairs.append((site, new.pop(moved[0].site)) if len(moved) == 1 else (site, None))
    pairs.extend((None, site) for site in new.values())
    deltas = [_site_delta(b, a) for b, a in pairs]
    return tuple(sorted(deltas, key=lambda d: (-max(d.before_stall_us, d.after_stall_us), -max(d.before, d.after))))


def _site_delta(before: SiteSummary | None, after: SiteSummary | None) -> SiteDelta:
    main = before if before is not None else after
    assert main is not None
    rules = sorted(set(before.rules if before else ()) | set(after.rules if after else ()))
    return SiteDelta(site=main.site, after_site=None if after is None else after.site,
                     before=before.count if before else 0, after=after.count if after else 0,
                     before_stall_us=before.stall_us if before else 0.0,
                     after_stall_us=after.stall_us if after else 0.0, rules=tuple(rules),
                     ops_before=before.ops if before else (), ops_after=after.ops if after else (),
                     before_idle_us=before.device_idle_us if before else None,
                     after_idle_us=after.device_idle_us if after else None)


def _count_deltas(old: Counter[str], new: Counter[str]) -> tuple[CountDelta, ...]:
    return tuple(CountDelta(key, old.get(key, 0), new.get(key, 0))
                 for key in sorted(set(old) | set(new), key=natural_key))

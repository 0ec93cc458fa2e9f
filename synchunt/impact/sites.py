"""Per call site: how many syncs, the host stall and the device idle they caused, worst first."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from synchunt.impact.model import SiteImpact, SyncImpact


def site_impact(pairs: Iterable[tuple[Hashable, SyncImpact]]) -> tuple[SiteImpact, ...]:
    """Totals per site key, ordered by device idle caused, then host stall (most first; ties keep first-seen
    order). A site whose syncs are all latent has ``device_idle_us=None`` and sorts after every measured one."""
    groups: dict[Hashable, list[SyncImpact]] = {}
    for key, impact in pairs:
        groups.setdefault(key, []).append(impact)
    sites = []
    for key, impacts in groups.items():
        idles = [i.device_idle_us for i in impacts if i.device_idle_us is not None]
        waited = [i.waited_on_us for i in impacts if i.waited_on_us is not None]
        sites.append(SiteImpact(
            site=str(key), count=len(impacts), measured=len(idles),
            host_stall_us=float(sum(i.host_stall_us for i in impacts)),
            device_idle_us=float(sum(idles)) if idles else None, max_idle_us=float(max(idles)) if idles else None,
            waited_on_us=float(sum(waited)) if waited else None))
    return tuple(sorted(sites, key=lambda s: (s.device_idle_us is None, -(s.device_idle_us or 0.0),
                                              -s.host_stall_us)))

"""site_impact(): per call site totals, worst idle first, then stall."""

from __future__ import annotations

from synchunt.impact import SiteImpact, SyncImpact, site_impact


def _impact(stall: float, idle: float | None, waited: float | None = None) -> SyncImpact:
    return SyncImpact(host_stall_us=stall, device_idle_us=idle, waited_on_us=waited)


def test_totals_and_order_by_idle_then_stall():
    pairs = [("a.py:1", _impact(100, 5, 10)), ("b.py:2", _impact(10, 50, 1)), ("a.py:1", _impact(20, 15, 2)),
             ("c.py:3", _impact(500, 20)), ("d.py:4", _impact(900, 20))]
    sites = site_impact(pairs)
    assert [s.site for s in sites] == ["b.py:2", "d.py:4", "c.py:3", "a.py:1"]  # idle 50, then 20: by stall
    a = next(s for s in sites if s.site == "a.py:1")
    assert a == SiteImpact(site="a.py:1", count=2, measured=2, host_stall_us=120, device_idle_us=20,
                           max_idle_us=15, waited_on_us=12)


def test_latent_only_sites_sort_last_with_unknown_idle():
    sites = site_impact([("latent.py:9", _impact(10_000, None)), ("gpu.py:1", _impact(1, 0))])
    assert [s.site for s in sites] == ["gpu.py:1", "latent.py:9"]
    assert sites[1].device_idle_us is None and sites[1].max_idle_us is None and sites[1].measured == 0


def test_a_site_mixing_latent_and_measured_syncs_sums_the_known_idle():
    (site,) = site_impact([("x", _impact(5, None)), ("x", _impact(7, 3))])
    assert (site.count, site.measured, site.host_stall_us, site.device_idle_us) == (2, 1, 12, 3)


def test_no_pairs_no_sites():
    assert site_impact([]) == ()

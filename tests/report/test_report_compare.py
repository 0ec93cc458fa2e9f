"""Before/after comparison: per call site, per op and per scope deltas (masked → sliced takes syncs to zero)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synchunt.attribute import Analysis, analyze
from synchunt.compare import Noise, compare
from synchunt.render.comparison.headline import headline, side_verdict
from synchunt.render.comparison.json import SCHEMA
from synchunt.render.comparison.json import render_json as render_compare_json
from synchunt.render.comparison.text import render_text as render_compare_text


@pytest.fixture(scope="module")
def masked(masked_small: Path) -> Analysis:
    return analyze(masked_small)


@pytest.fixture(scope="module")
def sliced(sliced_small: Path) -> Analysis:
    return analyze(sliced_small)


def test_report_compare_fix_takes_syncs_to_zero(masked: Analysis, sliced: Analysis) -> None:
    comparison = compare(masked, sliced)
    stall = masked.summary["stall_us"]
    assert (comparison.before.syncs, comparison.after.syncs) == (8, 0)
    assert side_verdict(comparison.after) == "sync-free"
    assert comparison.ops_gone == ("aten::nonzero",) and comparison.ops_new == ()
    assert comparison.stall_saved_us == pytest.approx(stall)
    [site] = comparison.sites
    assert (site.before, site.after, site.delta, site.status) == (8, 0, -8, "gone")
    assert site.site == masked.call_sites["site"].iloc[0] and site.rules == ("SH101",)
    assert [(s.key, s.before, s.after) for s in comparison.scopes] == [
        (f"start_loading › layer_{k}", 2, 0) for k in range(4)]
    assert headline(comparison).startswith("8 → 0 syncs · stall ")
    # Latent syncs' stall is CPU time here: the counts decide, and the headline says the stall is not judged.
    assert not comparison.noise.stall_judged
    assert headline(comparison).endswith("saved), CPU time: not judged · aten::nonzero gone")


def _confirmed(analysis: Analysis) -> Analysis:
    """The same syncs as if a GPU trace had confirmed them (their stall is then a measured wait)."""
    data = analysis.to_json()
    for sync in data["syncs"]:
        sync["confirmed"] = True
    return Analysis.from_json(data)


def test_report_compare_headline_says_when_the_saving_is_within_noise(masked: Analysis, sliced: Analysis) -> None:
    within = compare(_confirmed(masked), sliced, noise=Noise(absolute_us=1e12))
    beyond = compare(_confirmed(masked), sliced, noise=Noise(absolute_us=0.0, fraction=0.0))
    assert within.stall_within_noise and not beyond.stall_within_noise
    assert headline(within).endswith("saved), within noise · aten::nonzero gone")
    assert headline(beyond).endswith("saved) · aten::nonzero gone")


def test_report_compare_regression_is_new(masked: Analysis, sliced: Analysis) -> None:
    comparison = compare(sliced, masked)
    assert comparison.sites[0].status == "new" and comparison.ops_new == ("aten::nonzero",)
    assert "added" in headline(comparison)


def test_report_compare_matches_a_site_that_moved(masked: Analysis) -> None:
    """An edit above the call site shifts its line: still the same site, not one gone and one new."""
    data = masked.to_json()
    for sync in data["syncs"][:5]:
        sync["call_site"]["line"] += 3
    for sync in data["syncs"][5:]:
        sync["call_site"]["line"] = 0  # a different site (line unknown) of another function
        sync["call_site"]["function"] = "elsewhere"
    after = Analysis.from_json(data)
    comparison = compare(masked, after)
    moved = next(s for s in comparison.sites if s.before)
    assert moved.after_site is not None and moved.after_site != moved.site
    assert (moved.before, moved.after, moved.status) == (8, 5, "fewer")
    assert [s.status for s in comparison.sites if not s.before] == ["new"]


def test_a_fixed_site_is_gone_and_a_kept_one_that_moved_is_the_same(masked: Analysis) -> None:
    """A mask (SH101) fixed at one line of a function and an `.item()` (SH109) kept below it, moved down by the
    edit: the mask's site is gone and the `.item()`'s moved; the mask is never paired with the `.item()`."""
    data = masked.to_json()
    mask = dict(data["syncs"][0])
    item = {**mask, "rule": "SH109", "op": "aten::_local_scalar_dense",
            "op_chain": ["aten::item", "aten::_local_scalar_dense"],
            "call_site": {**mask["call_site"], "line": mask["call_site"]["line"] + 1}}
    before = Analysis.from_json({**data, "syncs": [mask, item]})
    after = Analysis.from_json({**data, "syncs": [{**item, "call_site": {**item["call_site"],
                                                                          "line": item["call_site"]["line"] + 2}}]})
    statuses = {(delta.site, delta.after_site, tuple(delta.rules)): delta.status
                for delta in compare(before, after).sites}
    line = mask["call_site"]["line"]
    file, function = mask["call_site"]["file"], mask["call_site"]["function"]
    assert statuses == {(f"{file}:{line} {function}", None, ("SH101",)): "gone",
                        (f"{file}:{line + 1} {function}", f"{file}:{line + 3} {function}", ("SH109",)): "same"}


def test_a_partly_fixed_site_that_moved_is_still_that_site(masked: Analysis) -> None:
    """One line with a mask (SH101) and an `.item()` (SH109); the fix removes the mask and the line moves down:
    the same site, now with fewer syncs, not one site gone and one new."""
    data = masked.to_json()
    mask = dict(data["syncs"][0])
    item = {**mask, "rule": "SH109", "op": "aten::_local_scalar_dense",
            "op_chain": ["aten::item", "aten::_local_scalar_dense"]}
    before = Analysis.from_json({**data, "syncs": [mask, item]})
    after = Analysis.from_json({**data, "syncs": [{**item, "call_site": {**item["call_site"],
                                                                          "line": item["call_site"]["line"] + 2}}]})
    (delta,) = compare(before, after).sites
    assert delta.after_site is not None and (delta.before, delta.after, delta.status) == (2, 1, "fewer")


def test_report_compare_json_and_text(masked: Analysis, sliced: Analysis) -> None:
    comparison = compare(masked, sliced)
    data = json.loads(render_compare_json(comparison))
    assert data["schema"] == SCHEMA
    assert data["sites"][0]["status"] == "gone" and data["sites"][0]["delta"] == -8
    assert data["ops"] == [{"key": "aten::nonzero", "before": 8, "after": 0}]
    text = render_compare_text(comparison)
    assert "8 → 0 syncs" in text and "aten::nonzero gone" in text and "gone" in text
    assert "translate.py:" in text and "dcp_kernel_indices_masked" in text


def test_report_compare_identical_runs_report_no_change(masked: Analysis) -> None:
    """Timing jitter is not a change: the same syncs at the same sites with a stall within the noise threshold."""
    data = _confirmed(masked).to_json()
    for sync in data["syncs"]:
        sync["stall_us"] = 100.0  # fixed, not this machine's speed: the default floor is absolute as well as relative
    confirmed = Analysis.from_json(data)
    for sync in data["syncs"]:
        sync["stall_us"] *= 1.05  # 5 % slower: within the default 10 %
    comparison = compare(confirmed, Analysis.from_json(data))
    assert not comparison.changed and not comparison.worse
    assert headline(comparison).startswith("no change: 8 → 8 syncs")
    for sync in data["syncs"]:
        sync["stall_us"] *= 2.0
    slower = compare(confirmed, Analysis.from_json(data))
    assert slower.changed and not slower.worse and "added" in headline(slower)


def test_latent_runs_of_the_same_code_compare_by_counts(masked: Analysis) -> None:
    """A loaded machine makes latent ops' CPU time jitter far past any fixed threshold: still no change."""
    data = masked.to_json()
    for sync in data["syncs"]:
        sync["stall_us"] *= 7.0
    comparison = compare(masked, Analysis.from_json(data))
    assert not comparison.changed
    assert headline(comparison).endswith("(latent: the counts decide, the stall is CPU time here)")
    data["syncs"] = data["syncs"][1:]
    assert compare(masked, Analysis.from_json(data)).changed  # one sync fewer is a change


def test_noise_is_measured_from_repeats(masked: Analysis) -> None:
    """Two profiler steps a side: the spread of their per-step stall is the noise of the totals."""
    data = _confirmed(masked).to_json()
    for number, sync in enumerate(data["syncs"]):
        sync["step"] = f"ProfilerStep#{number % 2}"
        sync["stall_us"] = 100.0 + (40.0 if number % 2 else 0.0)  # per step: 400 µs and 560 µs
    before = Analysis.from_json(data)
    for sync in data["syncs"]:
        sync["stall_us"] += 30.0  # 240 µs more in all: within 2 steps x 160 µs of spread
    noise = compare(before, Analysis.from_json(data), noise=Noise(absolute_us=0.0, fraction=0.0)).noise
    assert noise.measured_us == pytest.approx(320.0) and "2 steps before, 2 after" in noise.basis
    assert noise.allows(960.0, 1200.0) and not noise.allows(960.0, 1300.0)

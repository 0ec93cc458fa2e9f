"""The data the HTML report is built from agrees with the analysis JSON, and the page embeds exactly it."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from report_support import data_island, html_report

from synchunt.attribute import Analysis, analyze
from synchunt.render.html.view import build_model
from synchunt.report import build_report
from synchunt.report.timeline import build_timeline
from synchunt.sites import NO_SCOPE
from synchunt.trace import load_trace


@pytest.fixture(scope="module")
def masked(masked_small: Path) -> Analysis:
    return analyze(masked_small)


def test_report_sites_match_analysis_json(masked: Analysis) -> None:
    model = build_model(masked)
    expected = masked.to_json()["call_sites"]
    assert [s.site for s in model.sites] == [s["site"] for s in expected]
    for view, site in zip(model.sites, expected, strict=True):
        assert view.count == site["count"]
        assert view.stall_us == pytest.approx(site["stall_us"])
        assert list(view.rules) == site["rules"] == ["SH101"]
        assert view.scopes == site["scopes"]
        assert sum(entry.count for entry in view.paths) == site["count"]
        assert {(entry.op_chain, entry.rule) for entry in view.paths} == {("aten::index › aten::nonzero", "SH101")}
        assert sum(count for _, count in view.op_chains) == site["count"]
    assert model.sites[0].op_chains == (("aten::index › aten::nonzero", model.sites[0].count),)
    # A capture records where its files live and the guard saw the exact line: the report shows that line.
    assert model.sources == {}  # build_model alone reads no file
    [side] = build_report(masked).sides
    assert side.sources == {model.sites[0].site: "local = indices[indices % dcp_size == dcp_rank] // dcp_size"}


def test_report_scopes_match_analysis_json(masked: Analysis) -> None:
    model = build_model(masked)
    syncs = masked.to_json()["syncs"]
    expected = Counter(s["scope"] or NO_SCOPE for s in syncs)
    assert {v.scope: v.count for v in model.scopes} == dict(expected)
    # The small preset loads 4 layers, each with two masked translations: 2 per layer.
    assert [v.scope for v in model.scopes] == [f"start_loading › layer_{k}" for k in range(4)]
    assert all(v.count == 2 for v in model.scopes)
    scopes = [d.text for d in model.sites[0].details if d.field == "scope"]
    assert scopes == ["start_loading › layer_0..3 ×2 each (4 scopes)"]


def test_report_header_counts_and_verdict(masked: Analysis) -> None:
    header = build_model(masked).header
    summary = masked.to_json()["summary"]
    assert (header["syncs"], header["confirmed"], header["latent"]) == (8, 0, 8)
    assert header["stall_us"] == pytest.approx(summary["stall_us"])
    assert header["verdict"] == "8 latent syncs on thread scheduler"
    assert header["torch"] and header["device"] == "cpu"
    assert header["traces"][0]["label"] == "masked"


def test_a_trace_from_elsewhere_names_the_devices_kineto_recorded(tmp_path: Path) -> None:
    """No synchunt capture said what ran it, but Kineto's deviceProperties names the GPUs: the header says so."""
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::nonzero", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"},
                                                     {"id": 1, "name": "NVIDIA H100 80GB HBM3"}, {"id": 2}],
                                "traceEvents": events}))
    analysis = analyze(path)
    assert analysis.traces[0].devices == ("NVIDIA H100 80GB HBM3",)
    assert build_model(analysis).header["device"] == "NVIDIA H100 80GB HBM3"
    assert Analysis.from_json(analysis.to_json()).traces[0].devices == ("NVIDIA H100 80GB HBM3",)


def test_report_page_embeds_the_model(masked: Analysis, masked_small: Path) -> None:
    page = html_report(masked, [masked_small])
    data = data_island(page)
    side = data["sides"][0]
    assert side["model"]["header"]["verdict"] == "8 latent syncs on thread scheduler"
    assert [s["count"] for s in side["model"]["sites"]] == [s["count"] for s in masked.to_json()["call_sites"]]
    assert set(side["figures"]) == {"sites", "scopes", "callpath"}
    timeline = side["timelines"][0]["figure"]
    markers = [t for t in timeline["data"] if t["type"] == "scatter"]
    assert len(markers) == 1 and len(markers[0]["x"]) == 8
    assert data["comparison"] is None


def test_report_page_is_self_contained(masked: Analysis, masked_small: Path) -> None:
    page = html_report(masked, [masked_small])
    assert not re.search(r"<script[^>]*\ssrc=", page)
    assert not re.search(r"<link[^>]*\shref=", page)
    assert "cdn.plot.ly" not in page.split("<script nonce")[0]  # nothing before the inlined plotly.js
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None and "default-src 'none'" in policy[1] and "connect-src 'none'" in policy[1]


def test_report_timeline_keeps_every_sync_when_decimated(masked: Analysis, masked_small: Path) -> None:
    trace = load_trace(masked_small)
    full = build_timeline(trace, masked)
    assert not full.decimated and len(full.syncs) == 8
    assert full.lanes == ["scheduler · ProfilerStep#k", "scheduler · start_loading / forward",
                          "scheduler · layer_k", "scheduler · ops", "scheduler · syncs"]
    small = build_timeline(trace, masked, budget=20)
    assert small.decimated and small.total == full.total
    assert len(small.syncs) == 8
    # Every op around a sync survives decimation, whatever the budget.
    assert (small.bars["kind"] == "sync-op").sum() == (full.bars["kind"] == "sync-op").sum() == 8
    assert small.shown == 20
    assert "decimated: 20 of" in small.note() and "all 8 syncs shown" in small.note()
    # The rest of the budget goes to the longest events: nothing dropped outlasts anything kept.
    key = ["lane", "start_ms", "name"]
    merged = full.bars.merge(small.bars[key].assign(kept=True), on=key, how="left")
    dropped = merged[merged["kept"].isna()]
    optional_kept = merged[merged["kept"].notna() & (merged["kind"] != "sync-op")]
    assert len(dropped) == full.total - 20
    assert dropped["dur_ms"].max() <= optional_kept["dur_ms"].min()


def test_report_sync_free_trace(sliced_small: Path) -> None:
    clean = analyze(sliced_small)
    model = build_model(clean)
    assert model.header["verdict"] == "sync-free" and model.header["clean"]
    assert model.sites == () and model.scopes == ()
    data = data_island(html_report(clean, [sliced_small]))
    side = data["sides"][0]
    assert side["figures"] == {}
    assert side["timelines"] and "ops" in " ".join(side["timelines"][0]["figure"]["layout"]["yaxis"]["categoryarray"])


def test_report_from_json_analysis_without_trace_files(masked: Analysis) -> None:
    """A re-loaded analysis whose traces are gone still renders (without a timeline)."""
    data = masked.to_json()
    for trace in data["traces"]:
        trace["path"] = "/nonexistent/trace.json"
    for sync in data["syncs"]:
        sync["trace"] = "/nonexistent/trace.json"
    page = html_report(Analysis.from_json(data))
    side = data_island(page)["sides"][0]
    assert side["timelines"] == [] and side["model"]["header"]["syncs"] == 8

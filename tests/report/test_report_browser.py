"""The report in a real (headless Chromium) browser: it renders, stays offline, and trace text never runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import HOSTILE_FUNCTION, HOSTILE_OP, HOSTILE_SCOPE, HOSTILE_THREAD, html_report
from report_traces import SITE_LINE

from synchunt.attribute import Analysis, analyze

pytestmark = pytest.mark.slow

# Waits for the page script to finish, then reports what the tests check.
STATE = """(function () {
  var root = document.getElementById("report");
  if (!root || root.dataset.rendered === "pending") return null;
  var figures = Array.prototype.map.call(document.querySelectorAll(".figure"), function (box) {
    return [box.id, box.querySelectorAll("svg.main-svg").length > 0];
  });
  function texts(root, selector) {
    return Array.prototype.map.call(root.querySelectorAll(selector), function (t) { return t.textContent; });
  }
  var svg = {};
  document.querySelectorAll(".figure").forEach(function (box) {
    svg[box.id] = {all: texts(box, "text"), yticks: texts(box, ".ytick text"), points: texts(box, ".textpoint text")};
  });
  function box(node) { var r = node.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  var cmp = document.getElementById("comparison-figure");
  var overlap = null;
  if (cmp && cmp.querySelector(".legend")) {
    var legend = box(cmp.querySelector(".legend"));
    overlap = Array.prototype.some.call(cmp.querySelectorAll(".annotation-text"), function (title) {
      var t = box(title);
      return t[0] < legend[2] && legend[0] < t[2] && t[1] < legend[3] && legend[1] < t[3];
    });
  }
  var verdicts = {};
  document.querySelectorAll("[data-verdict]").forEach(function (v) { verdicts[v.dataset.verdict] = v.textContent; });
  return {rendered: root.dataset.rendered, figures: figures, verdicts: verdicts,
          pwned: window.__pwned === undefined ? null : String(window.__pwned),
          marker: document.body.getAttribute("data-pwned"), images: document.querySelectorAll("img").length,
          text: document.body.innerText, svg: svg, legendOverTitle: overlap,
          sources: texts(document, "[data-source]"),
          pathOps: Array.prototype.map.call(document.querySelectorAll("[data-path-op]"), function (n) {
            return n.getAttribute("data-path-op"); }),
          notes: texts(document, "[data-note]"),
          idle: texts(document, "[data-stat=device-idle] .v"),
          delay: texts(document, "[data-stat=collective-delay] .v"), delays: texts(document, "td.delay"),
          headers: texts(document, "table.sites th")};
})()"""


def open_report(browser, page: Path, screenshot: Path) -> dict:
    log, state = browser.open(page, wait_for=STATE, screenshot=screenshot)
    assert log.console_errors == [] and log.exceptions == []
    assert log.dialogs == []
    assert log.requests == [page.resolve().as_uri()]  # the page itself, nothing else
    assert state["rendered"] == "ok"
    assert state["figures"] and all(drawn for _, drawn in state["figures"]), state["figures"]
    assert screenshot.stat().st_size > 10_000
    return state


def test_report_browser_masked(browser, masked_full: Path, tmp_path: Path, artifacts: Path) -> None:
    page = tmp_path / "masked.html"
    page.write_text(html_report(analyze(masked_full), [masked_full]), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-masked.png")
    assert state["verdicts"] == {"report": "54 latent syncs on thread scheduler"}
    assert {name for name, _ in state["figures"]} == {"report-timeline-0", "report-sites", "report-scopes",
                                                     "report-callpath"}
    assert "start_loading › layer_0..26 ×2 each (27 scopes)" in state["text"]
    assert "indices[dcp_rank::dcp_size]" in state["text"]  # the rule's sync-free alternative
    assert "rewrite of this line: a strided slice" in state["text"]  # and the user's own line rewritten
    assert "the rule's example (SH101), not a rewrite of this line" in state["text"]
    timeline = state["svg"]["report-timeline-0"]
    assert "scheduler · syncs" in timeline["yticks"] and not any("GPU" in t for t in timeline["yticks"])
    # 54 markers close together: labelled where a label fits, by their rule code.
    assert 10 <= len(timeline["points"]) < 54 and set(timeline["points"]) == {"SH101"}
    assert state["idle"] == ["unknown"]  # latent: no device figures
    assert "No timeline" not in state["text"]


def test_report_browser_compare(browser, masked_full: Path, sliced_full: Path, tmp_path: Path,
                                artifacts: Path) -> None:
    page = tmp_path / "compare.html"
    before, after = analyze(masked_full), analyze(sliced_full)
    page.write_text(html_report(before, [masked_full], after=after, after_traces=[sliced_full]), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-compare.png")
    verdicts = state["verdicts"]
    assert verdicts["comparison"].startswith("54 → 0 syncs · stall ")
    # Latent: the stall is CPU time here, the counts decide.
    assert verdicts["comparison"].endswith("saved), CPU time: not judged · aten::nonzero gone")
    assert verdicts["before"] == "54 latent syncs on thread scheduler"
    assert verdicts["after"] == "sync-free"
    assert "comparison-figure" in {name for name, _ in state["figures"]}
    assert "after-timeline-0" in {name for name, _ in state["figures"]}
    assert state["legendOverTitle"] is False  # the legend clear of "syncs per call site" / "syncs per scope"
    drawn = set(state["svg"]["comparison-figure"]["all"])
    assert {"syncs per call site", "syncs per scope", "before", "after"} <= drawn


def test_report_browser_hostile_names_never_run(browser, hostile_trace: Path, tmp_path: Path,
                                                artifacts: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(html_report(analyze(hostile_trace), [hostile_trace]), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-hostile.png")
    assert state["pwned"] is None and state["marker"] is None and state["images"] == 0
    # Shown as text, not dropped: the page is still the report of that trace.
    assert HOSTILE_THREAD in state["text"]
    assert HOSTILE_FUNCTION.replace("\u2028", "") in state["text"].replace("\u2028", "").replace("\n", "")
    assert state["verdicts"]["report"] == f"8 latent syncs on thread {HOSTILE_THREAD}"
    assert HOSTILE_SCOPE.split('"')[0] in state["text"]
    # The lane labels, marker labels and per-path ops carry the hostile names as text too.
    timeline = state["svg"]["report-timeline-0"]
    assert any(tick.endswith("· syncs") and tick.startswith("sched</script") for tick in timeline["yticks"])
    assert timeline["points"] and all(point == "SH101 index" for point in timeline["points"])
    assert state["pathOps"] and all(op.startswith("aten::index") for op in state["pathOps"])
    assert HOSTILE_OP not in state["pathOps"]  # the masked site syncs in index › nonzero, not in the renamed cat


def _exact_site(analysis: Analysis, source: Path) -> Analysis:
    """The analysis with its call site's line known exactly and its file readable."""
    data = analysis.to_json()
    for sync in data["syncs"]:
        sync["call_site"].update(file=str(source), line_source="exact")
    return Analysis.from_json(data)


def test_report_browser_gpu_trace(browser, gpu_trace: Path, tmp_path: Path, artifacts: Path) -> None:
    """Stream lanes, labelled markers, ms axes, no scope chart for one scope, per-path ops, the site's own line."""
    source = tmp_path / "app.py"
    source.write_text("\n" * (SITE_LINE - 1) + "    if flags.item() > 0:\n")
    page = tmp_path / "gpu.html"
    page.write_text(html_report(_exact_site(analyze(gpu_trace), source), [gpu_trace]), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-gpu-fixture.png")
    assert {name for name, _ in state["figures"]} == {"report-timeline-0", "report-sites", "report-callpath"}
    timeline = state["svg"]["report-timeline-0"]
    assert "GPU 0 · stream 7" in timeline["yticks"] and "100 (python) · syncs" in timeline["yticks"]
    assert sorted(timeline["points"]) == ["SH109 item", "SH110 is_nonzero"]
    assert "stall ms" in timeline["all"] and "device idle a sync caused" in timeline["all"]
    assert "work a sync waited for" in timeline["all"]
    sites = state["svg"]["report-sites"]["all"]
    assert {"stall (ms)", "device idle caused (µs)", "150.10 ms", "404.0 µs"} <= set(sites)
    callpath = " ".join(state["svg"]["report-callpath"]["all"])
    assert "aten::item › aten::_local_scalar_dense (SH109)" in callpath
    assert "aten::is_nonzero › aten::item › aten::_local_scalar_dense (SH110)" in callpath
    assert sorted(state["pathOps"]) == ["aten::is_nonzero › aten::item › aten::_local_scalar_dense",
                                        "aten::item › aten::_local_scalar_dense"]
    assert state["sources"] == ["if flags.item() > 0:"] and f"your line, app.py:{SITE_LINE}" in state["text"]
    assert state["idle"] == ["404.0 µs"] and "device idle caused" in state["headers"]
    assert state["notes"] == ["No record_function scope encloses any of these syncs."]
    assert state["delay"] == [] and "collective delay" not in state["headers"]  # one rank: no delay to show


def test_report_browser_ranks(browser, tmp_path: Path, artifacts: Path) -> None:
    """A folder of two ranks: the delay of each rank's next collective, in the header and per call site."""
    from test_analysis_collective_delays import _ranks

    from synchunt.trace import load_trace

    folder = _ranks(tmp_path / "ranks")
    page = tmp_path / "ranks.html"
    page.write_text(html_report(analyze([folder]), [load_trace(p) for p in sorted(folder.iterdir())]),
                    encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-ranks.png")
    assert state["delay"] == ["205.0 µs"] and state["delays"] == ["+205.0 µs"]
    assert "collective delay" in state["headers"]
    assert {name for name, _ in state["figures"]} == {"report-timeline-0", "report-timeline-1", "report-sites"}
    assert "No record_function scope encloses any of these syncs." in state["notes"]
    assert "The trace records no Python frames for these syncs" in state["text"]


def test_report_browser_real_gpu_trace(browser, shared_trace, tmp_path: Path, artifacts: Path) -> None:
    path = shared_trace("real/tracelens/gaunernst_bert-small-uncased__1016001.json.gz")
    page = tmp_path / "bert.html"
    page.write_text(html_report(analyze(path), [path]), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-gpu.png")
    timeline = state["svg"]["report-timeline-0"]
    assert "GPU 0 · stream 7" in timeline["yticks"]
    assert sorted(timeline["points"]) == ["SH110 is_nonzero", "SH301 cudaDeviceSynchronize"]
    assert state["idle"] == ["153.9 µs"]
    assert state["notes"] == ["set aside, not counted: torch.profiler synchronizes the device when its recording "
                              "window closes (1 call: cudaDeviceSynchronize)",
                              "No record_function scope encloses any of these syncs."]
    assert "report-scopes" not in {name for name, _ in state["figures"]}  # every sync outside any scope


def test_every_field_of_a_sync_reaches_the_rendered_page(browser, tmp_path: Path, artifacts: Path) -> None:
    """The page as a reader sees it (the DOM's text, not its data) shows every field of the model."""
    from attribute.field_probe import SHOWN, probe_analysis

    page = tmp_path / "probe.html"
    page.write_text(html_report(probe_analysis()), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-probe.png")
    missing = {field: shown for field, shown in SHOWN.items() if shown not in state["text"]}
    assert not missing, f"the rendered page leaves out: {missing}"


def test_a_guard_only_site_reads_not_measured_on_the_page(browser, tmp_path: Path, artifacts: Path) -> None:
    """A sync no trace event times: the sites table says its stall was not measured, never 0.0 µs."""
    from attribute.test_unmeasured_stall import GUARD_ONLY, OTHER, _analysis

    page = tmp_path / "guard-only.html"
    page.write_text(html_report(_analysis(GUARD_ONLY, OTHER)), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-guard-only.png")
    assert "not measured\n(guard only)" in state["text"]
    assert "No timeline: this page was made from the analysis alone" in state["text"]  # no trace given
    assert "1 (stall not measured: seen by the guard only)" in state["text"]  # the warm-up card

"""The report in a real (headless Chromium) browser: it renders, stays offline, and trace text never runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import HOSTILE_FUNCTION, HOSTILE_SCOPE, HOSTILE_THREAD, html_report

from synchunt.attribute import analyze

pytestmark = pytest.mark.slow

# Waits for the page script to finish, then reports what the tests check.
STATE = """(function () {
  var root = document.getElementById("report");
  if (!root || root.dataset.rendered === "pending") return null;
  var figures = Array.prototype.map.call(document.querySelectorAll(".figure"), function (box) {
    return [box.id, box.querySelectorAll("svg.main-svg").length > 0];
  });
  var verdicts = {};
  document.querySelectorAll("[data-verdict]").forEach(function (v) { verdicts[v.dataset.verdict] = v.textContent; });
  return {rendered: root.dataset.rendered, figures: figures, verdicts: verdicts,
          pwned: window.__pwned === undefined ? null : String(window.__pwned),
          marker: document.body.getAttribute("data-pwned"), images: document.querySelectorAll("img").length,
          text: document.body.innerText};
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


def test_report_browser_compare(browser, masked_full: Path, sliced_full: Path, tmp_path: Path,
                                artifacts: Path) -> None:
    page = tmp_path / "compare.html"
    page.write_text(html_report(analyze(masked_full), [masked_full], after=analyze(sliced_full),
                                after_traces=[sliced_full]), encoding="utf-8")
    state = open_report(browser, page, artifacts / "report-compare.png")
    verdicts = state["verdicts"]
    assert verdicts["comparison"].startswith("54 → 0 syncs · stall ")
    assert verdicts["comparison"].endswith("saved) · aten::nonzero gone")
    assert verdicts["before"] == "54 latent syncs on thread scheduler"
    assert verdicts["after"] == "sync-free"
    assert "comparison-figure" in {name for name, _ in state["figures"]}
    assert "after-timeline-0" in {name for name, _ in state["figures"]}


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

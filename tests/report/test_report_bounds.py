"""A trace no page could show whole (hundreds of call sites, thousands of scopes, a stack thousands of frames deep,
megabyte names) still gives a page a browser opens: the busiest sites and scopes, both ends of the deep stack,
shortened names, and a note counting what was left out."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from report_support import data_island, html_report

from synchunt.attribute import analyze
from synchunt.render.html.escape import MAX_TEXT
from synchunt.render.html.figures import STACKED_SITES
from synchunt.render.html.view import MAX_SCOPES, MAX_SITES, STACK_INNER, STACK_OUTER

SITES = 260  # more call sites than the page lists
SCOPES_PER_SITE = 2  # so more scopes than the page lists
DEEP = 3000  # frames above the last site's op
HUGE = "x" * 1_000_000


def _event(cat: str, name: str, ts: float, dur: float) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}


def _write_unshowable_trace(path: Path) -> Path:
    events = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]
    ts = 0.0
    for site in range(SITES):
        events.append(_event("python_function", f"pkg/mod{site}.py({site + 1}): step{site}", ts, 100))
        for scope in range(SCOPES_PER_SITE):
            name = HUGE if site == 0 and scope == 0 else f"site{site}.scope{scope}"
            events.append(_event("user_annotation", name, ts + 1 + 40 * scope, 38))
            events.append(_event("cpu_op", "aten::nonzero", ts + 2 + 40 * scope, 30))
        ts += 200
    for depth in range(DEEP):  # one call path thousands of frames deep, its innermost frame a site of its own
        events.append(_event("python_function", f"pkg/deep.py({depth + 1}): level{depth}", ts + depth * 0.01,
                             10_000 - depth * 0.02))
    events.append(_event("cpu_op", "aten::nonzero", ts + DEEP * 0.01 + 1, 500))  # the longest stall of all
    path.write_bytes(gzip.compress(json.dumps({"schemaVersion": 1, "traceEvents": events}).encode()))
    return path


def test_a_trace_no_page_could_show_whole_gives_a_bounded_page(tmp_path: Path) -> None:
    trace = _write_unshowable_trace(tmp_path / "unshowable.pt.trace.json.gz")
    analysis = analyze(trace)
    assert len(analysis.sites) == SITES + 1 and len(analysis.records) == SITES * SCOPES_PER_SITE + 1
    page = html_report(analysis, [trace])
    # Every name appears shortened (not a megabyte in each figure), and the data stays a size a browser opens
    # (plotly.js itself is about 4.8 MB of the page).
    assert HUGE[: MAX_TEXT + 1] not in page
    side = data_island(page)["sides"][0]
    data_size = len(json.dumps(side))
    assert data_size < 6_000_000, f"{data_size:,} characters of data"
    # The scope chart stacks the busiest sites and one segment for the rest, not a segment per site.
    assert len(side["figures"]["scopes"]["data"]) == STACKED_SITES + 1
    assert side["figures"]["scopes"]["data"][-1]["name"] == f"{MAX_SITES - STACKED_SITES} other sites"
    model = side["model"]
    header = model["header"]
    assert len(model["sites"]) == MAX_SITES and header["sites_left_out"] == SITES + 1 - MAX_SITES
    assert len(model["scopes"]) == MAX_SCOPES
    assert header["scopes_left_out"] == SITES * SCOPES_PER_SITE + 1 - MAX_SCOPES
    # The deep call path keeps its innermost and outermost frames and counts the ones between.
    deep = [site for site in model["sites"] if site["file"] == "pkg/deep.py"]
    assert deep, "the deep site has the longest stall, so it is among those shown"
    frames = deep[0]["paths"][0]["frames"]
    assert len(frames) == STACK_INNER + 1 + STACK_OUTER
    assert frames[STACK_INNER]["function"] == f"{DEEP - STACK_INNER - STACK_OUTER} frames left out"
    assert frames[0]["function"] == f"level{DEEP - 1}" and frames[-1]["function"] == "level0"
    # The JSON output keeps everything the page left out.
    assert len(analysis.to_json()["call_sites"]) == SITES + 1


def test_a_page_that_shows_everything_says_nothing_was_left_out(gpu_trace: Path) -> None:
    header = data_island(html_report(analyze(gpu_trace), [gpu_trace]))["sides"][0]["model"]["header"]
    assert header["sites_left_out"] == 0 and header["scopes_left_out"] == 0

"""Traces wider than a screen: many threads with syncs, many call sites. The timeline draws the threads with the
most syncs and says how many it left out; the terminal summary lists the busiest sites and counts the rest."""

from __future__ import annotations

import json
from pathlib import Path

from synchunt.attribute import analyze
from synchunt.render.analysis.text import MAX_SITES, render_text
from synchunt.report.timeline import MAX_THREADS, build_timeline
from synchunt.trace import load_trace

THREADS = 20
SITES = 60


def _event(cat: str, name: str, ts: float, dur: float, tid: int) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": {}}


def _wide_trace(path: Path) -> Path:
    """Thread t has t + 1 syncs, each at a call site of its own."""
    events, site = [], 0
    for tid in range(1, THREADS + 1):
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": f"worker-{tid}"}})
        for n in range(tid):
            ts = n * 100.0
            events.append(_event("python_function", f"pkg/m{site % SITES}.py({site % SITES + 1}): f", ts, 50, tid))
            events.append(_event("cpu_op", "aten::nonzero", ts + 1, 10, tid))
            site += 1
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_the_timeline_draws_the_threads_with_the_most_syncs(tmp_path: Path) -> None:
    trace = _wide_trace(tmp_path / "wide.json")
    analysis = analyze(trace)
    timeline = build_timeline(load_trace(trace), analysis)
    drawn = {lane.split(" · ")[0] for lane in timeline.lanes}
    assert drawn == {f"worker-{tid}" for tid in range(THREADS - MAX_THREADS + 1, THREADS + 1)}
    assert (timeline.threads, timeline.thread_lanes) == (THREADS, MAX_THREADS)
    assert f"{MAX_THREADS} of {THREADS} threads with syncs shown" in timeline.note()
    shown = sum(range(THREADS - MAX_THREADS + 1, THREADS + 1))
    assert len(timeline.syncs) == shown  # the syncs of the threads drawn, each one


def test_the_terminal_summary_lists_the_busiest_sites_and_counts_the_rest(tmp_path: Path) -> None:
    analysis = analyze(_wide_trace(tmp_path / "wide.json"))
    assert len(analysis.sites) == SITES
    text = render_text(analysis)
    assert f"… and {SITES - MAX_SITES} more call sites" in text and "--format json or csv lists every one" in text
    listed = [site.site for site in analysis.sites[:MAX_SITES]]
    assert all(site in text for site in listed[:3]) and analysis.sites[-1].site not in text


def test_the_timeline_marks_the_longest_stalls_when_there_are_too_many_to_draw(tmp_path: Path, monkeypatch) -> None:
    from synchunt.report import timeline as module

    monkeypatch.setattr(module, "MAX_MARKED", 5)
    trace = _wide_trace(tmp_path / "wide.json")
    analysis = analyze(trace)
    timeline = build_timeline(load_trace(trace), analysis)
    assert len(timeline.syncs) == 5 and timeline.syncs_total == sum(range(THREADS - MAX_THREADS + 1, THREADS + 1))
    assert f"5 of {timeline.syncs_total} syncs marked (the longest stalls)" in timeline.note()
    drawn_stalls = sorted(timeline.syncs["stall_us"], reverse=True)
    assert drawn_stalls == sorted(analysis.syncs["stall_us"], reverse=True)[:5]

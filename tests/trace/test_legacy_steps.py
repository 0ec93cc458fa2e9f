"""Kineto before torch 1.10 wrote `ProfilerStep#N` as an `Operator` (the old name of `cpu_op`): it is the step's
annotation, as newer traces write it, not an op of every sync's chain."""

from __future__ import annotations

import json
from pathlib import Path

import synchunt
from synchunt.trace import load_trace


def _event(name: str, cat: str, ts: float, dur: float) -> dict:
    return {"ph": "X", "name": name, "cat": cat, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}}


def test_a_legacy_step_is_a_step(tmp_path: Path) -> None:
    events = [_event(f"ProfilerStep#{n}", "Operator", 100 * n, 90) for n in (5, 6)]
    events += [_event("aten::nonzero", "Operator", 100 * n + 10, 5) for n in (5, 6)]
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_trace(path)
    assert set(trace.events.loc[trace.events["name"].str.startswith("ProfilerStep"), "cat"]) == {"user_annotation"}
    records = synchunt.analyze(path).records
    assert [(r.op_chain, r.step) for r in records] == [(("aten::nonzero",), "ProfilerStep#5"),
                                                      (("aten::nonzero",), "ProfilerStep#6")]


def test_a_call_stack_names_the_line_that_was_running() -> None:
    """An older trace's `Call stack` gives each frame's running line, not its function's first line: it is the
    sync's line as it is, never moved to another line of the function."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "ATTR-timestamps-integer-legacy.json"
    sites = [(r.call_site.line, r.call_site.line_source, r.call_site.def_line)
             for r in synchunt.analyze(fixture).records]
    assert sites == [(42, "runtime", None), (51, "runtime", None)]

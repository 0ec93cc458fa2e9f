"""Saved analyses: ``synchunt.analysis/3`` round-trips, and a ``/1`` file written by an older synchunt still loads
(its lines were the functions' first lines, and it had no measured impact)."""

from __future__ import annotations

import json

import pytest

from synchunt.attribute import Analysis
from synchunt.attribute.document import SCHEMA, decode
from synchunt.errors import TraceError

# One sync as synchunt's first release wrote it (`analyze -f json`, schema synchunt.analysis/1).
V1_SYNC = {"rule": "SH101", "kind": "data-dependent read", "confirmed": True, "op": "aten::nonzero",
           "op_chain": ["aten::index", "aten::nonzero"], "runtime": "cudaStreamSynchronize",
           "thread": {"tid": 7, "pid": 1, "name": "scheduler"}, "ts_us": 20.0, "stall_us": 50.0,
           "stall_source": "cudaStreamSynchronize",
           "call_site": {"file": "model.py", "line": 12, "function": "forward"},
           "stack": [{"file": "model.py", "line": 12, "function": "forward"}], "scope": "layer_0",
           "scope_chain": ["step", "layer_0"], "step": None, "waited_on": "index_kernel (stream 7)",
           "direction": "DtoH", "rank": None, "trace": "t.json"}
V1 = {"schema": "synchunt.analysis/1",
      "traces": [{"path": "t.json", "rank": None, "device_activity": True, "mode": "confirmed", "start_us": 0.0,
                  "end_us": 200.0, "synchunt": {}, "threads": ["7", "scheduler"], "scopes": ["step", "layer_0"]}],
      "filters": {"mode": "auto"},
      "summary": {"syncs": 2, "confirmed": 2, "latent": 0, "stall_us": 80.0, "max_stall_us": 50.0},
      "syncs": [V1_SYNC, {**V1_SYNC, "call_site": {"file": None, "line": None, "function": None}, "stack": [],
                          "stall_us": 30.0, "waited_on": None}],
      "call_sites": [{"site": "model.py:12 forward", "file": "model.py", "line": 12, "function": "forward",
                      "count": 1, "confirmed": 1, "latent": 0, "stall_us": 50.0, "max_stall_us": 50.0,
                      "rules": ["SH101"], "ops": ["aten::nonzero"], "scopes": {"layer_0": 1},
                      "threads": ["scheduler"]}]}


def test_a_v1_analysis_loads_with_def_lines_and_no_impact() -> None:
    analysis = decode(json.dumps(V1).encode())
    framed, bare = analysis.records
    assert framed.call_site is not None and framed.call_site.line_source == "def"
    assert (framed.call_site.file, framed.call_site.line, framed.call_site.def_line) == ("model.py", 12, 12)
    assert framed.impact is None and framed.device_idle_us is None
    assert bare.call_site is None and bare.site == "<no Python frame> aten::nonzero"
    assert [sync.stall_us for sync in analysis.records] == [50.0, 30.0]
    again = analysis.to_json()
    assert again["schema"] == SCHEMA and Analysis.from_json(again).to_json() == again


def test_a_v1_sync_without_its_rule_is_refused_naming_the_field() -> None:
    broken = {**V1, "syncs": [{k: v for k, v in V1_SYNC.items() if k != "rule"}]}
    with pytest.raises(TraceError, match="rule"):
        decode(json.dumps(broken).encode())


@pytest.mark.parametrize(("change", "message"), [
    ({"syncs": [{**V1_SYNC, "rule": "SH999"}]}, r"unknown rule code 'SH999' - at `\$.syncs\[0\].rule`"),
    ({"filters": [1]}, "filters"),
    ({"call_sites": 5}, "call_sites"),
])
def test_a_forged_analysis_is_refused_naming_what_is_wrong(change, message) -> None:
    with pytest.raises(TraceError, match=message):
        decode(json.dumps({**V1, **change}).encode())


def test_a_saved_analysis_nested_too_deeply_is_refused() -> None:
    for schema in ("synchunt.analysis/1", SCHEMA):
        raw = b'{"schema": "' + schema.encode() + b'", "filters": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
        with pytest.raises(TraceError, match="nested too deeply"):
            decode(raw)


def test_a_v2_analysis_loads_its_set_aside_calls_and_timestamps() -> None:
    """/2 named a set-aside call's thread as an object and had no via, phase, line notes or notes."""
    v2 = Analysis.from_json(V1).to_json()
    v2["schema"] = "synchunt.analysis/2"
    v2.pop("notes")
    for sync in v2["syncs"]:
        for key in ("via", "phase"):
            sync.pop(key)
        if sync["call_site"]:
            for key in ("user", "line_note"):
                sync["call_site"].pop(key)
    v2["traces"][0]["set_aside"] = [{"runtime": "cudaDeviceSynchronize", "ts_us": 0.5, "stall_us": 2.0,
                                     "reason": "profiler", "thread": {"tid": 7, "pid": 1, "name": "main"}}]
    analysis = decode(json.dumps(v2).encode())
    [item] = analysis.traces[0].set_aside
    assert (item.thread, item.pid, item.tid, item.runtime) == ("main", 1, 7, "cudaDeviceSynchronize")
    assert all(record.via is None and record.phase == "steady" for record in analysis.records)

"""What a CPU run reports apart or with a caveat: warm-up (a first step's one-time syncs, warm-up scopes, an op's first
calls) and syncs inside a reviewed device branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_traces import shared_trace_path

import synchunt

PID, TID = 1, 7


def _event(name: str, cat: str, ts: float, dur: float) -> dict:
    return {"ph": "X", "name": name, "cat": cat, "pid": PID, "tid": TID, "ts": ts, "dur": dur, "args": {}}


def _read(ts: float, under: str | None = None) -> list[dict]:
    """A host read (``.item()``), optionally inside a call of ``under``."""
    events = [_event("aten::item", "cpu_op", ts + 1, 3), _event("aten::_local_scalar_dense", "cpu_op", ts + 2, 1)]
    return ([_event(under, "cpu_op", ts, 5)] if under else []) + events


def _nonzero(ts: float) -> list[dict]:
    return [_event("aten::nonzero", "cpu_op", ts, 4)]


def _analysis(tmp_path: Path, events: list[dict]) -> synchunt.Analysis:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return synchunt.analyze(path)


def _phases(analysis: synchunt.Analysis) -> list[tuple[str, str]]:
    return [(record.op_chain[0], record.phase) for record in analysis.records]


def test_a_first_steps_one_time_sync_is_warm_up(tmp_path: Path) -> None:
    events = [_event("ProfilerStep#1", "user_annotation", 0, 100), *_read(10), *_nonzero(20),
              _event("ProfilerStep#2", "user_annotation", 100, 100), *_nonzero(120)]
    analysis = _analysis(tmp_path, events)
    assert _phases(analysis) == [("aten::item", "warm-up"), ("aten::nonzero", "steady"), ("aten::nonzero", "steady")]
    totals = analysis.totals
    assert (totals.syncs, totals.warmup) == (3, 1)
    assert totals.stall_us == pytest.approx(8.0) and totals.warmup_stall_us == pytest.approx(1.0)
    assert any("1 warm-up sync" in note for note in analysis.notes)


def test_one_step_is_all_steady(tmp_path: Path) -> None:
    events = [_event("ProfilerStep#1", "user_annotation", 0, 100), *_read(10), *_nonzero(20)]
    assert {phase for _, phase in _phases(_analysis(tmp_path, events))} == {"steady"}


@pytest.mark.parametrize("name", ["warmup", "model|warm_up|forward", "Warm-Up pass"])
def test_a_scope_named_warm_up_is_warm_up(tmp_path: Path, name: str) -> None:
    events = [_event(name, "user_annotation", 0, 50), *_nonzero(10), *_nonzero(60)]
    assert _phases(_analysis(tmp_path, events)) == [("aten::nonzero", "warm-up"), ("aten::nonzero", "steady")]


def test_warmer_is_not_a_warm_up_scope(tmp_path: Path) -> None:
    events = [_event("cache_warmer", "user_annotation", 0, 50), *_nonzero(10)]
    assert _phases(_analysis(tmp_path, events)) == [("aten::nonzero", "steady")]


def test_an_ops_first_calls_that_stop_syncing_are_warm_up(tmp_path: Path) -> None:
    # aten::conv syncs in its first call only (an initialization), aten::gather in every call (steady state).
    events = _read(0, under="aten::conv")
    events += [_event("aten::conv", "cpu_op", 10 + 10 * k, 5) for k in range(6)]
    events += [event for k in range(6) for event in _read(100 + 10 * k, under="aten::gather")]
    phases = _phases(_analysis(tmp_path, events))
    assert phases == [("aten::conv", "warm-up")] + [("aten::gather", "steady")] * 6


def test_an_op_whose_later_runs_are_inside_another_ops_calls_is_steady(tmp_path: Path) -> None:
    """`torch.nonzero(m)` once, then four `x[mask]`, each running its own `aten::nonzero` inside `aten::index`:
    those are the indexing's calls (and syncs), not later nonzero calls that did not sync."""
    events = _nonzero(0)
    events += [event for k in range(4) for event in (_event("aten::index", "cpu_op", 10 + 10 * k, 8),
                                                     *_nonzero(11 + 10 * k))]
    phases = _phases(_analysis(tmp_path, events))
    assert phases == [("aten::nonzero", "steady")] + [("aten::index", "steady")] * 4


def test_alexnets_initialization_stall_is_kept_apart() -> None:
    analysis = synchunt.analyze(shared_trace_path(
        "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"))
    totals = analysis.totals
    warm = [record for record in analysis.records if record.phase == "warm-up"]
    assert max(record.stall_us for record in warm) > 6e6  # the first cuDNN convolution's cudaFree: 6 s
    assert totals.stall_us < 0.1e6 and totals.warmup_stall_us > 6e6
    assert totals.syncs == len(analysis.records)  # counted all the same


def test_a_sync_inside_a_reviewed_device_branch_says_what_a_gpu_run_does(tmp_path: Path) -> None:
    frames = [_event("app/detect.py(40): postprocess", "python_function", 0, 100),
              _event("/venv/lib/python3.11/site-packages/torchvision/ops/boxes.py(110): _batched_nms_vanilla",
                     "python_function", 1, 98)]
    analysis = _analysis(tmp_path, [*frames, *_nonzero(10), _event("aten::nonzero", "cpu_op", 200, 4)])
    marked, plain = analysis.records
    assert "100,000 box coordinates" in (marked.device_branch or "") and plain.device_branch is None
    assert any(detail.field == "device_branch" for site in analysis.sites for detail in site.details)

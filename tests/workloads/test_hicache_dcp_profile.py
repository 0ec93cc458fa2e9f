"""The trace contract of one hicache-dcp step: exactly the per-layer nonzeros of the masked translation.

Counts ``cpu_op`` events of a real CPU profiler trace (chrome export, ``record_shapes=True``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from torch.profiler import ProfilerActivity, profile

from synchunt_workloads.hicache_dcp import WORKLOADS, setup, step

(WORKLOAD,) = WORKLOADS
SYNC_PRONE = ("aten::nonzero", "aten::_local_scalar_dense", "aten::_unique2", "aten::masked_select",
              "aten::bincount", "aten::repeat_interleave")


def profile_one_step(overrides: dict[str, Any], tmp_path: Path, *, small: bool) -> list[dict[str, Any]]:
    state = setup(WORKLOAD.make_params(overrides, small=small))
    step(state)  # warm-up, outside the trace
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step(state)
    trace = tmp_path / "step.json"
    prof.export_chrome_trace(str(trace))
    return json.loads(trace.read_text())["traceEvents"]


def sync_prone_counts(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["name"] for e in events if e.get("cat") == "cpu_op" and e["name"] in SYNC_PRONE)


def enclosing(event: dict[str, Any], events: list[dict[str, Any]], cat: str) -> list[str]:
    """Names of the ``cat`` events on the same thread whose span contains ``event``, outermost first."""
    start, end = event["ts"], event["ts"] + event["dur"]
    around = [e for e in events if e.get("cat") == cat and e is not event and e["tid"] == event["tid"]
              and e["ts"] <= start and end <= e["ts"] + e["dur"]]
    return [e["name"] for e in sorted(around, key=lambda e: (e["ts"], -e["dur"]))]


def test_full_size_masked_step_runs_54_nonzeros_under_index_and_nothing_else(tmp_path: Path) -> None:
    events = profile_one_step({"impl": "masked"}, tmp_path, small=False)
    assert sync_prone_counts(events) == Counter({"aten::nonzero": 54})
    layers_seen = Counter()
    for nonzero in (e for e in events if e.get("name") == "aten::nonzero"):
        assert "aten::index" in enclosing(nonzero, events, "cpu_op")
        scopes = enclosing(nonzero, events, "user_annotation")
        assert scopes[0] == "start_loading" and scopes[-1].startswith("layer_")
        layers_seen[scopes[-1]] += 1
    assert layers_seen == Counter({f"layer_{i}": 2 for i in range(27)})  # host and device indices


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"impl": "masked", "layers": 5}, 10),
    ({"impl": "sliced"}, 0),
    ({"impl": "masked", "dcp_size": 1}, 0),
    ({"impl": "sliced", "dcp_size": 1}, 0),
])
def test_small_step_sync_prone_op_counts(overrides: dict[str, Any], expected: int, tmp_path: Path) -> None:
    events = profile_one_step(overrides, tmp_path, small=True)
    counts = sync_prone_counts(events)
    assert counts == (Counter({"aten::nonzero": expected}) if expected else Counter())
    annotations = Counter(e["name"] for e in events if e.get("cat") == "user_annotation")
    layers = overrides.get("layers", WORKLOAD.small["layers"])
    assert annotations["start_loading"] == annotations["forward"] == 1
    assert all(annotations[f"layer_{i}"] == 2 for i in range(layers))  # load side and consumer side

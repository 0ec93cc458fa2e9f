"""The op contract every audit path keeps with the trace engine, checked in a real CPU profiler trace.

The ``fixed`` step runs none of the ops whose output size (or value) the host must read back; the ``bad``
step runs at least one op that matches each of its expected rules — unless its only sync is a
device-to-host copy (SH2xx), which a CPU trace cannot show.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from torch.profiler import ProfilerActivity, profile

from synchunt.capture.workload import Workload
from synchunt_workloads.paths import WORKLOADS

SYNCING_OPS = frozenset({
    "aten::nonzero",
    "aten::_local_scalar_dense",
    "aten::_unique2",
    "aten::unique_dim",
    "aten::unique_consecutive",
    "aten::masked_select",
    "aten::bincount",
})

# For each data-dependent rule a bad variant may claim: the op names (and the op it must run under, if any)
# that show it in a CPU trace.
RULE_EVIDENCE: dict[str, tuple[tuple[str, str | None], ...]] = {
    "SH101": (("aten::nonzero", "aten::index"),),
    "SH103": (("aten::nonzero", None),),
    "SH105": (("aten::_unique2", None), ("aten::unique_dim", None), ("aten::unique_consecutive", None)),
    "SH109": (("aten::_local_scalar_dense", None),),
}


def profile_step(workload: Workload, variant: str, trace_dir: Path) -> list[dict[str, Any]]:
    """Profile one step (set-up outside the profiler) and return the trace's ``cpu_op`` events."""
    state = workload.setup(workload.make_params({"variant": variant}, small=True))
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as profiler:
        workload.step(state)
    trace_file = trace_dir / f"{workload.name}-{variant}.json"
    profiler.export_chrome_trace(str(trace_file))
    events = json.loads(trace_file.read_text())["traceEvents"]
    return [event for event in events if event.get("cat") == "cpu_op"]


def op_counts(ops: list[dict[str, Any]]) -> Counter[str]:
    return Counter(op["name"] for op in ops)


def ops_under(ops: list[dict[str, Any]], name: str, parent: str) -> int:
    """How many ``name`` ops run inside a ``parent`` op on the same thread (by time containment)."""
    parents = [op for op in ops if op["name"] == parent]
    count = 0
    for op in ops:
        if op["name"] != name:
            continue
        start, end = op["ts"], op["ts"] + op.get("dur", 0)
        if any(p["tid"] == op["tid"] and p["ts"] <= start and end <= p["ts"] + p.get("dur", 0)
               for p in parents):
            count += 1
    return count


def repeat_interleave_without_output_size(ops: list[dict[str, Any]]) -> int:
    """``aten::repeat_interleave`` calls whose recorded ``output_size`` argument is absent."""
    count = 0
    for op in ops:
        if op["name"] != "aten::repeat_interleave":
            continue
        inputs = op.get("args", {}).get("Concrete Inputs", [])
        if not inputs or inputs[-1] in ("", "None"):
            count += 1
    return count


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_fixed_variant_runs_no_syncing_op(workload: Workload, tmp_path: Path) -> None:
    ops = profile_step(workload, "fixed", tmp_path)
    counts = op_counts(ops)
    assert ops, "the profiler recorded no ops"
    assert not {name: counts[name] for name in SYNCING_OPS if counts[name]}
    assert repeat_interleave_without_output_size(ops) == 0


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_bad_variant_shows_its_expected_rules(workload: Workload, tmp_path: Path) -> None:
    assert workload.expected_rules
    ops = profile_step(workload, "bad", tmp_path)
    counts = op_counts(ops)
    visible = [code for code in workload.expected_rules if code in RULE_EVIDENCE]
    if not visible:
        # Only device-to-host copies: on the CPU they are no-ops that no trace op reveals.
        assert all(code.startswith("SH2") for code in workload.expected_rules)
        assert not {name: counts[name] for name in SYNCING_OPS if counts[name]}
        return
    for code in visible:
        seen = sum(counts[name] if parent is None else ops_under(ops, name, parent)
                   for name, parent in RULE_EVIDENCE[code])
        assert seen > 0, f"{workload.name}: no trace evidence of {code}"


def test_bad_rule_codes_are_in_the_catalogue() -> None:
    from synchunt.rules import get_rule

    for workload in WORKLOADS:
        for code in workload.expected_rules:
            assert get_rule(code).code == code


def test_profiled_repeat_interleave_records_output_size(tmp_path: Path) -> None:
    # The planner's gather is the one repeat_interleave in the paths; its output_size must be in the trace.
    workload = next(w for w in WORKLOADS if w.name == "dcp-prefill-planner")
    ops = profile_step(workload, "fixed", tmp_path)
    calls = [op for op in ops if op["name"] == "aten::repeat_interleave"]
    assert calls
    assert repeat_interleave_without_output_size(calls) == 0

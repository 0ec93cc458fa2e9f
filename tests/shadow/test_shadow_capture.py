"""`synchunt profile --device shadow-cuda`: the target runs with "cuda" under the shadow device, the trace says so,
and the guard pass keeps each record's residency; HiCache's mask translation still syncs once per index set and
layer, the sliced one never."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from synchunt.capture import CaptureSettings, capture, resolve_target
from synchunt.capture.targets import check_device
from synchunt.errors import UsageError

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_the_device_option_names_the_shadow_device() -> None:
    assert check_device(" Shadow-CUDA ") == "shadow-cuda"
    with pytest.raises(UsageError, match="cpu, cuda, cuda:N or shadow-cuda"):
        check_device("shadow")
    workload = resolve_target("hicache-dcp", {"device": "shadow-cuda"}, small=True)
    assert workload.device == "shadow-cuda" and workload.params["device"] == "cuda"
    function = resolve_target(f"{FIXTURES / 'shadow_patterns.py'}:noted", device="shadow-cuda")
    assert function.device == "shadow-cuda" and function.params["device"] == "cuda"


def test_a_shadow_capture_keeps_residency_and_notes(tmp_path: Path) -> None:
    target = resolve_target(f"{FIXTURES / 'shadow_patterns.py'}:encode", device="shadow-cuda")
    captured = capture(target, tmp_path, CaptureSettings())
    assert captured.metadata["device"] == "shadow-cuda" and captured.metadata["activities"] == ["cpu"]
    records: Counter[tuple[str, str, bool, bool]] = Counter()
    for r in captured.guard_records:
        records[(r["rule"], r["residency"], r["shadow"], r["latent"])] += r["count"]
    assert records == {("SH202", "device", True, True): 3, ("SH201", "device", True, True): 1,
                       ("SH110", "host", True, True): 1, ("SH201", "host", True, True): 1}
    assert captured.metadata["shadow"] == {"notes": []}

    noted = capture(resolve_target(f"{FIXTURES / 'shadow_patterns.py'}:noted", device="shadow-cuda"), tmp_path,
                    CaptureSettings(guard=False))  # a warm-up step and a recorded one
    notes = noted.metadata["shadow"]["notes"]
    assert sorted(note["kind"] for note in notes) == ["data-pointer", "mixed-devices"]
    assert all(note["file"] == "tests/shadow/fixtures/shadow_patterns.py" and note["count"] == 2 for note in notes)
    assert any(line.startswith("shadow device could not follow data-pointer Tensor.data_ptr at tests/shadow/")
               for line in noted.notes)


@pytest.mark.slow
def test_hicache_under_the_shadow_device_profiles_54_then_none(profiled) -> None:
    from synchunt.trace import load_trace

    for impl, expected in (("masked", 54), ("sliced", 0)):
        trace = load_trace(profiled("hicache-dcp", impl=impl, device="shadow-cuda"))
        records = trace.synchunt["guard"]["records"]
        by_rule = Counter()
        for record in records:
            by_rule[record["rule"]] += record["count"]
        assert by_rule["SH101"] == expected
        assert by_rule["SH203"] == 1  # host_indices.to(device, non_blocking=True) from pageable memory
        assert all(r["residency"] == "device" and r["shadow"] for r in records)

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
    assert captured.metadata["shadow"]["notes"] == [] and captured.metadata["shadow"]["device_tensors"] > 0

    noted = capture(resolve_target(f"{FIXTURES / 'shadow_patterns.py'}:noted", device="shadow-cuda"), tmp_path,
                    CaptureSettings(guard=False))  # a warm-up step and a recorded one
    notes = noted.metadata["shadow"]["notes"]
    assert sorted(note["kind"] for note in notes) == ["data-pointer", "mixed-devices"]
    assert all(note["file"] == "tests/shadow/fixtures/shadow_patterns.py" and note["count"] == 2 for note in notes)
    import synchunt
    from synchunt.attribute.summary import SHADOW_NOTE

    notes = synchunt.analyze(noted.path).notes
    assert any(line.startswith("shadow device could not follow data-pointer Tensor.data_ptr at tests/shadow/")
               for line in notes)
    assert not any(line.startswith("latent:") for line in notes)
    # the CPU run's caveat is not a shadow run's: its devices and branches are a GPU run's
    encoded = synchunt.analyze(captured.path)
    assert encoded.records and SHADOW_NOTE in encoded.notes
    assert not any(line.startswith("latent:") for line in encoded.notes)
    assert not any("PythonSubclass" in op for record in encoded.records for op in record.op_chain)
    assert not any("could not follow" in line for line in noted.notes)  # said once, by the analysis


HOST_ONLY = """
import torch


def step(device):
    lens = torch.arange(8)  # no device=: this code never uses the GPU it is offered
    return lens[lens > 2].sum().item()
"""


def test_a_target_that_puts_nothing_on_the_shadow_device_is_told_so(tmp_path: Path) -> None:
    import synchunt
    from synchunt.attribute.summary import UNUSED_SHADOW_NOTE
    from synchunt.cli.profile import guard_line

    (tmp_path / "host_only.py").write_text(HOST_ONLY)
    captured = capture(resolve_target(f"{tmp_path / 'host_only.py'}:step", device="shadow-cuda"), tmp_path / "out")
    assert captured.metadata["shadow"]["device_tensors"] == 0
    analysis = synchunt.analyze(captured.path)
    assert analysis.records == () and UNUSED_SHADOW_NOTE in analysis.notes
    # the guard saw two ops on host data: recorded, not counted, as the analysis does
    assert guard_line(captured.metadata["guard"]).startswith("guard: 0 syncs at 0 lines over 1 step")
    assert "2 ops on host-resident data left out" in guard_line(captured.metadata["guard"])

    used = capture(resolve_target(f"{FIXTURES / 'shadow_patterns.py'}:encode", device="shadow-cuda"),
                   tmp_path / "used", CaptureSettings(guard=False))
    assert UNUSED_SHADOW_NOTE not in synchunt.analyze(used.path).notes


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
        assert by_rule["SH203"] == 0  # host_indices.to(device, non_blocking=True): staged, not a D2H wait
        assert all(r["residency"] == "device" and r["shadow"] for r in records)


@pytest.mark.parametrize(("impl", "dcp_size", "mask_reads"), [("masked", 8, 8), ("sliced", 8, 0), ("masked", 1, 0)])
def test_hicache_guard_under_the_shadow_device(impl: str, dcp_size: int, mask_reads: int) -> None:
    """The small preset (4 layers): two mask reads per layer with DCP, none in the fix or without DCP; the pageable
    copy of the host indices to the device is staged (no wait); the pinned host pool's copies are not syncs."""
    from synchunt.capture import get_workload
    from synchunt.guard import watch
    from synchunt.shadow import shadow_device

    workload = get_workload("hicache-dcp")
    with shadow_device() as shadow:
        state = workload.setup(workload.make_params({"impl": impl, "dcp_size": dcp_size, "device": "cuda"},
                                                    small=True))
        assert state.host_pool.kv_buffer.is_pinned() and state.device_pool.kv_buffer[0].is_cuda
        with watch() as guard:
            workload.step(state)
    assert Counter(r.rule for r in guard.violations) == Counter({"SH101": mask_reads}) - Counter()
    assert all(r.residency == "device" for r in guard.syncs) and shadow.notes == ()


def test_catalogued_library_ops_are_known_without_the_guard() -> None:
    """The recorded pass runs without the guard's reporter: a library op the catalogue describes (nms) is still
    followed, so it is not noted as unfollowed in the pass whose guard twin reports it."""
    from synchunt.shadow import state

    state.set_reporter(None)
    assert state.knows("torchvision::nms") and not state.knows("mylib::gather")

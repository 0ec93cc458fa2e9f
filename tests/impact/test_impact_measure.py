"""measure() on hand-written traces: what each sync waited for, its stall, and the idle charged to it."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from impact_fixtures import OTHER, KinetoTrace

from synchunt.detect import detect
from synchunt.impact import SyncImpact, measure
from synchunt.impact.measure import CHARGED, DEVICE_BUSY, EARLY_LAUNCH, NO_NEXT, OTHER_THREAD
from synchunt.trace import load_trace


def _measure(trace: KinetoTrace, tmp_path: Path) -> tuple[list, tuple[SyncImpact, ...]]:
    loaded = load_trace(trace.write(tmp_path / "t.pt.trace.json.gz"))
    detection = detect(loaded)
    return list(detection.records), measure(loaded, detection)


def _waits_for_one_kernel() -> KinetoTrace:
    """Kernel A (20–120) runs while ``.item()`` (called at 31) waits; its copy runs 121–123; the sync returns at
    130; the blocked thread launches kernel B at 200, which starts at 210."""
    trace = KinetoTrace()
    trace.kernel("done_before", 0, 2, 5)  # ended before the sync was called: not waited for
    trace.kernel("A", 10, 20, 100)
    trace.item(30, copy_start=121, returned=130)
    trace.kernel("B", 200, 210, 10)
    return trace


def test_sync_waits_for_the_kernel_in_flight_and_its_own_copy(tmp_path):
    records, (impact,) = _measure(_waits_for_one_kernel(), tmp_path)
    assert records[0].rule == "SH109"
    assert impact.scope == "stream" and impact.called_us == 31 and impact.returned_us == 130
    assert impact.host_stall_us == 3 + 95  # cudaMemcpyAsync (3 µs) + cudaStreamSynchronize (35–130)
    assert [(a.name, a.start_us, a.dur_us, a.device, a.stream) for a in impact.waited_on] == [
        ("A", 20, 100, 0, 7), ("Memcpy DtoH (Device -> Pageable)", 121, 2, 0, 7)]
    assert [a.issued_by_sync for a in impact.waited_on] == [False, True]
    assert impact.waited_on_count == 2 and impact.waited_on_us == 102


def test_idle_until_the_blocked_threads_next_kernel_is_charged(tmp_path):
    _, (impact,) = _measure(_waits_for_one_kernel(), tmp_path)
    (gap,) = impact.idle
    assert (gap.device, gap.start_us, gap.end_us, gap.idle_us, gap.charged) == (0, 123, 210, 87, True)
    assert gap.reason == CHARGED and gap.next_activity is not None and gap.next_activity.name == "B"
    assert impact.device_idle_us == 87


def test_idle_ended_by_another_threads_launch_is_not_charged(tmp_path):
    trace = _waits_for_one_kernel()
    trace.kernel("C", 140, 150, 20, tid=OTHER, stream=8)
    _, (impact,) = _measure(trace, tmp_path)
    (gap,) = impact.idle
    assert (gap.start_us, gap.end_us, gap.idle_us, gap.charged, gap.reason) == (123, 150, 0, False, OTHER_THREAD)
    assert gap.next_activity.name == "C"
    assert impact.device_idle_us == 0


def test_no_idle_while_another_stream_keeps_the_device_busy(tmp_path):
    trace = _waits_for_one_kernel()
    trace.kernel("D", 5, 100, 100, tid=OTHER, stream=8)  # 100–200 covers the copy's end at 123
    _, (impact,) = _measure(trace, tmp_path)
    (gap,) = impact.idle
    assert (gap.idle_us, gap.charged, gap.reason, gap.end_us) == (0, False, DEVICE_BUSY, None)
    assert [a.name for a in impact.waited_on] == ["A", "Memcpy DtoH (Device -> Pageable)"]  # stream 8 not waited


def test_next_activity_launched_before_the_sync_is_not_charged(tmp_path):
    trace = _waits_for_one_kernel()
    trace.kernel("E", 12, 160, 5, stream=8)  # queued before the sync, started after (an event wait)
    _, (impact,) = _measure(trace, tmp_path)
    (gap,) = impact.idle
    assert (gap.end_us, gap.idle_us, gap.reason) == (160, 0, EARLY_LAUNCH)


def test_no_later_activity_means_no_charge(tmp_path):
    trace = KinetoTrace()
    trace.kernel("A", 10, 20, 100)
    trace.item(30, copy_start=121, returned=130)
    _, (impact,) = _measure(trace, tmp_path)
    (gap,) = impact.idle
    assert (gap.start_us, gap.end_us, gap.idle_us, gap.reason) == (123, None, 0, NO_NEXT)


def test_device_synchronize_waits_on_the_current_device_only(tmp_path):
    trace = KinetoTrace()
    trace.kernel("A0", 10, 20, 100, device=0)
    trace.kernel("A1", 14, 24, 150, device=1)  # the thread's last launch: device 1 is current
    trace.runtime("cudaDeviceSynchronize", 40, 140)  # returns at 180
    trace.kernel("B0", 200, 210, 5, device=0)
    trace.kernel("B1", 205, 215, 5, device=1)
    records, (impact,) = _measure(trace, tmp_path)
    assert records[0].rule == "SH301" and impact.scope == "device"
    assert [(a.name, a.device) for a in impact.waited_on] == [("A1", 1)]
    (gap,) = impact.idle
    assert (gap.device, gap.start_us, gap.end_us, gap.idle_us) == (1, 174, 215, 41)


def test_context_sync_record_names_the_device(tmp_path):
    trace = KinetoTrace()
    trace.kernel("A0", 10, 20, 100, device=0)
    trace.kernel("A1", 14, 24, 150, device=1)
    corr = trace.runtime("cudaDeviceSynchronize", 40, 140)
    trace.events.append({"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 0, "tid": -1, "ts": 41,
                         "dur": 138, "args": {"correlation": corr, "cuda_sync_kind": "Context Sync", "stream": -1}})
    trace.kernel("B0", 200, 210, 5, device=0)
    _, (impact,) = _measure(trace, tmp_path)
    assert [(a.name, a.device) for a in impact.waited_on] == [("A0", 0)]
    assert [(g.device, g.idle_us) for g in impact.idle] == [(0, 90)]


def test_syncs_on_two_devices_are_charged_on_their_own_device(tmp_path):
    trace = KinetoTrace()
    trace.kernel("A0", 10, 20, 100, device=0)
    trace.item(30, copy_start=121, returned=130, device=0)
    trace.kernel("A1", 140, 150, 50, device=1)
    trace.item(145, copy_start=201, returned=210, device=1)
    trace.kernel("B0", 220, 230, 5, device=0)
    trace.kernel("B1", 225, 235, 5, device=1)
    _, (first, second) = _measure(trace, tmp_path)
    assert [(g.device, g.start_us, g.end_us, g.idle_us) for g in first.idle] == [(0, 123, 230, 107)]
    assert [(g.device, g.start_us, g.end_us, g.idle_us) for g in second.idle] == [(1, 203, 235, 32)]
    assert [a.name for a in second.waited_on] == ["A1", "Memcpy DtoH (Device -> Pageable)"]


def test_latent_sync_has_only_its_host_stall(tmp_path):
    trace = KinetoTrace()
    trace.op("aten::item", 10, 40)
    trace.op("aten::_local_scalar_dense", 11, 38)
    records, (impact,) = _measure(trace, tmp_path)
    assert not records[0].confirmed
    assert impact == SyncImpact(host_stall_us=38.0)  # the innermost op's CPU time
    assert impact.device_idle_us is None and impact.waited_on_us is None and impact.idle == ()


def test_impacts_are_strict_json(tmp_path):
    trace = _waits_for_one_kernel()
    trace.item(300, copy_start=301, returned=310)
    _, impacts = _measure(trace, tmp_path)
    text = msgspec.json.encode(impacts).decode()
    assert "NaN" not in text and "Infinity" not in text
    assert msgspec.json.decode(text, type=tuple[SyncImpact, ...]) == impacts


def test_no_syncs_no_impacts(tmp_path):
    trace = KinetoTrace()
    trace.kernel("A", 10, 20, 100)
    assert _measure(trace, tmp_path) == ([], ())


@pytest.mark.parametrize("waited", [40])
def test_waited_on_keeps_the_last_activities_and_counts_all(tmp_path, waited):
    from synchunt.impact import MAX_WAITED_ON

    trace = KinetoTrace()
    for k in range(waited):
        trace.kernel(f"K{k}", 1 + k * 0.01, 50 + 10 * k, 10)
    trace.runtime("cudaDeviceSynchronize", 40, 500)
    _, (impact,) = _measure(trace, tmp_path)
    assert impact.waited_on_count == waited and impact.waited_on_us == 10 * waited
    assert [a.name for a in impact.waited_on] == [f"K{k}" for k in range(waited - MAX_WAITED_ON, waited)]

"""HTA as an input and as a cross-check: synchunt's figures from HTA's parse, and against HTA's idle breakdown."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from impact_fixtures import OTHER, KinetoTrace
from shared_traces import shared_trace_path

from synchunt.annotate import annotate_trace
from synchunt.detect import detect
from synchunt.errors import TraceError
from synchunt.impact import measure
from synchunt.impact.hta_check import LONGER_IN_HTA, SAME_GAP, cross_check
from synchunt.trace import load_trace
from synchunt.trace.from_hta import load_hta, trace_from_hta

os.environ.setdefault("HTA_DISABLE_NS_ROUNDING", "1")
pytest.importorskip("hta.trace_analysis", reason="HTA (traceinsight, the 'hta' extra) is not installed")
pytestmark = pytest.mark.filterwarnings("ignore::Warning:hta")  # HTA's own pandas deprecations

SMALL_REAL = ["hta/critical_path/cuda_event_sync/event_sync_trace.json.gz",
              "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
              "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
              "real/tracelens/gaunernst_bert-small-uncased__1016001.json.gz"]


def _shared(relative: str) -> Path:
    return shared_trace_path(relative)


def _summary(trace):
    detection = detect(trace)
    impacts = measure(trace, detection)
    return ([(r.rule, r.op, r.runtime, r.ts_us, r.stall_us) for r in detection.records],
            [(i.device_idle_us, [a.name for a in i.waited_on], [(g.start_us, g.end_us) for g in i.idle])
             for i in impacts])


@pytest.mark.parametrize("relative", SMALL_REAL)
def test_trace_from_hta_finds_the_same_syncs_and_impacts(relative):
    path = _shared(relative)
    via_hta = trace_from_hta(load_hta(path))
    assert via_hta.path == path.resolve()
    assert _summary(via_hta) == _summary(load_trace(path))


def test_trace_from_one_ranks_dataframe_and_symbols():
    path = _shared(SMALL_REAL[0])
    analysis = load_hta(path)
    frame = analysis.t.get_trace(0)
    trace = trace_from_hta(frame, symbols=analysis.t.symbol_table, min_ts=analysis.t.min_ts, rank=0)
    assert _summary(trace) == _summary(load_trace(path))
    assert trace.rank == 0


def test_bad_hta_inputs_are_trace_errors():
    with pytest.raises(TraceError, match="not an HTA"):
        trace_from_hta(42)
    analysis = load_hta(_shared(SMALL_REAL[0]))
    with pytest.raises(TraceError, match="symbol table"):
        trace_from_hta(analysis.t.get_trace(0))
    with pytest.raises(TraceError, match="no rank 3"):
        trace_from_hta(analysis, rank=3)


@pytest.mark.parametrize("relative", SMALL_REAL)
def test_every_charged_gap_is_one_of_htas_host_wait_gaps(relative):
    path = _shared(relative)
    trace = load_trace(path)
    detection = detect(trace)
    check = cross_check(load_hta(path), measure(trace, detection))
    assert check.agree, [g for g in check.gaps if g.verdict not in (SAME_GAP, LONGER_IN_HTA)]
    assert all(s.replica_agrees for s in check.streams)
    assert check.synchunt_idle_us <= check.hta_host_wait_us


def test_event_sync_trace_against_htas_figures():
    path = _shared(SMALL_REAL[0])
    trace = load_trace(path)
    check = cross_check(load_hta(path), measure(trace, detect(trace)))
    # HTA's host wait on stream 7: 48 + 30 + 34 + 100 µs before sum, gt, the D2H copy and spin_kernel; synchunt
    # charges the last gap to the is_nonzero sync and none of the others (no sync before them).
    (stream,) = check.streams
    assert (stream.stream, stream.hta_host_wait_us, stream.synchunt_idle_us) == (7, 212, 100)
    assert [(g.synchunt_idle_us, g.hta_idle_us, g.hta_category, g.verdict) for g in check.gaps] == [
        (100, 100, "host_wait", SAME_GAP)]


def test_htas_gap_is_longer_when_the_waited_on_work_ran_on_another_stream(tmp_path):
    trace = KinetoTrace()
    trace.kernel("side", 2, 40, 10, stream=8)  # stream 8 idles from 50
    trace.kernel("A", 10, 20, 100)
    trace.item(30, copy_start=121, returned=130)  # waited on stream 7 until 123
    trace.kernel("B", 200, 210, 10, stream=8)
    trace.kernel("C", 140, 250, 5, tid=OTHER, stream=9)
    path = trace.write(tmp_path / "streams.pt.trace.json.gz")
    loaded = load_trace(path)
    impacts = measure(loaded, detect(loaded))
    assert impacts[0].device_idle_us == 87
    check = cross_check(load_hta(path), impacts)
    assert [(g.stream, g.synchunt_idle_us, g.hta_idle_us, g.verdict) for g in check.gaps] == [
        (8, 87, 160, LONGER_IN_HTA)]
    assert check.agree


def test_hta_loads_the_annotated_trace(tmp_path):
    path = _shared(SMALL_REAL[1])
    out, _ = annotate_trace(path, tmp_path / "annotated.pt.trace.json.gz")
    original, annotated = load_hta(path), load_hta(out)
    assert len(annotated.t.get_trace(0)) == len(original.t.get_trace(0))
    assert _summary(trace_from_hta(annotated)) == _summary(load_trace(path))
    before = original.get_idle_time_breakdown(visualize=False)[0]
    after = annotated.get_idle_time_breakdown(visualize=False)[0]
    assert after.equals(before)


def test_hta_is_not_imported_by_synchunt():
    code = ("import sys, synchunt, synchunt.impact, synchunt.impact.hta_check, synchunt.trace.from_hta, "
            "synchunt.annotate, synchunt.cli; assert 'hta' not in sys.modules, 'hta imported'")
    subprocess.run([sys.executable, "-c", code], check=True)

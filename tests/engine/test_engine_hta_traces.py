"""Detection and attribution on real GPU traces written by others (HTA's test data)."""

from __future__ import annotations

import pytest

import synchunt
from synchunt.detect import detect

EVENT_SYNC = "critical_path/cuda_event_sync/event_sync_trace.json.gz"
MULTI_STREAM = "critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz"
ALEXNET = "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
AMD = "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
NON_GPU = "rank_non_gpu/rank_non_gpu.json.gz"


def test_event_sync_trace_has_three_confirmed_syncs(hta_traces):
    result = synchunt.analyze(hta_traces / EVENT_SYNC)
    syncs = result.syncs
    assert result.summary["confirmed"] == 3 and result.summary["latent"] == 0
    stream = syncs[syncs["runtime"].str.contains("cudaStreamSynchronize")].iloc[0]
    assert stream["op"] == "aten::_local_scalar_dense"
    assert stream["op_chain"] == ["aten::is_nonzero", "aten::item", "aten::_local_scalar_dense"]
    assert stream["rule"] == "SH110" and stream["direction"] == "DtoH"
    assert sorted(syncs["rule"]) == ["SH110", "SH301", "SH302"]
    assert not syncs["runtime"].str.contains("cudaEventQuery").any()
    assert (syncs["stall_us"] > 0).all()
    assert stream["waited_on"] and "stream 7" in stream["waited_on"]


def test_multi_stream_trace_counts_only_the_device_sync(hta_traces):
    syncs = synchunt.analyze(hta_traces / MULTI_STREAM).syncs
    assert list(syncs["rule"]) == ["SH301"]
    assert list(syncs["runtime"]) == ["cudaDeviceSynchronize"]


def test_alexnet_blocking_pageable_copies_device_syncs_and_frees(hta_traces):
    syncs = synchunt.analyze(hta_traces / ALEXNET).syncs
    assert len(syncs) == 36
    copies = syncs[syncs["rule"] == "SH202"]
    assert len(copies) == 16
    assert (copies["direction"] == "HtoD").all()
    assert all(chain[:1] == ["aten::to"] and chain[-1] == "aten::copy_" for chain in copies["op_chain"])
    # H2D from pageable memory is staged without a device wait; the stream sync after it is the stall.
    assert (copies["runtime"] == "cudaStreamSynchronize").all()
    assert (syncs["rule"] == "SH301").sum() == 5
    # The caching allocator returns memory with cudaFree, which synchronizes the device: 15 host stalls, one of
    # them 6 s under cudnn_convolution (a workspace allocation retried after freeing the cache).
    frees = syncs[syncs["rule"] == "SH304"]
    assert len(frees) == 15 and (frees["runtime"] == "cudaFree").all()
    assert frees["stall_us"].max() == 6008692.0


def test_amd_trace_hip_calls(hta_traces):
    trace = synchunt.load_trace(hta_traces / AMD)
    detection = detect(trace)
    syncs = synchunt.analyze(trace).syncs
    assert len(syncs) == 2
    assert sorted(syncs["runtime"]) == ["hipMemcpyWithStream", "hipMemcpyWithStream"]
    # The final hipDeviceSynchronize, under no op after the last ProfilerStep, is the profiler's own.
    assert [s.runtime for s in detection.set_aside] == ["hipDeviceSynchronize"]
    copies = syncs[syncs["runtime"] == "hipMemcpyWithStream"]
    assert (copies["rule"] == "SH202").all() and (copies["op"] == "aten::copy_").all()


def test_cpu_only_slice_has_no_confirmed_but_five_latent_item_syncs(hta_traces):
    trace = synchunt.load_trace(hta_traces / NON_GPU)
    assert not trace.device_activity
    assert len(detect(trace, "confirmed").syncs) == 0
    result = synchunt.analyze(trace)
    assert result.summary == {**result.summary, "syncs": 5, "confirmed": 0, "latent": 5}
    assert all("aten::item" in chain for chain in result.syncs["op_chain"])
    assert (result.syncs["rule"] == "SH109").all()
    assert (result.syncs["stall_source"] == "op cpu time (latent)").all()


@pytest.mark.parametrize("path", [EVENT_SYNC, ALEXNET, AMD])
def test_latent_mode_on_gpu_trace_reports_catalogue_ops_regardless_of_device(hta_traces, path):
    latent = synchunt.analyze(hta_traces / path, mode="latent").syncs
    assert (~latent["confirmed"]).all()


def test_analysis_json_round_trip(hta_traces):
    result = synchunt.analyze(hta_traces / ALEXNET)
    data = result.to_json()
    assert data["schema"] == "synchunt.analysis/3"
    assert data["traces"][0]["device_activity"] is True and data["traces"][0]["mode"] == "confirmed"
    assert data["traces"][0]["rank"] == 0
    first = data["syncs"][0]
    for key in ("rule", "kind", "confirmed", "op", "op_chain", "runtime", "thread", "ts_us", "stall_us",
                "call_site", "stack", "scope", "rank", "trace"):
        assert key in first
    assert set(first["thread"]) >= {"tid", "name"} and first["call_site"] is None  # no Python frames in this trace
    again = synchunt.Analysis.from_json(data)
    assert again.summary == result.summary
    assert again.to_json()["call_sites"] == data["call_sites"]

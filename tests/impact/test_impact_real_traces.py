"""Waited-on work and idle figures on real GPU traces written by others, each checked by reading the events.

Every expected value below was read off the raw events (the blocking calls, the activities on the synced
stream, the next activity and the runtime call that launched it); the comment says which.
"""

from __future__ import annotations

import pytest
from shared_traces import shared_trace_path

from synchunt.detect import detect
from synchunt.impact import measure
from synchunt.impact.measure import CHARGED, NO_NEXT
from synchunt.trace import load_trace


def _load(relative: str):
    trace = load_trace(shared_trace_path(relative))
    detection = detect(trace)
    return trace, detection.records, measure(trace, detection)


def test_hta_event_sync_trace():
    _, records, impacts = _load("hta/critical_path/cuda_event_sync/event_sync_trace.json.gz")
    item, event, device = impacts
    assert [r.rule for r in records] == ["SH110", "SH302", "SH301"]
    # is_nonzero › item: cudaMemcpyAsync 512252 (29 µs) + cudaStreamSynchronize 512282 (6 µs); its 1-byte copy
    # ran 512270–512272 on stream 7; spin_kernel, launched by the same thread at 512362, starts at 512372.
    assert item.host_stall_us == 35 and item.returned_us == 1707417525512288
    assert [(a.name, a.start_us, a.dur_us, a.issued_by_sync) for a in item.waited_on] == [
        ("Memcpy DtoH (Device -> Pageable)", 1707417525512270, 2, True)]
    (gap,) = item.idle
    assert (gap.start_us, gap.end_us, gap.idle_us, gap.reason) == (1707417525512272, 1707417525512372, 100, CHARGED)
    assert gap.next_activity.name == "at::cuda::(anonymous namespace)::spin_kernel(long)"
    # cudaEventSynchronize 512382–512416 waited for spin_kernel (512372, 36 µs; `wait_on_stream: 7`); nothing ran
    # on the device after it.
    assert event.scope == "event" and event.host_stall_us == 34
    assert [(a.name, a.dur_us) for a in event.waited_on] == [("at::cuda::(anonymous namespace)::spin_kernel(long)", 36)]
    assert [(g.start_us, g.reason, g.idle_us) for g in event.idle] == [(1707417525512408, NO_NEXT, 0)]
    # cudaDeviceSynchronize at 512474: the device had finished everything 66 µs earlier.
    assert device.scope == "device" and device.waited_on == () and device.idle == () and device.device_idle_us == 0


def test_tracelens_bert_small_mask_check():
    _, records, impacts = _load("real/tracelens/gaunernst_bert-small-uncased__1016001.json.gz")
    assert [r.rule for r in records] == ["SH301", "SH110"]
    item = impacts[1]
    # cudaStreamSynchronize 775.395 (7.64 µs) after a pinned D2H cudaMemcpyAsync (corr 8331): the copy ran
    # 776.832–779.072 on stream 7; reduce_kernel had ended at 750.112 (before the call: not waited for); the next
    # device activity is the cutlass GEMM at 932.927, launched by cuLaunchKernel on the same thread at 923.777.
    assert item.host_stall_us == pytest.approx(7.64)
    assert [a.name for a in item.waited_on] == ["Memcpy DtoH (Device -> Pinned)"]
    assert item.waited_on[0].start_us == pytest.approx(1419247333776.832)
    (gap,) = item.idle
    assert gap.charged and gap.idle_us == pytest.approx(1419247333932.927 - 1419247333779.072, abs=1e-6)
    assert gap.next_activity.name.startswith("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm")
    assert impacts[0].waited_on == () and impacts[0].device_idle_us == 0


def test_hta_rocm_trace_blocking_copies():
    _, records, impacts = _load("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    assert [r.runtime for r in records] == ["hipMemcpyWithStream", "hipMemcpyWithStream"]
    # hipMemcpyWithStream 603438.301 (60.204 µs, stream "0x0"): its H2D copy ran 603454.206 + 22.441 µs on
    # device 2; the next kernel, launched by hipLaunchKernel on the same thread at 603752.847, starts 603771.648.
    first, second = impacts
    assert [(a.name, a.device, a.stream) for a in first.waited_on] == [("Memcpy HtoD (Host -> Device)", 2, 0)]
    assert first.waited_on[0].issued_by_sync
    assert first.idle[0].idle_us == pytest.approx(4203669603771.648 - 4203669603476.647, abs=1e-6)
    assert first.device_idle_us == pytest.approx(295.001, abs=1e-3)
    # the second copy ran 604095.010 + 15.720 µs; the next kernel starts at 604296.131.
    assert second.device_idle_us == pytest.approx(185.401, abs=1e-3)


def test_hta_alexnet_pageable_copies():
    _, records, impacts = _load("hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz")
    # aten::to › … › copy_: the pageable H2D copy 943613 (12 µs) was still running when cudaStreamSynchronize
    # was called at 943621; the next activity is the next H2D copy at 943889 (cudaMemcpyAsync at 943871, same
    # thread, after the sync returned at 943632).
    first = impacts[0]
    assert records[0].rule == "SH202" and first.host_stall_us == 11
    assert [(a.name, a.start_us, a.dur_us) for a in first.waited_on] == [
        ("Memcpy HtoD (Pageable -> Device)", 1695835572943613, 12)]
    assert [(g.start_us, g.end_us, g.idle_us) for g in first.idle] == [
        (1695835572943625, 1695835572943889, 264)]
    assert impacts[1].device_idle_us == 9153  # 943890 → 953043: the next copy waited for the host
    assert sum(i.device_idle_us for i in impacts) == 24497


def test_kineto_legacy_trace():
    _, _, impacts = _load("real/kineto/worker0.1623143089861.pt.trace.json.gz")
    # the second copy: cudaStreamSynchronize 531267 (7 µs), its H2D copy 531271 (1 µs) on "stream 7"; the next
    # kernel is cask_cudnn::computeOffsetsKernel at 531625 (cudaLaunchKernel 531598, same thread).
    second = impacts[1]
    assert [(a.name, a.stream) for a in second.waited_on] == [("Memcpy HtoD (Pageable -> Device)", 7)]
    assert [(g.start_us, g.end_us, g.idle_us) for g in second.idle] == [(1623142623531272, 1623142623531625, 353)]
    assert second.idle[0].next_activity.name == "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)"


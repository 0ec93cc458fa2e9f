"""The guard's CUDA-only signals: device syncs are real (not latent), explicit synchronize calls, pageable
``non_blocking`` copies, and torch's sync debug mode as a second signal, restored afterwards."""

from __future__ import annotations

import threading

import pytest
import torch

from synchunt.guard import watch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _rules(snippet: object) -> list[tuple[str, str, bool]]:
    with watch() as recorder:
        snippet()
    return [(record.rule, record.op, record.latent) for record in recorder.syncs]


def test_mask_read_on_the_device_is_one_real_sync() -> None:
    x = torch.arange(64, device="cuda")
    assert _rules(lambda: x[x % 8 == 0]) == [("SH101", "aten::index", False)]


def test_a_host_index_into_a_device_tensor_is_a_blocking_copy_not_a_mask_read() -> None:
    x = torch.arange(64, device="cuda")
    mask, positions = torch.arange(64) % 8 == 0, torch.tensor([1, 5])
    assert _rules(lambda: x[mask]) == [("SH202", "aten::index", False)]  # the host count, then a copy
    assert _rules(lambda: x[positions]) == [("SH202", "aten::index", False)]
    assert _rules(lambda: x[positions.cuda()]) == []


def x_mask_fill(value: torch.Tensor) -> torch.Tensor:
    x = torch.zeros(8, device="cuda")
    x[x == 0] = value
    return x


def test_scalar_reads_and_truthiness() -> None:
    t = torch.ones((), device="cuda")
    assert _rules(lambda: t.item()) == [("SH109", "aten::item", False)]
    assert _rules(lambda: bool(t)) == [("SH110", "aten::is_nonzero", False)]
    assert _rules(lambda: x_mask_fill(t)) == [("SH102", "aten::index_put_", False)]  # device value: no fast path


def test_device_to_host_copies_are_reported_once() -> None:
    t = torch.arange(8, device="cuda")
    assert _rules(lambda: t.cpu()) == [("SH201", "Tensor.cpu", False)]
    assert _rules(lambda: t.tolist()) == [("SH201", "Tensor.tolist", False)]
    assert _rules(lambda: t.to("cpu")) == [("SH201", "aten::_to_copy", False)]
    assert _rules(lambda: t.to("cpu", non_blocking=True)) == []  # lands in pinned memory


def test_explicit_synchronize_calls() -> None:
    event = torch.cuda.Event()
    event.record()
    assert _rules(torch.cuda.synchronize) == [("SH301", "torch.cuda.synchronize", False)]
    assert _rules(event.synchronize) == [("SH302", "Event.synchronize", False)]
    assert _rules(lambda: torch.cuda.current_stream().synchronize()) == [
        ("SH303", "Stream.synchronize", False)]
    assert _rules(lambda: torch.cuda.current_stream().wait_event(event)) == []
    assert _rules(event.query) == []


def test_pageable_non_blocking_copies() -> None:
    pageable, pinned = torch.ones(1024), torch.ones(1024).pin_memory()
    device = torch.ones(1024, device="cuda")
    # host → device from pageable memory is staged by the driver: no wait for the device, not a D2H sync
    assert _rules(lambda: pageable.to("cuda", non_blocking=True)) == []
    assert _rules(lambda: pinned.to("cuda", non_blocking=True)) == []
    assert _rules(lambda: device.copy_(pageable, non_blocking=True)) == []
    # device → host into pageable memory waits; _to_copy pins the buffer it allocates
    assert _rules(lambda: pageable.copy_(device, non_blocking=True)) == [("SH203", "aten::copy_", False)]
    assert _rules(lambda: pinned.copy_(device, non_blocking=True)) == []
    assert _rules(lambda: device.to("cpu", non_blocking=True)) == []


def test_an_empty_host_to_device_copy_is_no_sync() -> None:
    assert _rules(lambda: torch.tensor([], device="cuda")) == []
    assert [rule for rule, _, _ in _rules(lambda: torch.tensor([1], device="cuda"))] == ["SH202"]


def test_sync_debug_mode_and_patches_are_restored() -> None:
    before = torch.cuda.get_sync_debug_mode()
    original = torch.cuda.synchronize
    with watch():
        assert torch.cuda.get_sync_debug_mode() == (before if before == 2 else 1)
    assert torch.cuda.get_sync_debug_mode() == before
    assert torch.cuda.synchronize is original


def test_other_threads_keep_running_while_the_debug_mode_is_on() -> None:
    t = torch.ones((), device="cuda")
    outcome: dict[str, object] = {}

    def worker() -> None:
        outcome["values"] = [t.item() for _ in range(20)]

    with watch() as recorder:
        thread = threading.Thread(target=worker, name="worker")
        thread.start()
        thread.join()
    assert outcome["values"] == [1.0] * 20
    assert recorder.syncs == []

"""The guard's CUDA cases (``tests/guard/test_guard_cuda.py``), run under the shadow device: the same rules and ops
at the same lines, every one device-resident (and latent: emulated, nothing synced)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from synchunt.guard import watch
from synchunt.shadow import shadow_device


@pytest.fixture(autouse=True)
def _shadow():
    with shadow_device():
        yield


def _rules(snippet: Callable[[], object]) -> list[tuple[str, str, str]]:
    with watch() as recorder:
        snippet()
    assert all(record.shadow and record.latent for record in recorder.syncs)
    return [(record.rule, record.op, record.residency) for record in recorder.syncs]


def test_mask_read_on_the_device_is_one_sync() -> None:
    x = torch.arange(64, device="cuda")
    assert _rules(lambda: x[x % 8 == 0]) == [("SH101", "aten::index", "device")]


def test_a_host_index_into_a_device_tensor_is_a_blocking_copy_not_a_mask_read() -> None:
    x = torch.arange(64, device="cuda")
    mask, positions = torch.arange(64) % 8 == 0, torch.tensor([1, 5])
    assert _rules(lambda: x[mask]) == [("SH202", "aten::index", "device")]
    assert _rules(lambda: x[positions]) == [("SH202", "aten::index", "device")]
    on_device = positions.cuda()
    assert _rules(lambda: x[on_device]) == []


def x_mask_fill(value: torch.Tensor) -> torch.Tensor:
    x = torch.zeros(8, device="cuda")
    x[x == 0] = value
    return x


def test_scalar_reads_and_truthiness() -> None:
    t = torch.ones((), device="cuda")
    assert _rules(lambda: t.item()) == [("SH109", "aten::item", "device")]
    assert _rules(lambda: bool(t)) == [("SH110", "aten::is_nonzero", "device")]
    assert _rules(lambda: x_mask_fill(t)) == [("SH102", "aten::index_put_", "device")]  # device value: no fast path
    assert _rules(lambda: x_mask_fill(torch.tensor(2.0))) == []  # a host scalar: ATen's masked-fill fast path


def test_device_to_host_copies_are_reported_once() -> None:
    t = torch.arange(8, device="cuda")
    assert _rules(lambda: t.cpu()) == [("SH201", "Tensor.cpu", "device")]
    assert _rules(lambda: t.tolist()) == [("SH201", "Tensor.tolist", "device")]
    assert _rules(lambda: t.to("cpu")) == [("SH201", "aten::_to_copy", "device")]
    assert _rules(lambda: t.to("cpu", non_blocking=True)) == []  # lands in pinned memory
    host_buffer = torch.empty(8, dtype=torch.int64)
    assert _rules(lambda: host_buffer.copy_(t)) == [("SH205", "aten::copy_", "device")]


def test_host_to_device_copies() -> None:
    host = torch.ones(4)
    assert _rules(lambda: host.cuda()) == [("SH202", "aten::_to_copy", "device")]
    assert _rules(lambda: torch.tensor([1, 2], device="cuda")) == [("SH202", "aten::_to_copy", "device")]
    device = torch.empty(4, device="cuda")
    assert _rules(lambda: device.copy_(host)) == [("SH202", "aten::copy_", "device")]


def test_copies_of_no_elements_transfer_nothing() -> None:
    """ATen's copy returns before any transfer when there is nothing to copy: no wait on a GPU (transformers'
    cache makes ``torch.tensor([], device=...)`` per layer)."""
    assert _rules(lambda: torch.tensor([], device="cuda")) == []
    assert _rules(lambda: torch.ones(0, 3).to("cuda")) == []
    assert _rules(lambda: torch.ones(0).to("cuda", non_blocking=True)) == []  # pageable, but nothing to stage
    empty = torch.empty(0, 3, device="cuda")
    assert _rules(lambda: empty.copy_(torch.ones(0, 3))) == []
    assert _rules(lambda: torch.tensor([0], device="cuda")) == [("SH202", "aten::_to_copy", "device")]


def test_explicit_synchronize_calls() -> None:
    event = torch.cuda.Event()
    event.record()
    assert _rules(torch.cuda.synchronize) == [("SH301", "torch.cuda.synchronize", "device")]
    assert _rules(torch.accelerator.synchronize) == [("SH301", "torch.accelerator.synchronize", "device")]
    assert _rules(event.synchronize) == [("SH302", "Event.synchronize", "device")]
    assert _rules(lambda: torch.cuda.current_stream().synchronize()) == [("SH303", "Stream.synchronize", "device")]
    assert _rules(lambda: torch.cuda.current_stream().wait_event(event)) == []
    assert _rules(event.query) == []


def test_pageable_non_blocking_copies() -> None:
    pageable, pinned = torch.ones(1024), torch.ones(1024).pin_memory()
    device = torch.ones(1024, device="cuda")
    assert _rules(lambda: pageable.to("cuda", non_blocking=True)) == []  # staged: no device-to-host wait
    assert _rules(lambda: pinned.to("cuda", non_blocking=True)) == []
    assert _rules(lambda: pageable.copy_(device, non_blocking=True)) == [("SH203", "aten::copy_", "device")]
    assert _rules(lambda: pinned.copy_(device, non_blocking=True)) == []


def test_host_only_work_is_host_resident() -> None:
    lengths = torch.tensor([3, 0, 2])
    assert _rules(lambda: lengths[lengths > 0]) == [("SH101", "aten::index", "host")]
    assert _rules(lambda: lengths.sum().item()) == [("SH109", "aten::item", "host")]
    assert _rules(lambda: lengths.tolist()) == [("SH201", "Tensor.tolist", "host")]

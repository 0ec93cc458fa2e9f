"""The guard's argument predicates on device tensors, checked without a GPU: fake CUDA tensors carry a device
and a shape but no data, which is all a predicate reads. (The kernels themselves run on CUDA only in
``test_guard_cuda.py``.)"""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

from synchunt.guard.call import OpCall
from synchunt.guard.classify import build_table, classify

MODE = FakeTensorMode()
ATEN = torch.ops.aten


def cuda(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return FakeTensor(MODE, torch.empty(shape, dtype=dtype, device="meta"), torch.device("cuda"))


def _rule(func: torch._ops.OpOverload, *args: object, **kwargs: object) -> str | None:
    return classify(OpCall(func, args, kwargs), build_table().get(func, ()))


def test_mask_reads_and_host_indices_into_device_tensors() -> None:
    x, device_mask, host_mask = cuda(8), cuda(8, dtype=torch.bool), torch.ones(8, dtype=torch.bool)
    assert _rule(ATEN.index.Tensor, x, [device_mask]) == "SH101"
    assert _rule(ATEN.index.Tensor, x, [host_mask]) == "SH202"  # counted on the host, then copied over
    assert _rule(ATEN.index.Tensor, x, [torch.tensor([1, 2])]) == "SH202"  # test_sync_warning: x[ind_cpu]
    assert _rule(ATEN.index.Tensor, x, [cuda(2, dtype=torch.long)]) is None
    assert _rule(ATEN.index.Tensor, torch.ones(8), [torch.tensor([1, 2])]) is None  # all host


def test_mask_writes_and_the_masked_fill_fast_path() -> None:
    x, mask = cuda(8), cuda(8, dtype=torch.bool)
    assert _rule(ATEN.index_put_.default, x, [mask], torch.tensor(1.0)) is None  # one host value: fast path
    assert _rule(ATEN.index_put_.default, x, [mask], cuda()) == "SH102"  # a device value: test_sync_warning
    assert _rule(ATEN.index_put_.default, x, [mask], cuda(8)) == "SH102"
    assert _rule(ATEN.index_put_.default, x, [torch.tensor([0, 3])], cuda()) == "SH202"  # host index


def test_copies_between_host_and_device() -> None:
    device, host = cuda(4), torch.ones(4)
    assert _rule(ATEN._to_copy.default, device, device="cpu") == "SH201"
    assert _rule(ATEN._to_copy.default, device, device="cpu", non_blocking=True) is None  # pinned result
    assert _rule(ATEN._to_copy.default, host, device="cuda") == "SH202"
    assert _rule(ATEN._to_copy.default, device, dtype=torch.float64) is None  # stays on the device
    assert _rule(ATEN.copy_.default, host, device) == "SH205"
    assert _rule(ATEN.copy_.default, device, host) == "SH202"
    assert _rule(ATEN.copy_.default, device, cuda(4)) is None


def test_an_empty_host_to_device_copy_is_no_sync() -> None:
    """transformers' ``torch.tensor([], device=...)``: copy_ returns before any memcpy when there is nothing to copy."""
    assert _rule(ATEN._to_copy.default, torch.ones(0), device="cuda") is None
    assert _rule(ATEN.copy_.default, cuda(0), torch.ones(0)) is None
    assert _rule(ATEN._to_copy.default, torch.ones(1), device="cuda") == "SH202"


def test_pageable_non_blocking_is_a_device_to_host_rule_only() -> None:
    device, pageable, destination = cuda(4), torch.ones(4), torch.empty(4)
    assert _rule(ATEN._to_copy.default, pageable, device="cuda", non_blocking=True) is None  # staged, no D2H
    assert _rule(ATEN.copy_.default, device, pageable, non_blocking=True) is None
    assert _rule(ATEN.copy_.default, destination, device, non_blocking=True) == "SH203"
    assert _rule(ATEN._to_copy.default, device, device="cpu", non_blocking=True) is None  # a pinned result


@pytest.mark.parametrize(("check_errors", "expected"), [(False, None), (True, "SH114")])
def test_linalg_ex_variants_check_only_when_asked(check_errors: bool, expected: str | None) -> None:
    assert _rule(ATEN.linalg_inv_ex.default, cuda(3, 3), check_errors=check_errors) == expected


def test_ctc_loss_lengths() -> None:
    log_probs, targets = cuda(6, 2, 5), cuda(2, 3, dtype=torch.long)
    lengths = cuda(2, dtype=torch.long)
    assert _rule(ATEN.ctc_loss.Tensor, log_probs, targets, lengths, lengths) == "SH201"
    assert _rule(ATEN.ctc_loss.IntList, log_probs, targets, [6, 6], [3, 2]) == "SH202"
    host_lengths = torch.tensor([6, 6]), torch.tensor([3, 2])  # read where they are, then copied to the device
    assert _rule(ATEN.ctc_loss.Tensor, log_probs, targets, *host_lengths) == "SH202"
    assert _rule(ATEN.ctc_loss.Tensor, log_probs, targets, host_lengths[0], cuda(2, dtype=torch.long)) == "SH201"
    all_host = torch.ones(6, 2, 5), torch.ones(2, 3, dtype=torch.long)  # host lengths stand for device ones
    assert _rule(ATEN.ctc_loss.Tensor, *all_host, *host_lengths) == "SH201"
    cudnn_targets = torch.tensor([1, 2, 3, 2, 3], dtype=torch.int32)  # cuDNN's kernel: no statement, no claim
    assert _rule(ATEN.ctc_loss.IntList, log_probs, cudnn_targets, [6, 6], [3, 2]) is None

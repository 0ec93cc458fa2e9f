# ruff: noqa
"""A tensor the same function copies to the device with `non_blocking=True` is a host tensor: nobody writes an
asynchronous copy of what is already there. It holds only for the binding the copy read, not for the device
copy bound over it, nor for a copy to the host, and the copy itself is no evidence about itself."""
import torch


def plan(qo_indptr: torch.Tensor, seq_lens: torch.Tensor, block_tables):
    device = block_tables.device
    cum = qo_indptr.to(device, non_blocking=True)
    lens = seq_lens.cuda(non_blocking=True)
    max_q = int((qo_indptr[1:] - qo_indptr[:-1]).max())
    empty = bool((seq_lens == 0).any())
    return cum, lens, max_q, empty


def moved_then_read(counts, device):
    counts = counts.to(device, non_blocking=True)
    return counts.item()  # expect: SH109 high


def copied_to_the_host(counts: torch.Tensor):
    staged = counts.to("cpu", non_blocking=True)  # expect: SH201 low
    return staged, int(counts.max())  # expect: SH109 medium


def a_dtype_is_not_a_device(counts: torch.Tensor):
    wide = counts.to(torch.int64, non_blocking=True)
    return wide, int(counts.max())  # expect: SH109 medium


def rebound_elsewhere(seq_lens: torch.Tensor, device, other: torch.Tensor):
    uploaded = seq_lens.to(device, non_blocking=True)
    seq_lens = torch.empty_like(other)
    return uploaded, int(seq_lens.max())  # expect: SH109 medium


def to_a_host_device(counts: torch.Tensor):
    staged = counts.to(torch.device("cpu"), non_blocking=True)  # expect: SH201 low
    return staged, int(counts.max())  # expect: SH109 medium


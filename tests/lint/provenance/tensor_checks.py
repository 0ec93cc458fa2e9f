# ruff: noqa
"""`isinstance(x, torch.Tensor)` says x is a tensor in its body and not one in its `else`, or below it when the
body returns (an `if` among the function's own statements); `not isinstance(...)` says the reverse. An offset
that is not a tensor is a Python number. A subclass check (`DTensor`) says nothing when it fails."""
import torch


def apply_rotary(x: torch.Tensor, seqlen_offsets: "torch.Tensor", seqlen: int, seqlen_ro: int):
    if isinstance(seqlen_offsets, torch.Tensor):
        assert seqlen_offsets.shape == (x.shape[0],)
        assert bool((seqlen_offsets + seqlen <= seqlen_ro).all())  # expect: SH110 medium
    else:
        assert seqlen_offsets + seqlen <= seqlen_ro
    return x


def lengths(lens):
    if not isinstance(lens, torch.Tensor):
        return max(lens) if lens else 0
    return int(lens.max())  # expect: SH109 medium


def offsets(offset, limit: int):
    if isinstance(offset, torch.Tensor):
        return offset.clamp(max=limit)
    if offset > limit:
        return limit
    return offset


def sharded(x: torch.Tensor):
    if isinstance(x, DTensor):  # a plain tensor fails this too: the else says nothing
        return x.full_tensor()
    else:
        return x.sum().item()  # expect: SH109 medium


def nested(x: torch.Tensor, flag: bool):
    if flag:
        if isinstance(x, torch.Tensor):
            return x
    else:
        return x.max().item()  # expect: SH109 medium
    return x.max().item()  # expect: SH109 medium

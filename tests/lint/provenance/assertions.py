# ruff: noqa
"""`assert x.device.type == "cpu"` says where `x` is for the rest of the function (from the start, for a
parameter bound nowhere else), so tensors built on `x.device` and views of `x` are host tensors; an assertion
that `x` is on the device says the reverse, and a later rebinding ends what the assertion said. The same holds
for a dotted name (`assert self.lens.is_cpu`) until the function stores it again. Only an assertion among the
function's own statements counts (one inside a branch says nothing, not even in that branch)."""
import torch


def logical_maps(physical_to_logical, num_experts):
    device = physical_to_logical.device
    assert physical_to_logical.device.type == "cpu"
    counts = torch.zeros(num_experts, device=device)
    top = int(counts.max().item())
    ids = physical_to_logical[:, 0]
    valid = ids >= 0
    if not valid.any():
        return None
    return ids[valid], top


def on_the_device(lengths):
    assert lengths.is_cuda and lengths.dim() == 1
    return int(lengths.max())  # expect: SH109 high


def rebound(lengths, device):
    assert lengths.device.type == "cpu"
    lengths = lengths.to(device)  # expect: SH202 high
    return lengths.tolist()  # expect: SH201 high


class Result:
    next_token_ids: torch.Tensor
    accept_lens: torch.Tensor

    def resolve_tokens(self):
        assert self.next_token_ids.is_cpu and self.accept_lens.device.type == "cpu"
        tokens = self.next_token_ids.tolist()
        lens = self.accept_lens.tolist()
        self.accept_lens = self.accept_lens.cuda()  # expect: SH202 high
        again = self.accept_lens.tolist()  # expect: SH201 high
        return tokens, lens, again

    def unchecked(self):
        return self.next_token_ids.tolist()  # expect: SH201 medium

    def checked_on_the_device(self):
        assert self.next_token_ids.is_cuda
        return self.next_token_ids.max().item()  # expect: SH109 high


def asserted_on_one_path(lengths: torch.Tensor, mode: str):
    if mode == "host":
        assert lengths.is_cpu
        return lengths.tolist()  # expect: SH201 medium
    return int(lengths.max())  # expect: SH109 medium


def asserted_after_a_return(lengths: torch.Tensor, cached):
    if cached is not None:
        return int(lengths.max())  # expect: SH109 medium
    assert lengths.device.type == "cpu"
    return lengths.tolist()


class Checked:
    lens: torch.Tensor

    def on_one_path(self, mode: str):
        if mode == "host":
            assert self.lens.is_cpu
        return self.lens.tolist()  # expect: SH201 medium

# ruff: noqa
"""Loops, zip/enumerate, unpacking, returns of this module's functions, call sites, narrowing."""
import torch


def host_copy(x: torch.Tensor):
    return x.cpu()  # expect: SH201 medium


def device_copy(n: int):
    return torch.ones(n, device="cuda")


def loops(xs: torch.Tensor, n: int):
    host = xs.cpu()  # expect: SH201 medium
    for row in host:
        row.tolist()
    for value in xs.tolist():  # expect: SH201 medium
        value.item()  # a Python number: `.item()` is not a read here
    for i, row in enumerate(host):
        row.item()
    for a, b in zip(host, xs):
        a.tolist()
        b.tolist()  # expect: SH201 medium
    rows = [row.tolist() for row in host]
    sizes = [int(size) for size in xs.shape]
    return rows, sizes


def returns(x: torch.Tensor, n: int):
    copied = host_copy(x)
    listed = copied.tolist()
    fresh = device_copy(n).tolist()  # expect: SH201 high
    first, rest = torch.sort(x)
    top = first.max().item()  # expect: SH109 medium
    return listed, fresh, top


def _clip(grads, total_norm):
    clip = total_norm / 2.0
    if clip > 1:  # expect: SH110 high
        return grads
    return [grad.tolist() for grad in grads]  # expect: SH201 medium


def public_clip(norm):
    if norm > 1:  # expect: SH110 medium
        return norm


def step(n: int):
    norm = torch.ones(1, device="cuda").sum()
    _clip([], norm)  # expect: SH110 medium, SH201 low
    public_clip(norm)


def helper_sync(streams):
    device_synchronize()  # expect: SH301 medium
    torch.cuda.synchronize()  # expect: SH301 high


def device_synchronize():
    torch.cuda.synchronize()  # expect: SH301 high


def multi_line(n: int):
    norm = torch.tensor(0.0)
    norm = torch.maximum(
        norm.to("cuda"), torch.ones(1, device="cuda")  # expect: SH202 high
    )
    return norm


def narrowed(metrics: dict):
    for key, value in metrics.items():
        if isinstance(value, torch.Tensor):
            metrics[key] = value.item()  # expect: SH109 medium
        else:
            metrics[key] = value
    return metrics


def arithmetic(offsets, x: torch.Tensor):
    lengths = offsets[1:] - offsets[:-1]
    spread = x.repeat_interleave(lengths)  # expect: SH106 medium
    ones = x.repeat_interleave(2)
    return spread, ones


def device_checks(tensor: torch.Tensor, grid: torch.Tensor):
    if tensor.is_cuda:
        return tensor.sum().item()  # expect: SH109 high
    host = tensor.cpu()
    if grid.device.type == "cpu":
        rows = grid.tolist()
    else:
        rows = grid.cpu().tolist()  # expect: SH201 high
    return host, rows


def processed(processor, images):
    inputs = processor(images=images, return_tensors="pt")
    return inputs["pixel_values"].tolist(), inputs.input_ids.cpu()


def _sizes_ok(offs: torch.Tensor, n: int) -> bool:
    return offs.tolist()[-1] == n  # expect: SH201 medium


def packed(offs: torch.Tensor, n: int):
    assert _sizes_ok(offs, n)  # expect: SH201 low
    assert _sizes_ok(torch.arange(n, device="cuda"), n)  # expect: SH201 low
    assert public_clip(offs) is None


def narrowed_host(sizes, n: int):
    sizes = torch.tensor(sizes)
    if isinstance(sizes, torch.Tensor):  # a tensor; still the host one built above
        sizes = sizes.view(-1, 2)
    h, w = sizes[0]
    return int(h * w + n)


class Loader:
    @staticmethod
    def _check_shape(name, weight, expected):
        if tuple(weight.shape) != expected:
            raise ValueError(name)
        if weight.sum() > 0:  # expect: SH110 high
            return weight

    def load(self, name: str, w: torch.Tensor):
        self._check_shape(name, w.cuda(), (2, 2))  # expect: SH110 medium


def build_map(n: int) -> torch.Tensor:
    return torch.full((n,), -1, dtype=torch.int32)


class ExpertMap:
    def build(self, n: int):
        device = torch.get_default_device()
        with device:  # the default device: factories without `device=` build there
            self.expert_map = build_map(n)
        self.host_map = build_map(n)

    def local_id(self, i: int) -> int:
        on_default_device = self.expert_map[i].item()  # expect: SH109 high
        return on_default_device + self.host_map[i].item()

"""The guard on CPU, one snippet per catalogue pattern: half sync (latent on CPU), half must not be flagged."""

from __future__ import annotations

import warnings

import pytest
import torch

from synchunt.guard import watch

# (snippet, expected rule codes in order). Every record must point at the snippet's first line.
SYNCING: list[tuple[str, tuple[str, ...]]] = [
    ("x[mask]", ("SH101",)),
    ("x[mask.to(torch.uint8)]", ("SH101",)),
    ("grid[grid > 0.5]", ("SH101",)),
    ("indices[indices % 4 == 1] // 4", ("SH101",)),
    ("y[mask] = six_values", ("SH102",)),
    ("y[mask] = x[mask]", ("SH101", "SH102")),
    ("torch.nonzero(x)", ("SH103",)),
    ("x.nonzero()", ("SH103",)),
    ("torch.argwhere(x)", ("SH103",)),
    ("torch.where(mask)", ("SH103",)),
    ("torch.masked_select(x, mask)", ("SH104",)),
    ("x.masked_select(mask)", ("SH104",)),
    ("torch.unique(indices)", ("SH105",)),
    ("torch.unique_consecutive(indices)", ("SH105",)),
    ("torch.unique(grid, dim=0)", ("SH105",)),
    ("torch.repeat_interleave(x, repeats)", ("SH106",)),
    ("torch.bincount(indices)", ("SH107",)),
    ("torch.bincount(indices, minlength=32)", ("SH107",)),
    ("torch.histc(x, bins=4)", ("SH108",)),
    ("scalar.item()", ("SH109",)),
    ("float(scalar)", ("SH109",)),
    ("int(scalar)", ("SH109",)),
    ("mask.any().item()", ("SH109",)),
    ("x[torch.tensor(1)]", ("SH109",)),
    ("x[torch.tensor(1):torch.tensor(3)]", ("SH109", "SH109")),
    ("bool(scalar)", ("SH110",)),
    ("torch.is_nonzero(scalar)", ("SH110",)),
    ("if scalar:\n    pass", ("SH110",)),
    ("assert scalar", ("SH110",)),
    ("while scalar > 0:\n    pass", ("SH110",)),
    ("max(x[1], x[2])", ("SH110",)),
    ("x.tolist()", ("SH201",)),
    ("x.cpu()", ("SH201",)),
    ("x.to('cpu')", ("SH201",)),  # diffusers' sigmas.to("cpu"): the host named, as by .cpu()
    ("x.to(device='cpu', dtype=torch.float64)", ("SH201",)),
    ("x.numpy()", ("SH201",)),
    ("torch.nn.functional.one_hot(indices[:3])", ("SH109",)),
    ("torch.normal(x, x + 1)", ("SH112",)),
    ("torch.normal(0.0, x + 1)", ("SH112",)),
    ("torch.equal(x, y)", ("SH113",)),
    ("x.allclose(y)", ("SH113",)),
    ("torch.linalg.inv(torch.eye(3) + grid[:3])", ("SH114",)),
    ("torch.linalg.cholesky_ex(torch.eye(3), check_errors=True)", ("SH114",)),
    ("torch.linalg.eigvalsh(torch.eye(3))", ("SH114",)),
]

NOT_SYNCING: list[str] = [
    "x.index_select(0, indices[:3])",
    "torch.gather(x, 0, indices[:3])",
    "y.index_copy_(0, indices[:3], x[:3])",
    "y.index_add_(0, indices[:3], x[:3])",
    "y.scatter_add_(0, indices[:3], x[:3])",
    "x[2]",
    "x[2:5]",
    "x[1::2]",
    "x[indices[:3]]",
    "indices[1::4] // 4",
    "torch.where(mask, x, 0.0)",
    "torch.nonzero_static(x, size=4)",
    "y.masked_fill_(mask, 0.0)",
    "y[mask] = -1",
    "y[mask] = torch.tensor(2.0)",
    "torch.repeat_interleave(x, repeats, output_size=int_total)",
    "torch.repeat_interleave(x, 2)",
    "torch.histc(x, bins=4, min=0.0, max=10.0)",
    "torch.zeros(4), torch.empty(5), torch.full((3,), 7), torch.randn(3), torch.arange(6)",
    "x.shape[0] + x.numel() + x.dim()",
    "x.sum() * 2",
    "x.to(x.device)",  # the device on a GPU run: the copy op decides there
    "x.to(torch.float64)",
    "x.to('cpu', non_blocking=True)",
    "torch.cat([x, x]).view(2, 10)",
    "torch.nn.functional.one_hot(indices[:3], num_classes=32)",
    "torch.normal(x, 1.0)",
    "torch.multinomial(x + 1, 1)",
    "torch.linalg.inv_ex(torch.eye(3))",
    "torch.linalg.det(torch.eye(3))",
    "torch.isclose(x, y)",
    "torch._assert_async(scalar < 0)",
]


def _namespace() -> dict[str, object]:
    x = torch.arange(10, dtype=torch.float32)
    return {
        "__name__": "snippet",
        "torch": torch,
        "x": x,
        "y": torch.zeros(10),
        "mask": x > 3.5,
        "six_values": torch.ones(6),
        "grid": torch.rand(4, 3, generator=torch.Generator().manual_seed(0)),
        "indices": torch.arange(32),
        "repeats": torch.ones(10, dtype=torch.long),
        "int_total": 10,
        "scalar": torch.tensor(-1.0),
    }


def _run(snippet: str) -> list:
    namespace = _namespace()
    code = compile(snippet, f"<snippet {snippet!r}>", "exec")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # uint8 masks are deprecated, still supported
        with watch() as recorder:
            exec(code, namespace)
    return recorder.syncs


def test_the_table_is_balanced() -> None:
    assert len(SYNCING) + len(NOT_SYNCING) >= 30
    assert len(SYNCING) >= 15 and len(NOT_SYNCING) >= 15


@pytest.mark.parametrize(("snippet", "expected"), SYNCING, ids=[s for s, _ in SYNCING])
def test_syncing_snippet_is_reported_once_per_sync(snippet: str, expected: tuple[str, ...]) -> None:
    syncs = _run(snippet)
    assert [record.rule for record in syncs] == list(expected), [r.describe() for r in syncs]
    for record in syncs:
        assert record.file == f"<snippet {snippet!r}>"
        assert record.line == 1
        assert record.latent, "CPU tensors: the sync is latent"
        assert record.thread == "MainThread"


@pytest.mark.parametrize("snippet", NOT_SYNCING)
def test_sync_free_snippet_is_not_reported(snippet: str) -> None:
    syncs = _run(snippet)
    assert syncs == [], [r.describe() for r in syncs]


@pytest.mark.parametrize(
    ("snippet", "op"),
    [("x[mask]", "aten::index"), ("y[mask] = six_values", "aten::index_put_"), ("scalar.item()", "aten::item"),
     ("torch.where(mask)", "aten::where"), ("torch.unique(indices)",
     "aten::_unique2"), ("x.tolist()", "Tensor.tolist")],
)
def test_the_outer_op_names_the_sync(snippet: str, op: str) -> None:
    (record,) = _run(snippet)
    assert record.op == op


def test_detail_describes_the_tensor_arguments() -> None:
    (record,) = _run("x[mask]")
    assert record.detail == "self=float32[10] cpu, indices=[bool[10] cpu]"

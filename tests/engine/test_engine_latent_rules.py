"""Latent detection per rule on a real CPU profile: each snippet runs in its own function (its call site)."""

from __future__ import annotations

import textwrap

import pytest

import synchunt
from synchunt.capture import capture, resolve_target

SNIPPETS = {
    # function name: (body, expected rule codes in order)
    "mask_read": ("x[x % 3 == 0]", ["SH101"]),
    "mask_write_tensor": ("y = x.clone(); m = x > 5; y[m] = x[m] * 2", ["SH101", "SH102"]),
    "mask_write_scalar": ("y = x.clone(); y[x > 5] = -1", []),
    "nonzero_call": ("torch.nonzero(x > 3)", ["SH103"]),
    "where_one_arg": ("torch.where(x > 3)", ["SH103"]),
    "where_three_args": ("torch.where(x > 3, x, 0)", []),
    "nonzero_static": ("torch.nonzero_static(x > 3, size=4)", []),
    "masked_select": ("torch.masked_select(x, x > 3)", ["SH104"]),
    "unique": ("torch.unique(x % 4)", ["SH105"]),
    "repeat_no_size": ("torch.repeat_interleave(x[:4], x[:4])", ["SH106"]),
    "repeat_with_size": ("torch.repeat_interleave(x[:4], x[:4], output_size=6)", []),
    "bincount": ("torch.bincount(x % 4)", ["SH107"]),
    "histc_default": ("torch.histc(x.float(), bins=4)", ["SH108"]),
    "histc_range": ("torch.histc(x.float(), bins=4, min=0.0, max=16.0)", []),
    "item": ("x.sum().item()", ["SH109"]),
    "truthiness": ("bool((x > 100).any())", ["SH110"]),
    "index_select": ("x.index_select(0, torch.tensor([1, 2]))", []),
    "gather_and_slice": ("x.gather(0, torch.tensor([0, 3])); x[2:5]; x[::2]", []),
}


@pytest.fixture(scope="module")
def snippet_analysis(tmp_path_factory):
    folder = tmp_path_factory.mktemp("snippets")
    lines = ["import torch", ""]
    for name, (body, _) in SNIPPETS.items():
        lines += [f"def {name}(x):", f"    {body}", ""]
    lines += ["def run_all():", "    x = torch.arange(16)"]
    lines += [f"    {name}(x)" for name in SNIPPETS]
    (folder / "snippets.py").write_text(textwrap.dedent("\n".join(lines)) + "\n")
    target = resolve_target(f"{folder / 'snippets.py'}:run_all")
    return synchunt.analyze(capture(target, folder / "out").path)


@pytest.mark.parametrize("function", list(SNIPPETS))
def test_snippet_latent_rules(snippet_analysis, function):
    syncs = snippet_analysis.syncs
    found = syncs[syncs["function"] == function].sort_values("ts_us")["rule"].tolist()
    assert found == SNIPPETS[function][1]


def test_every_latent_sync_has_a_snippet_call_site(snippet_analysis):
    assert set(snippet_analysis.syncs["function"]) <= set(SNIPPETS)

"""The guard's two routes: kernels at PreDispatch (default) and the dispatch-mode fallback, and what each
leaves behind for code that is not guarded."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from synchunt.guard import watch
from synchunt.guard.install import ROUTE_VARIABLE, SESSION
from synchunt.guard.kernels import KEY

X = torch.arange(10, dtype=torch.float32)
MASK = X > 4


def _rules(run) -> list[str]:
    with watch() as recorder:
        run()
    return [record.rule for record in recorder.syncs]


def test_the_default_route_is_the_kernels() -> None:
    with watch():
        assert SESSION.route_name == "kernels"
        assert torch._C._dispatch_tls_is_dispatch_key_included(KEY)
        assert _get_current_dispatch_mode() is None
    assert SESSION.route_name is None


def test_the_mode_route_is_selectable_and_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROUTE_VARIABLE, "mode")
    with watch() as recorder:
        assert SESSION.route_name == "mode" and _get_current_dispatch_mode() is not None
        assert not torch._C._dispatch_tls_is_dispatch_key_included(KEY)
        X[MASK]
        X.sum().item()
    assert [record.rule for record in recorder.syncs] == ["SH101", "SH109"]
    assert _get_current_dispatch_mode() is None and SESSION.route_name is None


def test_both_routes_keep_autograd_through_a_guarded_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    for route in ("kernels", "mode"):
        monkeypatch.setenv(ROUTE_VARIABLE, route)
        leaf = torch.ones(3, requires_grad=True)
        with watch():
            (leaf.to(torch.float64) * 2).sum().backward()
        assert leaf.grad.tolist() == [2.0, 2.0, 2.0], route


def test_unguarded_results_are_unchanged_while_the_kernels_stay_registered() -> None:
    def work() -> list[object]:
        return [X[MASK].tolist(), X.to(torch.float64).sum().item(), torch.unique(X.long() % 3).tolist()]

    expected = work()
    with watch():
        pass
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::index.Tensor", "PreDispatch")
    assert work() == expected


@pytest.mark.slow
def test_export_traces_the_same_graph_with_the_kernels_registered() -> None:
    class Model(torch.nn.Module):
        def forward(self, a: torch.Tensor) -> torch.Tensor:
            return a.to(torch.float64)[a.long()] * 2

    SESSION.remove_kernels()
    before = torch.export.export(Model(), (torch.arange(4.0),)).graph_module.code
    with watch():
        pass
    after = torch.export.export(Model(), (torch.arange(4.0),)).graph_module.code
    assert after == before

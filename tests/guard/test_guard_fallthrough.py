"""The fallthroughs that make ops outside the catalogue free on a guarded thread must never hide an op from a
pre-dispatch trace (torch.export's training IR, ``make_fx(pre_dispatch=True)``), whether the trace runs after a
guard or inside one, and the guard must keep reporting what it reports with them registered. A trace inside a
guard switches the guard off for the rest of the block (torch clears the thread's ``PreDispatch`` bit when the
trace ends): the guard says so when it exits instead of passing the rest as clean."""

from __future__ import annotations

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from synchunt.guard import watch
from synchunt.guard.fallthrough import FALLTHROUGHS, pre_dispatch_tracing
from synchunt.guard.install import SESSION
from tests.guard.test_guard_cost import pre_dispatch_entry


def _step(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=0).index_select(0, torch.tensor([0, 2])) * 2


def _traced_ops(x: torch.Tensor) -> list[str]:
    graph = make_fx(_step, pre_dispatch=True)(x)
    return [str(node.target) for node in graph.graph.nodes if node.op == "call_function"]


def test_a_guard_registers_fallthroughs_for_ops_outside_the_catalogue_and_keeps_its_kernels() -> None:
    with watch() as guard:
        x = torch.arange(4.0)
        _step(x)
        x[x > 1]
    assert pre_dispatch_entry("aten::softmax.int") == pre_dispatch_entry("aten::index_select") == "fallthrough"
    assert pre_dispatch_entry("aten::nonzero") == "kernel"
    assert [(r.rule, r.op) for r in guard.syncs] == [("SH101", "aten::index")]


def test_a_pre_dispatch_trace_after_a_guard_sees_every_op_and_the_next_guard_registers_them_again() -> None:
    SESSION.remove_kernels()
    x = torch.arange(4.0)
    expected = _traced_ops(x)
    assert "aten.softmax.int" in expected and "aten.index_select.default" in expected
    with watch():
        pass
    assert pre_dispatch_entry("aten::softmax.int") == "fallthrough"
    assert _traced_ops(x) == expected  # setting the trace's mode removed the fallthroughs first
    assert pre_dispatch_entry("aten::softmax.int") == "fallback"
    with watch():
        pass
    assert pre_dispatch_entry("aten::softmax.int") == "fallthrough"


def test_a_pre_dispatch_trace_inside_a_guard_sees_every_op_and_the_guard_says_it_was_switched_off() -> None:
    SESSION.remove_kernels()
    x = torch.arange(4.0)
    expected = _traced_ops(x)
    with pytest.warns(RuntimeWarning, match="switched off inside the block"), watch() as guard:
        x[x > 1]
        assert _traced_ops(x) == expected
        x[x > 2]  # unchecked: torch cleared the key
    assert [(r.rule, r.op) for r in guard.syncs] == [("SH101", "aten::index")]
    with watch() as again:  # the next guard arms the thread again
        x[x > 1]
    assert len(again.syncs) == 1


def test_no_fallthroughs_are_registered_while_a_pre_dispatch_mode_is_set() -> None:
    SESSION.remove_kernels()
    seen: list[tuple[bool, int]] = []

    def inside(x: torch.Tensor) -> torch.Tensor:
        seen.append((pre_dispatch_tracing(), FALLTHROUGHS.register()))
        return x * 2

    make_fx(inside, pre_dispatch=True)(torch.ones(2))
    assert seen == [(True, 0)]
    assert not pre_dispatch_tracing()


def test_removing_the_fallthroughs_puts_torch_back_as_it_was() -> None:
    import torch._ops as ops

    SESSION.remove_kernels()
    original = ops._set_mode_pre_dispatch
    assert FALLTHROUGHS.register() > 1000  # every aten op but the guard's
    assert ops._set_mode_pre_dispatch is not original
    FALLTHROUGHS.remove()
    assert ops._set_mode_pre_dispatch is original
    assert pre_dispatch_entry("aten::softmax.int") == "fallback"

"""What the guard costs where it matters: ops outside the catalogue run none of its Python, copies are checked
only where a device can exist (and then by their devices first), and entering and leaving a guard is a fixed,
small amount of work. The spec for what it reports stays the other tests'; these check that the cheap paths are
taken, by the guard's own Python calls (robust on a loaded machine, where timings are not)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import synchunt.guard
from synchunt.guard import watch

GUARD_DIR = str(Path(synchunt.guard.__file__).parent)
ROOT = Path(__file__).resolve().parents[2]


def guard_calls(run: Callable[[], Any]) -> Counter[str]:
    """The guard's Python functions that ``run`` calls, by name (C functions and other code left out)."""
    calls: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(GUARD_DIR):
            calls[frame.f_code.co_name] += 1

    return _profiled(run, profile, calls)


def pre_dispatch_entry(name: str) -> str:
    """What op ``name`` runs at ``PreDispatch``: "kernel" (the guard's), "fallthrough" or "fallback" (ATen's)."""
    line = next(row for row in torch._C._dispatch_dump_table(name).splitlines() if row.startswith("PreDispatch:"))
    return "fallthrough" if "fallthrough" in line else "fallback" if "[backend fallback]" in line else "kernel"


def _profiled(run: Callable[[], Any], profile: Callable[[Any, str, Any], None], calls: Counter[str]) -> Counter[str]:
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def all_calls(run: Callable[[], Any]) -> Counter[str]:
    """Every call ``run`` makes, Python functions and C ones (builtins, torch's bindings) alike, by name."""
    calls: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls[frame.f_code.co_qualname] += 1
        elif event == "c_call":
            calls[getattr(arg, "__qualname__", repr(arg))] += 1

    return _profiled(run, profile, calls)


def decode_like_ops() -> None:
    """One layer of a decode step: no op of it is a catalogue op, or a copy that crosses a device."""
    hidden, keys, live = torch.randn(1, 8), torch.zeros(4, 8), torch.arange(4)
    h = F.layer_norm(hidden, (8,))
    q = h @ torch.eye(8)
    keys[1:2] = q  # slice assignment: aten::copy_
    scores = torch.softmax(q @ keys.index_select(0, live).T * 0.5, dim=-1)  # a wrapped scalar: aten::_to_copy
    torch.cat([scores, scores.float(), torch.where(scores > 0, scores, 0.0)])
    torch.normal(scores, 1.0)


# A fresh process: whether a device can exist is decided per process (a shadow device entered earlier in this
# one counts), so the device-less path is checked where none ever existed.
_DEVICE_LESS = """
import json, sys, torch
sys.path.insert(0, {tests!r})
from test_guard_cost import decode_like_ops, guard_calls, pre_dispatch_entry
from synchunt.guard import watch
from synchunt.shadow import shadow_device

with watch() as guard:
    calls = guard_calls(decode_like_ops)
    kernels = {{name: pre_dispatch_entry(name) for name in ("aten::copy_", "aten::_to_copy", "aten::index.Tensor")}}
    with shadow_device():  # entered inside the guard: its device tensors' copies cross, and are reported
        device = torch.ones(3, device="cuda")
        device.to("cpu")
        torch.zeros(3).copy_(device)
        torch.zeros(2).to("cuda")
print(json.dumps({{"calls": calls, "kernels": kernels, "after_shadow": pre_dispatch_entry("aten::copy_"),
                  "records": [[r.rule, r.op, r.residency] for r in guard.syncs]}}))
"""


@pytest.mark.skipif(torch.backends.cuda.is_built() or torch.accelerator.is_available(),
                    reason="every process of this build can hold a device tensor")
def test_without_a_device_ops_outside_the_catalogue_and_copies_run_no_guard_code() -> None:
    script = _DEVICE_LESS.format(tests=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["calls"] == {}  # layer_norm … where(c, a, b), normal(mean, 1.0): fallthroughs only
    assert result["kernels"] == {"aten::copy_": "fallthrough", "aten::_to_copy": "fallthrough",
                                 "aten::index.Tensor": "kernel"}
    assert result["after_shadow"] == "kernel"
    assert result["records"] == [["SH201", "aten::_to_copy", "device"], ["SH205", "aten::copy_", "device"],
                                 ["SH202", "aten::_to_copy", "device"]]


def test_with_a_device_a_host_copy_is_decided_by_its_devices_alone() -> None:
    from synchunt.guard.kernels import devices_possible
    from synchunt.shadow import shadow_device

    if not devices_possible():
        with shadow_device():  # from here on this process can hold device tensors: the copies have kernels
            pass
    keys, row = torch.zeros(4, 8), torch.ones(1, 8)
    with watch() as guard:
        calls = guard_calls(lambda: keys.__setitem__(slice(0, 1), row))
    assert torch._C._dispatch_has_kernel_for_dispatch_key("aten::copy_", "PreDispatch")
    assert set(calls) == {"kernel", "_touches_device", "idle", "_below"}, calls  # no classification, no scope
    assert guard.syncs == []


def test_overloads_their_rule_rules_out_by_schema_have_no_kernel() -> None:
    with watch() as guard:
        x = torch.arange(4.0)
        torch.where(x > 1, x, 0.0)
        torch.normal(x, 1.0)
        torch.where(x > 1)
        torch.normal(x, torch.ones(4))
    assert pre_dispatch_entry("aten::where.self") == pre_dispatch_entry("aten::normal.Tensor_float") == "fallthrough"
    assert pre_dispatch_entry("aten::where") == pre_dispatch_entry("aten::normal.Tensor_Tensor") == "kernel"
    assert [(r.rule, r.op) for r in guard.syncs] == [("SH103", "aten::where"), ("SH112", "aten::normal")]


def _enter_and_leave() -> None:
    with watch():
        pass


def test_entering_and_leaving_a_guard_is_a_fixed_small_amount_of_work() -> None:
    _enter_and_leave()
    first = guard_calls(_enter_and_leave)
    for _ in range(200):
        _enter_and_leave()
    worker = threading.Thread(target=_enter_and_leave)
    worker.start()
    worker.join()
    with watch():  # nested guards enter and leave without installing anything again
        nested = guard_calls(_enter_and_leave)
    assert guard_calls(_enter_and_leave) == first  # the same work after many guards and another thread's
    assert sum(first.values()) <= 40, first
    assert sum(nested.values()) <= 20, nested


@pytest.mark.skipif(torch.cuda.is_available(), reason="on CUDA the sync-debug signal adds its own calls at entry")
def test_entering_and_leaving_sets_the_patches_in_c_loops() -> None:
    """The catalogue's patches (about fourteen attributes) are read, set and put back in ``map`` loops over tuples
    resolved once: no Python step, and no ``setattr`` from Python, per attribute. 207 calls a pair when each
    attribute took a Python loop step; about 90 now."""
    _enter_and_leave()
    calls = all_calls(_enter_and_leave)
    assert sum(calls.values()) <= 100, calls
    per_attribute = {name: calls[name] for name in ("setattr", "getattr", "delattr", "vars", "_wrapper")}
    # what remains: the route's two class patches (higher-order operators, the shadow device's entry), set and undone
    assert max(per_attribute.values()) <= 4, per_attribute
    assert max(calls.values()) <= 5, calls.most_common(3)


def test_entering_and_leaving_leaves_nothing_for_the_garbage_collector() -> None:
    """What an entry allocates is freed by its exit: the collector's allocation count does not grow with entries,
    so a loop of guarded steps triggers no collection of its own (a tuple built from a ``map`` at each entry grew it
    by one, and a collection over torch's objects came every few hundred entries)."""
    _enter_and_leave()
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        for _ in range(1000):
            _enter_and_leave()
        grown = gc.get_count()[0] - before
    finally:
        gc.enable()
    assert grown < 200, grown


class _EqualToEverything:
    """A user's own patch whose ``==`` says yes to anything: the guard must tell it from torch's by identity."""

    def __init__(self, original: Any) -> None:
        self.original, self.calls = original, 0

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__

    def __call__(self, tensor: torch.Tensor) -> Any:
        self.calls += 1
        return self.original(tensor)


def test_an_attribute_patched_between_guards_is_wrapped_then_put_back() -> None:
    torch_tolist = torch.Tensor.tolist
    _enter_and_leave()  # the wrappers of torch's own methods are made
    users = _EqualToEverything(torch_tolist)
    torch.Tensor.tolist = users
    try:
        with watch() as guard:
            assert torch.Tensor.tolist is not users  # wrapped, not mistaken for torch's own
            torch.arange(3).tolist()
        assert torch.Tensor.__dict__["tolist"] is users and users.calls == 1
        assert [record.op for record in guard.syncs] == ["Tensor.tolist"]
    finally:
        del torch.Tensor.tolist
    assert torch.Tensor.tolist is torch_tolist and "tolist" not in torch.Tensor.__dict__
    with watch() as again:
        torch.arange(3).tolist()
    assert torch.Tensor.tolist is torch_tolist and [record.op for record in again.syncs] == ["Tensor.tolist"]
    assert users.calls == 1


def test_a_patch_that_cannot_be_set_leaves_every_attribute_as_it_was() -> None:
    from synchunt.guard.patches import _Attributes

    class Owner:
        def method(self) -> str:
            return "own"

    class Inheriting(Owner):
        pass

    class Refusing(type):
        def __setattr__(cls, name: str, value: Any) -> None:
            raise AttributeError(f"{name} is read-only here")

    class Locked(metaclass=Refusing):
        def method(self) -> str:
            return "locked"

    own, inherited = Owner.__dict__["method"], Owner.method
    attributes = _Attributes([(Owner, "method", lambda f: "wrapped"), (Inheriting, "method", lambda f: "wrapped"),
                              (Locked, "method", lambda f: "wrapped")])
    with pytest.raises(AttributeError, match="read-only"):
        attributes.apply()
    assert Owner.__dict__["method"] is own and "method" not in Inheriting.__dict__ and Inheriting.method is inherited
    fine = _Attributes([(Owner, "method", lambda f: "wrapped"), (Inheriting, "method", lambda f: "wrapped")])
    saved = fine.apply()
    assert Owner.method == "wrapped" and Inheriting.__dict__["method"] == "wrapped"
    fine.restore(saved)
    assert Owner.__dict__["method"] is own and "method" not in Inheriting.__dict__

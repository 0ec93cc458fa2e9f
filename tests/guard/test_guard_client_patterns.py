"""Misses seen on real client code (transformers, torchvision, diffusers): each pattern is reported at the line
where it happens, and what does not sync is not reported. CPU runs: host tensors stand for device ones."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from synchunt.guard import watch

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))
import client_patterns

_EXPECTED = re.compile(r"#\s*(SH\d{3})\s*$")


def _annotated(function: object) -> list[tuple[str, int]]:
    lines, start = inspect.getsourcelines(function)  # type: ignore[arg-type]
    return [(match[1], start + offset) for offset, text in enumerate(lines)
            if (match := _EXPECTED.search(text)) is not None]


def _seen(run: object, *args: object) -> list[tuple[str, int]]:
    with watch() as guard:
        run(*args)  # type: ignore[operator]
    file = inspect.getsourcefile(client_patterns)
    return [(record.rule, record.line) for record in guard.syncs if record.file == file]


def test_a_move_to_the_host_by_name_is_a_device_to_host_copy() -> None:
    seen = _seen(client_patterns.scheduler_sigmas, torch.linspace(1, 0, 5))
    assert seen == _annotated(client_patterns.scheduler_sigmas)


def test_a_move_named_by_a_device_object_is_left_to_the_copy_op() -> None:
    assert _seen(client_patterns.follows_the_device, torch.ones(3), torch.ones(2), "cpu") == []


def test_tensor_to_records_a_latent_copy_with_its_op_and_restores_the_method() -> None:
    original = torch.Tensor.to
    with watch() as guard:
        torch.ones(2).to("cpu")
    assert [(r.rule, r.op, r.latent, r.source) for r in guard.syncs] == [("SH201", "Tensor.to", True, "method")]
    assert torch.Tensor.to is original


def test_an_empty_host_to_device_copy_is_not_reported_and_a_move_to_the_host_once() -> None:
    from synchunt.shadow import shadow_device

    with shadow_device():  # device tensors on a CPU-only machine: the copies cross a (shadow) device
        seen = _seen(client_patterns.cache_tensors, "cuda")
    assert seen == _annotated(client_patterns.cache_tensors)


# -- torchvision's nms: its CUDA kernel reads the mask on the host inside C++ --------------------------------------

def _nms_call_line(torchvision: object) -> tuple[str, int]:
    """The line of torchvision/ops/boxes.py that calls the registered op."""
    from torchvision.ops import boxes

    lines, start = inspect.getsourcelines(boxes.nms)
    offset = next(i for i, text in enumerate(lines) if "torch.ops.torchvision.nms(" in text)
    return inspect.getsourcefile(boxes), start + offset  # type: ignore[return-value]


def test_nms_is_reported_at_the_line_in_torchvision_that_calls_it() -> None:
    torchvision = pytest.importorskip("torchvision")
    boxes = torch.tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [50.0, 50.0, 60.0, 60.0]])
    scores = torch.tensor([0.9, 0.8, 0.7])
    with watch() as guard:
        torchvision.ops.nms(boxes, scores, 0.5)
        torchvision.ops.batched_nms(boxes, scores, torch.tensor([0, 0, 1]), 0.5)
    file, line = _nms_call_line(torchvision)
    nms = [record for record in guard.syncs if record.rule == "SH115"]
    assert [(r.op, r.file, r.line, r.latent) for r in nms] == [("torchvision::nms", file, line, True)] * 2
    assert nms[0].stack[1].function == "test_nms_is_reported_at_the_line_in_torchvision_that_calls_it"


def test_nms_of_no_boxes_is_no_sync() -> None:
    torchvision = pytest.importorskip("torchvision")
    with watch() as guard:
        torchvision.ops.nms(torch.empty(0, 4), torch.empty(0), 0.5)
    assert [record.rule for record in guard.syncs] == []


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_guard_imports_no_library_to_find_its_ops() -> None:
    out = _run("""
        import sys, torch
        from synchunt.guard import watch
        with watch():
            torch.ones(3).nonzero()
        print("torchvision" in sys.modules)
    """)
    assert out == "False"


def test_a_library_loaded_after_a_guard_is_intercepted_by_the_next_one() -> None:
    pytest.importorskip("torchvision")
    out = _run("""
        import torch
        from synchunt.guard import watch
        with watch():
            torch.ones(3).nonzero()
        import torchvision
        with watch() as guard:
            torchvision.ops.nms(torch.tensor([[0.0, 0, 1, 1]]), torch.tensor([1.0]), 0.5)
        print([record.rule for record in guard.syncs])
    """)
    assert out == "['SH115']"

"""Small synthetic paths for the audit: real torch code whose syncs are known by construction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from synchunt.capture.workload import Workload


@dataclass(frozen=True)
class ToyParams:
    variant: str = "bad"
    device: str = "cpu"
    size: int = 32


def _setup(params: ToyParams) -> tuple[str, torch.Tensor]:
    return params.variant, torch.arange(params.size, device=params.device)


def _even_by_mask(values: torch.Tensor) -> torch.Tensor:
    return values[values % 2 == 0]  # SH101: a boolean-mask index syncs for the result size


def _even_by_stride(values: torch.Tensor) -> torch.Tensor:
    return values[0::2]  # the same rows, no sync


def _step_leaky(state: tuple[str, torch.Tensor]) -> torch.Tensor:
    return _even_by_mask(state[1])  # the "fixed" variant forgot the rewrite


def _step_silent(state: tuple[str, torch.Tensor]) -> torch.Tensor:
    return _even_by_stride(state[1])  # the "bad" variant lost its sync


def _step_honest(state: tuple[str, torch.Tensor]) -> torch.Tensor:
    variant, values = state
    return _even_by_mask(values) if variant == "bad" else _even_by_stride(values)


def _step_crash(state: tuple[str, torch.Tensor]) -> torch.Tensor:
    raise RuntimeError("toy path failed on purpose")


def toy(name: str, step: Callable[[Any], Any], expected: tuple[str, ...] = ("SH101",)) -> Workload:
    return Workload(name=name, summary=f"toy path {name}", mirrors="tests/audit", params=ToyParams, setup=_setup,
                    step=step, thread_name="scheduler", expected_rules=expected, small={"size": 16})


@pytest.fixture
def toys() -> dict[str, Workload]:
    """Toy paths by name: one honest pair, and one of each way an audit can go wrong."""
    workloads = [toy("honest", _step_honest), toy("leaky-fixed", _step_leaky), toy("silent-bad", _step_silent),
                 toy("wrong-expectation", _step_honest, expected=("SH105",)), toy("crashing", _step_crash)]
    return {w.name: w for w in workloads}

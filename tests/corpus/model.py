"""One corpus case: a small callable, where the fact comes from, and what PyTorch says it does on a GPU."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from corpus.inputs import Inputs


class Observable(str, Enum):
    """What a run on the CPU can tell about the case."""

    CPU = "cpu"  # the op and its arguments decide it: a CPU run must report ``expect``
    CONVENTION = "convention"  # the device of a tensor decides it: a CPU run follows docs/guard.md instead
    CUDA = "cuda"  # needs a CUDA device to run at all


@dataclass(frozen=True)
class Case:
    """``run(inputs)`` does one thing; ``expect`` is the rule code PyTorch's statement implies on a CUDA
    device, or ``None`` for "does not synchronize". ``source`` names the statement: a file and function of
    pytorch/pytorch, or a documentation page. For ``Observable.CONVENTION`` cases, ``on_cpu`` is what an
    all-host run reports by the guard's documented convention. ``raises`` is an exception the call raises
    by design (an input that fails the very check that synchronizes)."""

    name: str
    source: str
    expect: str | None
    run: Callable[[Inputs], Any]
    observable: Observable = Observable.CPU
    on_cpu: str | None = None
    raises: type[BaseException] | None = None

    def expected_on(self, device_type: str) -> str | None:
        """The rule a run on this device type must report (``None``: no sync)."""
        if device_type == "cpu" and self.observable is Observable.CONVENTION:
            return self.on_cpu
        return self.expect

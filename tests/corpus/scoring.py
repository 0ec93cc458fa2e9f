"""Run corpus cases under the guard in each grad mode, and score what it reports against PyTorch's statements.

A case counts as found when the guard reports its rule; a report is correct when every rule it reports is
the expected one. Recall = found / syncing cases; precision = correct reports / cases with any report.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch

from corpus.inputs import make_inputs
from corpus.model import Case, Observable
from synchunt.guard import watch

MODES: dict[str, Callable[[], contextlib.AbstractContextManager[object]]] = {
    "eager": contextlib.nullcontext,
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
}


@dataclass(frozen=True)
class Outcome:
    case: Case
    mode: str
    expected: str | None
    reported: tuple[str, ...]
    error: str | None = None  # an exception the case does not expect

    @property
    def found(self) -> bool:
        return self.expected is not None and self.expected in self.reported

    @property
    def correct(self) -> bool:
        return set(self.reported) == ({self.expected} if self.expected else set())


@dataclass(frozen=True)
class Score:
    mode: str
    syncing: int
    sync_free: int
    found: int
    reported: int
    correct_reports: int

    @property
    def recall(self) -> float:
        return self.found / self.syncing if self.syncing else 1.0

    @property
    def precision(self) -> float:
        return self.correct_reports / self.reported if self.reported else 1.0


def runnable(case: Case, device_type: str) -> bool:
    return case.observable is not Observable.CUDA or device_type == "cuda"


def run_case(case: Case, mode: str, device: str = "cpu") -> Outcome:
    """Build fresh inputs in the grad mode, then run the case once under ``watch()``."""
    expected = case.expected_on(torch.device(device).type)
    error = None
    with warnings.catch_warnings(), MODES[mode]():
        warnings.simplefilter("ignore")  # deprecations (torch.cholesky) are not what is measured
        inputs = make_inputs(device)
        with watch() as recorder:
            try:
                case.run(inputs)
            except Exception as exc:  # an unexpected error is reported, not raised
                if case.raises is None or not isinstance(exc, case.raises):
                    error = f"{type(exc).__name__}: {exc}"
    return Outcome(case, mode, expected, tuple(record.rule for record in recorder.syncs), error)


def run_corpus(cases: Iterable[Case], modes: Sequence[str] = tuple(MODES), device: str = "cpu") -> list[Outcome]:
    device_type = torch.device(device).type
    return [run_case(case, mode, device) for mode in modes for case in cases if runnable(case, device_type)]


def scored(outcomes: Iterable[Outcome], device_type: str = "cpu") -> list[Outcome]:
    """The outcomes that count for recall/precision: on the CPU, convention cases are checked apart."""
    return [o for o in outcomes if device_type != "cpu" or o.case.observable is Observable.CPU]


def score(outcomes: Sequence[Outcome], mode: str) -> Score:
    mine = [o for o in outcomes if o.mode == mode]
    return Score(mode=mode,
                 syncing=sum(1 for o in mine if o.expected is not None),
                 sync_free=sum(1 for o in mine if o.expected is None),
                 found=sum(1 for o in mine if o.found),
                 reported=sum(1 for o in mine if o.reported),
                 correct_reports=sum(1 for o in mine if o.reported and o.correct))

"""The runtime guard against PyTorch's own statements about syncs, in every grad mode.

Goal (issue 11): at least 95 % recall and 95 % precision on the cases a CPU run can decide, in eager,
``torch.no_grad()`` and ``torch.inference_mode()``; the cases a CPU run cannot decide follow docs/guard.md.
``benchmarks/guard_corpus.py`` prints the same figures.
"""

from __future__ import annotations

import pytest
import torch

from corpus.cases import CASES
from corpus.model import Observable
from corpus.scoring import MODES, Outcome, run_case, run_corpus, score, scored
from synchunt.rules import RULES_BY_CODE

GOAL = 0.95
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return run_corpus(CASES, tuple(MODES), DEVICE)


def _listing(outcomes: list[Outcome]) -> str:
    return "\n".join(f"{o.mode} {o.case.name}: expected {o.expected}, reported {o.reported} {o.error or ''}"
                     for o in outcomes)


def test_every_case_names_its_source_and_a_known_rule() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)), "case names are unique"
    for case in CASES:
        assert case.source.startswith(("pytorch ", "https://pytorch.org/")), case.name
        for code in (case.expect, case.on_cpu):
            assert code is None or code in RULES_BY_CODE, f"{case.name}: unknown rule {code}"
        if case.observable is not Observable.CONVENTION:
            assert case.on_cpu is None, f"{case.name}: on_cpu only applies to convention cases"


def test_the_corpus_is_balanced() -> None:
    decidable = [case for case in CASES if case.observable is Observable.CPU]
    syncing = [case for case in decidable if case.expect is not None]
    assert len(decidable) >= 80
    assert 0.3 <= len(syncing) / len(decidable) <= 0.7


def test_no_case_raises_an_unexpected_error(outcomes: list[Outcome]) -> None:
    errors = [o for o in outcomes if o.error]
    assert not errors, _listing(errors)


@pytest.mark.parametrize("mode", list(MODES))
def test_recall_and_precision_meet_the_goal(outcomes: list[Outcome], mode: str) -> None:
    counted = scored(outcomes, torch.device(DEVICE).type)
    result = score(counted, mode)
    wrong = [o for o in counted if o.mode == mode and not o.correct]
    assert result.recall >= GOAL and result.precision >= GOAL, (
        f"recall {result.recall:.2f}, precision {result.precision:.2f}\n" + _listing(wrong))


def test_every_grad_mode_reports_the_same_syncs(outcomes: list[Outcome]) -> None:
    by_case: dict[str, set[tuple[str, ...]]] = {}
    for outcome in outcomes:
        by_case.setdefault(outcome.case.name, set()).add(outcome.reported)
    differing = {name: reports for name, reports in by_case.items() if len(reports) > 1}
    assert not differing, differing


@pytest.mark.skipif(DEVICE != "cpu", reason="the conventions are for runs without a device")
@pytest.mark.parametrize("case", [c for c in CASES if c.observable is Observable.CONVENTION], ids=lambda c: c.name)
def test_cases_a_cpu_run_cannot_decide_follow_the_documented_convention(case) -> None:
    for mode in MODES:
        outcome = run_case(case, mode)
        assert outcome.error is None and outcome.correct, _listing([outcome])


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a CUDA device")
@pytest.mark.parametrize("case", [c for c in CASES if c.observable is Observable.CUDA], ids=lambda c: c.name)
def test_cases_that_need_a_device(case) -> None:
    outcome = run_case(case, "eager", DEVICE)
    assert outcome.error is None and outcome.correct, _listing([outcome])

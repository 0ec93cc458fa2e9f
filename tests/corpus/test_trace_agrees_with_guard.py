"""The trace and the runtime guard count the same syncs on every corpus case a CPU run can take.

Each case runs twice on the CPU: under ``watch()``, and under ``torch.profiler`` (stacks and shapes recorded, as
``synchunt profile`` records them), whose trace synchunt then analyses. Of the rules a CPU trace can show, both
must report the same rules the same number of times: one sync is one record, whichever signal saw it. This is
where a CPU kernel's own reads show up (quantile's range check, one_hot's with ``num_classes``, lu_solve's pivot
checks, eig's input check, unique_dim's comparisons): the guard runs a catalogue or reviewed op as one opaque
call, and the trace must charge what happens inside that call to it, or to nothing.
"""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import synchunt
from corpus.cases import CASES
from corpus.inputs import make_inputs
from corpus.model import Case, Observable
from synchunt.guard import watch
from synchunt.rules import RULES_BY_CODE

SHOWN = frozenset(code for code, rule in RULES_BY_CODE.items() if rule.latent_in_traces)
RUN_ON_CPU = [case for case in CASES if case.observable is not Observable.CUDA]


def _run(case: Case) -> None:
    torch.manual_seed(0)  # both runs draw the same numbers (multinomial, normal)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecations (torch.cholesky) are not what is measured
        inputs = make_inputs("cpu")
        try:
            case.run(inputs)
        except Exception as error:  # a case may raise by design (the check that syncs fails)
            if case.raises is None or not isinstance(error, case.raises):
                raise


def _guarded(case: Case) -> Counter[str]:
    with watch() as recorder:
        _run(case)
    return Counter(record.rule for record in recorder.syncs if record.rule in SHOWN)


def _traced(case: Case, folder: Path) -> Counter[str]:
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as profiler:
        _run(case)
    path = folder / f"{case.name}.json"
    profiler.export_chrome_trace(str(path))
    return Counter(record.rule for record in synchunt.analyze(path, mode="latent").records)


def test_the_corpus_has_cases_a_cpu_run_takes() -> None:
    assert len(RUN_ON_CPU) >= 90


@pytest.mark.parametrize("case", RUN_ON_CPU, ids=[case.name for case in RUN_ON_CPU])
def test_trace_and_guard_report_the_same_syncs(case: Case, tmp_path: Path) -> None:
    assert _traced(case, tmp_path) == _guarded(case)

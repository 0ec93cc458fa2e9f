"""A gate with nothing to judge exits 2 in every format: no usable event read, a thread or scope without
events, a partial trace, a saved analysis without traces, a profiled target that did not return normally."""

from __future__ import annotations

import pytest
from trust_support import CORPUS, explain

CASES = [case_id for case_id, case in CORPUS.items() if case.family == "no-evidence" and not case.heavy]


@pytest.mark.parametrize("case_id", CASES)
def test_gate_refuses_without_evidence(hostile_results, case_id):
    result = hostile_results[case_id]
    assert result.kind == "pass", explain(result)

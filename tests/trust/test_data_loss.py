"""No output ever destroys an input or an existing file: ``-o`` naming an input (however spelt: ``./``, ``..``,
absolute, symlink, hard link) is refused with the input byte-identical; an existing output is replaced only with
``--force``, and atomically (a write that fails midway keeps the old bytes)."""

from __future__ import annotations

import pytest
from trust_support import CORPUS, explain

CASES = [case_id for case_id, case in CORPUS.items() if case.family == "data-loss" and not case.heavy]


@pytest.mark.parametrize("case_id", CASES)
def test_no_data_loss(hostile_results, case_id):
    result = hostile_results[case_id]
    assert result.kind == "pass", explain(result)

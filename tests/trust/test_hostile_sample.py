"""A fast, deterministic sample of the hostile corpus (every family): no traceback, no hang, bounded memory, the
exit contract, strict JSON, clean text, kept verdicts. The full corpus: ``scripts/hostile_corpus.py``."""

from __future__ import annotations

import hostile
import pytest
from trust_support import CORPUS, explain

SAMPLE = [case.id for case in hostile.sample(list(CORPUS.values()))]


@pytest.mark.parametrize("case_id", SAMPLE)
def test_hostile_case(hostile_results, case_id):
    result = hostile_results[case_id]
    assert result.kind == "pass", explain(result)

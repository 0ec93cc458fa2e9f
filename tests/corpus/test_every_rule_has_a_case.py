"""Every rule a signal can report has a case that shows that signal reporting it: a guard corpus case for a rule
with guard ops or reporting patches, a trace fixture for a rule the trace detects. A rule without one is a rule
nobody has seen fire."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus.cases import CASES
from synchunt.rules import RULES
from synchunt.rules.model import PatchEffect, Rule

TRACE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
# Rules whose guard ops live in a library the corpus does not install (the corpus is PyTorch's own statements);
# their guard cases live beside the library's tests, and say where.
LIBRARY_GUARD_CASES = {"SH115": "tests/guard (torchvision::nms, skipped where torchvision is not installed)"}


def _guarded(rule: Rule) -> bool:
    return bool(rule.guard_ops or any(patch.effect is PatchEffect.REPORT for patch in rule.guard_patches))


def _traced(rule: Rule) -> bool:
    return bool(rule.trace_ops or rule.runtime_calls or rule.sync_kinds)


@pytest.mark.parametrize("rule", [r for r in RULES if _guarded(r)], ids=lambda r: r.code)
def test_guarded_rule_has_a_corpus_case(rule: Rule) -> None:
    if rule.code in LIBRARY_GUARD_CASES:
        pytest.skip(f"library op: {LIBRARY_GUARD_CASES[rule.code]}")
    reported = {case.expect for case in CASES} | {case.on_cpu for case in CASES}
    assert rule.code in reported, f"{rule.code} has guard ops but no case in tests/corpus/cases.py reports it"


@pytest.mark.parametrize("rule", [r for r in RULES if _traced(r)], ids=lambda r: r.code)
def test_traced_rule_has_a_trace_fixture(rule: Rule) -> None:
    fixtures = sorted(TRACE_FIXTURES.glob(f"{rule.code}-*.json"))
    expected = [f for f in fixtures if f.name.endswith(".expected.json")]
    assert expected, f"{rule.code} is detected from traces but tests/fixtures/traces has no {rule.code}-*.json"


def test_the_exceptions_are_still_needed() -> None:
    """An exception for a rule the guard no longer reports is stale."""
    assert set(LIBRARY_GUARD_CASES) <= {rule.code for rule in RULES if _guarded(rule)}

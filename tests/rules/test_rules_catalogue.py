"""The rule registry: well-formed entries, and the generated reference kept in step with them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synchunt.rules import RULES, RULES_BY_CODE, Kind, get_rule
from synchunt.rules.docs import rules_markdown

SERIES_KIND = {"SH1": Kind.DATA_DEPENDENT_READ, "SH2": Kind.BLOCKING_COPY, "SH3": Kind.EXPLICIT_SYNC}
LINT_FORMS = re.compile(r"^(mask-subscript|mask-assign|where-one-arg|repeat-interleave-no-output-size|"
                        r"histc-default-range|truthiness|builtin-scalar|to-cpu|synchronize|call:\w+|method:\w+)$")


def test_codes_are_unique_sorted_and_match_their_series():
    codes = [rule.code for rule in RULES]
    assert len(codes) == len(set(codes)) == len(RULES_BY_CODE)
    assert codes == sorted(codes)
    for rule in RULES:
        assert re.fullmatch(r"SH[1-3]\d\d", rule.code)
        assert SERIES_KIND[rule.code[:3]] is rule.kind


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_documented_and_detectable(rule):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert not rule.name.startswith(("use-", "prefer-"))
    for field in ("title", "what_syncs", "mechanism", "fingerprint", "alternative", "what_it_does", "why_bad",
                  "example", "use_instead"):
        assert getattr(rule, field).strip(), f"{rule.code} lacks {field}"
    assert rule.trace_ops or rule.runtime_calls, f"{rule.code} has no trace fingerprint"
    assert all(p.op.startswith("aten::") for p in rule.trace_ops)
    assert all(LINT_FORMS.match(form) for form in rule.lint_forms)


def test_unknown_code_names_itself():
    with pytest.raises(KeyError, match="SH999"):
        get_rule("SH999")


def test_generated_reference_is_current():
    path = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert path.read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is stale: run `synchunt rules --format markdown -o docs/rules.md`")
    for rule in RULES:
        assert f"### {rule.code} `{rule.name}`" in path.read_text(encoding="utf-8")

"""Provenance that follows data the way real code moves it: each file in tests/lint/provenance/ marks the
findings it must produce with `# expect: <code> <confidence>` (all rules, all confidences); no other line
may be flagged. Several findings on one line: `# expect: SH110 medium, SH201 low`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synchunt.lint import lint_paths

CASES = sorted((Path(__file__).parent / "provenance").glob("*.py"))
_EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
_ITEM = re.compile(r"(SH\d{3})\s+(high|medium|low)")


def expected(path: Path) -> set[tuple[int, str, str]]:
    """`# expect: SH110 medium, SH201 low` marks two findings on that line."""
    return {(number, code, confidence)
            for number, line in enumerate(path.read_text().splitlines(), start=1)
            if (match := _EXPECT.search(line)) for code, confidence in _ITEM.findall(match.group(1))}


@pytest.mark.parametrize("path", CASES, ids=lambda path: path.stem)
def test_findings_match_markers(path: Path):
    findings = lint_paths([path])
    assert {(finding.line, finding.code, finding.confidence.value) for finding in findings} == expected(path)


def test_every_case_has_positive_and_negative_lines():
    for path in CASES:
        marked = expected(path)
        assert marked, path.name
        assert len([line for line in path.read_text().splitlines() if line.strip()]) > 2 * len(marked)



def test_reading_call_sites_is_bounded_on_deeply_chained_helpers():
    """Each call site read is a body read afresh: in a module of helpers calling helpers the readings stop at
    a fixed budget (the plain answer stands past it), so the lint stays fast."""
    import ast

    from synchunt.lint.bindings import build_scopes
    from synchunt.lint.imports import module_imports
    from synchunt.lint.provenance import Classifier
    from synchunt.lint.provenance.passing import MAX_READS

    lines = ["import torch", "def f0(a, b) -> torch.Tensor:", "    return a + b"]
    for level in range(1, 30):
        lines += [f"def f{level}(a, b) -> torch.Tensor:",
                  f"    x = f{level - 1}(a, b) + f{level - 1}(b, a) + f{level - 1}(a, a)",
                  f"    return x * f{level - 1}(x, torch.tensor(1))"]
    lines += ["def main(n: int):"] + [f"    v{j} = f29(torch.tensor(n), torch.tensor({j})).item()" for j in range(100)]
    tree = ast.parse("\n".join(lines) + "\n")
    scopes = build_scopes(tree)
    classifier = Classifier(*module_imports(tree), scopes, tree)
    main = scopes[id(tree.body[-1])]
    for statement in tree.body[-1].body:
        classifier.where(statement.value.func.value, main, statement.lineno)  # type: ignore[attr-defined]  # f29(...)
    assert 0 < classifier.readings <= MAX_READS

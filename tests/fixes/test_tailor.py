"""Tailoring without checking: finding the node from a line (and column), the catalogue's pattern names, the
serialised rewrite, and that importing or tailoring never imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from synchunt.findings import Finding, Rewrite
from synchunt.fixes import PATTERNS, tailor, tailor_findings
from synchunt.rules import RULES

SEED = ("import torch\n\nclass Pool:\n    def load(self, indices):\n"
        "        return indices[indices % self.dcp_size == self.dcp_rank] // self.dcp_size\n")


def test_every_pattern_a_rule_names_exists_and_every_pattern_is_named() -> None:
    named = {name for rule in RULES for name in rule.fix_patterns}
    assert named <= set(PATTERNS), sorted(named - set(PATTERNS))
    assert set(PATTERNS) <= named, sorted(set(PATTERNS) - named)
    for pattern in PATTERNS.values():
        assert pattern.title and pattern.doc and pattern.triggers, pattern.name


def test_the_lint_docs_describe_every_pattern() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "lint.md").read_text(encoding="utf-8")
    fixes = docs[docs.index("## Fixes"):docs.index("## The real-fix benchmark")]
    for name in PATTERNS:
        assert f"| `{name}` |" in fixes, f"docs/lint.md's Fixes table lacks {name}"


def test_line_alone_finds_the_syncing_expression() -> None:
    rewrite = tailor("SH101", SEED, 5)
    assert rewrite is not None and rewrite.replacement == "indices[self.dcp_rank::self.dcp_size]"
    assert (rewrite.line, rewrite.column, rewrite.end_line) == (5, 16, 5)
    assert not rewrite.checked and rewrite.check == "not checked"


def test_a_runtime_line_inside_a_split_statement_finds_it() -> None:
    source = ("import torch\n\ndef f(indices, n, r):\n    return torch.cat([\n        indices[\n"
              "            indices % n == r\n        ],\n    ])\n")
    rewrite = tailor("SH101", source, 6)  # the line a runtime frame may report, inside the subscript
    assert rewrite is not None and " ".join(rewrite.replacement.split()) == "indices[r::n]"


def test_a_column_picks_one_of_two_syncs_on_a_line() -> None:
    source = "import torch\n\ndef f(a, b):\n    total = a.item() + b.item()\n    return total\n"
    line = source.splitlines()[3]
    first = tailor("SH109", source, 4, column=line.index("a.item") + 1)
    second = tailor("SH109", source, 4, column=line.index("b.item") + 1)
    assert first is not None and second is not None
    assert (first.original, first.replacement) == ("a.item()", "a")
    assert (second.original, second.replacement) == ("b.item()", "b")
    assert tailor("SH109", source, 4).original == "a.item()"  # type: ignore[union-attr]  (the line alone: the first)


def test_no_rewrite_for_other_rules_code_that_does_not_parse_or_lacks_torch() -> None:
    assert tailor("SH101", SEED, 4) is None  # the `def` line
    assert tailor("SH999", SEED, 5) is None
    assert tailor("SH101", "def broken(:\n", 1) is None
    assert tailor("SH101", SEED.replace("import torch\n", "#\n"), 5) is not None  # a slice needs no torch
    no_torch = "def total(x, keep):\n    return x[keep].sum()\n"
    assert tailor("SH101", no_torch, 2) is None  # `torch.where` needs the module's torch


def test_the_module_torch_alias_is_used() -> None:
    source = "import torch as th\n\ndef total(x, keep):\n    return x[keep].sum()\n"
    assert tailor("SH101", source, 4).replacement == "th.where(keep, x, 0).sum()"  # type: ignore[union-attr]


def test_rewrite_round_trips_through_msgspec_and_the_finding_dict() -> None:
    rewrite = tailor("SH101", SEED, 5)
    assert rewrite is not None
    assert msgspec.json.decode(msgspec.json.encode(rewrite), type=Rewrite) == rewrite
    finding = Finding("SH101", "mask", "pool.py", 5, 16, fix=rewrite)
    assert Finding.from_dict(json.loads(json.dumps(finding.to_dict()))) == finding


def test_tailor_findings_reads_each_file_once_and_skips_problems() -> None:
    reads: list[str] = []

    def read(path: str) -> str:
        reads.append(path)
        return SEED

    findings = [Finding("SH101", "mask", "pool.py", 5, 16), Finding("SH109", "read", "pool.py", 4, 1),
                Finding("parse-error", "bad", "other.py", 1, is_problem=True)]
    result = tailor_findings(findings, read)
    assert reads == ["pool.py"]
    assert result[0].fix is not None and result[1].fix is None and result[2].fix is None


@pytest.mark.parametrize("module", ["synchunt.fixes", "synchunt.fixes.apply", "synchunt.cli.lint_fixes"])
def test_importing_and_tailoring_never_imports_torch(module: str) -> None:
    code = (f"import sys, importlib; importlib.import_module({module!r})\n"
            "from synchunt.fixes import tailor\n"
            f"assert tailor('SH101', {SEED!r}, 5) is not None\n"
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_function_is_walked_once_however_many_findings_it_holds(monkeypatch) -> None:
    """Thousands of findings in one function (the hostile corpus's 5,000 ``.item()`` reads in a loop): what the
    function binds is worked out once, not once a finding (that walk made the lint quadratic: 55 s for 2,000)."""
    from synchunt.fixes import source
    from synchunt.lint import lint_source

    text = "import torch\ndef f(t, r):\n" + "    for i in r:\n        v = t.sum().item()\n" * 300
    walks: list[int] = []
    scope_of = source._Scope.of.__func__

    def counted(cls, function):
        walks.append(id(function))
        return scope_of(cls, function)

    monkeypatch.setattr(source._Scope, "of", classmethod(counted))
    findings = [f for f in lint_source(text, "many.py") if not f.is_problem]
    tailored = tailor_findings(findings, lambda path: text)
    assert len(findings) == 300 and sum(f.fix is not None for f in tailored) == 300
    assert len(walks) == len(set(walks)) == 1

"""`synchunt lint --fix`, `--unsafe-fixes`, `--fix-diff` and `--check-fixes` on real files in a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.errors import UsageError

pytest.importorskip("torch")
runner = CliRunner()

SAFE = "import torch\n\ndef buf():\n    return torch.tensor([0], dtype=torch.int, device='cuda')\n"
CONDITIONAL = ("import torch\n\ndef dcp_kernel_indices(indices: torch.Tensor, dcp_size: int, dcp_rank: int):\n"
               "    return indices[indices % dcp_size == dcp_rank] // dcp_size\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "buf.py").write_text(SAFE)
    (tmp_path / "pool.py").write_text(CONDITIONAL)
    return tmp_path


def lint(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["lint", *args])


def test_fix_applies_only_rewrites_without_a_condition(tree: Path) -> None:
    result = lint(str(tree), "--fix")
    assert (tree / "buf.py").read_text() == SAFE.replace("torch.tensor([0],", "torch.zeros(1,")
    assert (tree / "pool.py").read_text() == CONDITIONAL
    assert "fixed 1 finding in 1 file; 1 conditional rewrite need --unsafe-fixes" in result.stderr
    assert "pool.py" in result.stdout and "buf.py" not in result.stdout  # the finding left, with its rewrite
    assert "fix [modulo-mask-slice, conditional, checked]: indices[dcp_rank::dcp_size]" in result.stdout
    assert result.exit_code == 1


def test_unsafe_fixes_apply_conditional_rewrites_too(tree: Path) -> None:
    result = lint(str(tree), "--fix", "--unsafe-fixes")
    assert "indices[dcp_rank::dcp_size] // dcp_size" in (tree / "pool.py").read_text()
    assert "fixed 2 findings in 2 files" in result.stderr
    assert result.exit_code == 0, result.stdout


def test_fix_diff_prints_the_diff_and_changes_nothing(tree: Path) -> None:
    result = lint(str(tree), "--fix-diff", "--unsafe-fixes")
    assert result.exit_code == 1
    assert "-    return indices[indices % dcp_size == dcp_rank] // dcp_size" in result.stdout
    assert "+    return indices[dcp_rank::dcp_size] // dcp_size" in result.stdout
    assert (tree / "pool.py").read_text() == CONDITIONAL and (tree / "buf.py").read_text() == SAFE
    assert "would fix 2 findings in 2 files" in result.stderr
    out = tree / "fixes.diff"
    assert lint(str(tree / "pool.py"), "--fix-diff", "-o", str(out)).exit_code == 0  # conditional only: no diff
    assert out.read_text() == ""


def test_check_fixes_reports_checked_rewrites_in_json(tree: Path) -> None:
    result = lint(str(tree / "pool.py"), "--check-fixes", "-f", "json")
    document = json.loads(result.stdout)
    fix = document["findings"][0]["fix"]
    assert fix["tailored"]["replacement"] == "indices[dcp_rank::dcp_size]" and fix["tailored"]["checked"] is True
    assert fix["example"]["label"] == "the rule's example, not a rewrite of this line"
    assert (tree / "pool.py").read_text() == CONDITIONAL


def test_plain_lint_shows_unchecked_rewrites(tree: Path) -> None:
    document = json.loads(lint(str(tree / "pool.py"), "-f", "json").stdout)
    assert document["findings"][0]["fix"]["tailored"]["checked"] is False


@pytest.mark.parametrize("flags", [["--fix", "--fix-diff"], ["--unsafe-fixes"]])
def test_contradictory_flags_are_a_usage_error(tree: Path, flags: list[str]) -> None:
    result = lint(str(tree), *flags)
    assert isinstance(result.exception, UsageError) and "--fix" in str(result.exception)
    assert (tree / "pool.py").read_text() == CONDITIONAL

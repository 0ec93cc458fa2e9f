"""The real-fix benchmark's manifest is well formed, and the benchmark runs (on mirrors when present)."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from synchunt.rules import RULES_BY_CODE

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "benchmarks" / "lint_real_fixes.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("lint_real_fixes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_manifest_shape():
    benchmark = load_benchmark()
    fixes = benchmark.load_manifest()
    assert len(fixes) >= 80
    assert len({fix.repo for fix in fixes}) >= 6
    for fix in fixes:
        assert len(fix.commit) == 40 and len(fix.parent) == 40 and fix.commit != fix.parent
        assert fix.file.endswith(".py") and fix.sync_line > 0 and all(line > 0 for line in fix.fixed_lines)
        assert fix.rule == "SH30x" or fix.rule in RULES_BY_CODE, fix.rule
        assert fix.note and fix.pattern
    assert len({(fix.repo, fix.commit, fix.file, fix.sync_line) for fix in fixes}) == len(fixes)
    assert Counter(fix.split for fix in fixes).keys() == {"dev", "held-out"}


def test_manifest_rejects_missing_fields(tmp_path: Path):
    benchmark = load_benchmark()
    broken = tmp_path / "fixes.toml"
    broken.write_text('[[fix]]\nrepo = "a/b"\n')
    with pytest.raises(ValueError, match="fix #0: 'commit'"):
        benchmark.load_manifest(broken)


def test_without_mirrors_it_says_so_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert load_benchmark().main(["--mirrors", str(tmp_path)]) == 0
    assert "mirrors absent" in capsys.readouterr().out

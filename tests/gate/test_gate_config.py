"""The gate reads the project's ``[tool.synchunt]`` as the lint does: ignored codes, excluded files and
per-file ignores are not counted, and the verdict says how many syncs that set aside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synchunt.cli import app

runner = CliRunner()
MASKED = Path(__file__).resolve().parents[2] / "traces" / "samples" / "hicache-dcp-masked-cpu.pt.trace.json.gz"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _gate(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["gate", str(MASKED), *args])


@pytest.mark.parametrize("table", ['ignore = ["SH101"]', 'select = ["SH3"]',
                                   'exclude = ["workloads/hicache_dcp/*"]',
                                   'per-file-ignores = { "workloads/*" = ["SH1"] }'])
def test_what_the_configuration_sets_aside_is_not_counted(project: Path, table: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.synchunt]\n{table}\n")
    result = _gate()
    assert result.exit_code == 0, result.output
    assert "0 syncs counted" in result.output and "54 not counted by [tool.synchunt]" in " ".join(result.output.split())


def test_without_a_configuration_every_sync_counts(project: Path) -> None:
    assert os.listdir(project) == []
    result = _gate()
    assert result.exit_code == 1 and "54 syncs counted" in result.output


def test_a_bad_configuration_is_a_usage_error(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.synchunt]\nignore = ["SH9"]\n')
    result = _gate()
    assert result.exit_code != 0 and "unknown rule code or prefix 'SH9'" in str(result.exception)

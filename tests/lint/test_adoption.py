"""Adoption on a large code base: baselines that survive moved lines, --diff, --context, --statistics, test
files skipped by default, and the help text's configuration table name."""

from __future__ import annotations

import subprocess

from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.lint import lint_paths
from synchunt.lint.baseline import new_findings, read_baseline, write_baseline

SOURCE = ("import torch\n\nclass M(torch.nn.Module):\n    def __init__(self):\n"
          "        self.n = torch.ones(2).cuda().sum().item()\n\n"
          "    def forward(self, x):\n        return x.cuda().nonzero()\n")


def test_baseline_survives_moved_lines_and_reports_new_findings(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(SOURCE)
    baseline = tmp_path / "baseline.json"
    assert write_baseline(lint_paths([source], select=["SH1", "SH201"]), baseline, tmp_path) == 2
    source.write_text("# a comment\n\n" + SOURCE)  # every line moved down
    kept, known = new_findings(lint_paths([source], select=["SH1", "SH201"]), read_baseline(baseline), tmp_path)
    assert kept == [] and known == 2
    source.write_text(SOURCE + "\n    def step(self, x):\n        return x.cuda().tolist()\n")
    kept, _ = new_findings(lint_paths([source], select=["SH1", "SH201"]), read_baseline(baseline), tmp_path)
    assert [(finding.code, finding.context) for finding in kept] == [("SH201", "step")]


def test_context_of_each_finding_and_the_filter(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(SOURCE)
    assert {(finding.code, finding.context) for finding in lint_paths([source], select=["SH1", "SH201"])} == {
        ("SH109", "cold"), ("SH103", "step")}
    result = CliRunner().invoke(app, ["lint", str(source), "--context", "step", "-f", "json"])
    assert '"SH103"' in result.output and '"SH109"' not in result.output and '"context": "step"' in result.output


def test_statistics_and_skipped_tests(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(SOURCE)
    (tmp_path / "model.py").write_text(SOURCE)
    (tmp_path / "testing.py").write_text(SOURCE)  # test helpers shipped in a package (`assert_close`)
    result = CliRunner().invoke(app, ["lint", str(tmp_path), "--statistics"])
    assert "SH103" in result.output and "2 test and benchmark files skipped" in result.output
    result = CliRunner().invoke(app, ["lint", str(tmp_path), "--include-tests", "--statistics"])
    assert "in 3 files" in result.output


def test_diff_keeps_only_changed_lines(tmp_path):
    def git(*arguments):
        subprocess.run(["git", *arguments], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "model.py").write_text(SOURCE)
    git("add", ".")
    git("commit", "-qm", "base")
    (tmp_path / "model.py").write_text(SOURCE + "\n    def step(self, x):\n        return x.cuda().tolist()\n")
    result = CliRunner().invoke(app, ["lint", str(tmp_path / "model.py"), "--diff", "HEAD", "-f", "json"])
    assert '"SH201"' in result.output and '"SH103"' not in result.output


def test_help_names_the_configuration_table():
    result = CliRunner().invoke(app, ["lint", "--help"], terminal_width=200)
    assert "[tool.synchunt]" in result.output

"""Adoption on a large code base: baselines that survive moved lines, --diff, --context, --statistics, test
files skipped by default, and the help text's configuration table name."""

from __future__ import annotations

import subprocess

from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.errors import UsageError
from synchunt.lint import lint_paths
from synchunt.lint.baseline import new_findings, read_baseline, write_baseline

SOURCE = ("import torch\n\nclass M(torch.nn.Module):\n    def __init__(self):\n"
          "        self.n = torch.ones(2).cuda().sum().item()\n\n"
          "    def forward(self, x):\n        return x.cuda().nonzero()\n")


def _git_repo(root):
    def git(*arguments):
        subprocess.run(["git", *arguments], cwd=root, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    return git


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
    git = _git_repo(tmp_path)
    (tmp_path / "model.py").write_text(SOURCE)
    git("add", ".")
    git("commit", "-qm", "base")
    (tmp_path / "model.py").write_text(SOURCE + "\n    def step(self, x):\n        return x.cuda().tolist()\n")
    result = CliRunner().invoke(app, ["lint", str(tmp_path / "model.py"), "--diff", "HEAD", "-f", "json"])
    assert '"SH201"' in result.output and '"SH103"' not in result.output


def test_help_names_the_configuration_table():
    result = CliRunner().invoke(app, ["lint", "--help"], terminal_width=200)
    assert "[tool.synchunt]" in result.output


SCHEDULER = ("import torch\n\n\nclass Scheduler:\n    def __init__(self):\n        self.lens = torch.ones(4).cuda()\n\n"
             "    def step(self):\n        n = self.lens.sum().item()\n        return n\n")
ADDED_ABOVE = SCHEDULER.replace("        n = self.lens", "        m = self.lens.sum().item()\n        n = self.lens")


def _lines(result) -> list[int]:
    import json

    return [finding["line"] for finding in json.loads(result.output)["findings"]]


def test_a_copy_added_above_a_recorded_line_is_the_new_finding(tmp_path):
    """The function now holds the expression twice: with --diff the new line is reported, not the recorded one,
    so both filters together still report it (a CI job using both must not pass a new sync)."""
    git = _git_repo(tmp_path)
    source = tmp_path / "sched.py"
    source.write_text(SCHEDULER)
    git("add", ".")
    git("commit", "-qm", "base")
    runner = CliRunner()
    assert runner.invoke(app, ["lint", str(source), "--write-baseline", str(tmp_path / "b.json")]).exit_code == 0
    source.write_text("# moved\n# down\n" + ADDED_ABOVE)
    new_line = ADDED_ABOVE.splitlines().index("        m = self.lens.sum().item()") + 3
    both = runner.invoke(app, ["lint", str(source), "--baseline", str(tmp_path / "b.json"), "--diff", "HEAD",
                               "-f", "json", "--select", "SH109"])
    assert _lines(both) == [new_line]
    # Without the changes a copy above cannot be told from one below: one finding, the later line
    alone = runner.invoke(app, ["lint", str(source), "--baseline", str(tmp_path / "b.json"), "-f", "json",
                                "--select", "SH109"])
    assert _lines(alone) == [new_line + 1]


def test_write_baseline_replaces_a_baseline_but_no_other_file_without_force(tmp_path):
    source = tmp_path / "sched.py"
    source.write_text(SCHEDULER)
    notes = tmp_path / "notes.txt"
    notes.write_text("my important notes\n")
    runner = CliRunner()
    refused = runner.invoke(app, ["lint", str(source), "--write-baseline", str(notes)])
    assert isinstance(refused.exception, UsageError) and "pass --force" in str(refused.exception)
    assert notes.read_text() == "my important notes\n"
    baseline = tmp_path / "b.json"
    for _ in range(2):  # re-recording a baseline needs no --force
        assert runner.invoke(app, ["lint", str(source), "--write-baseline", str(baseline)]).exit_code == 0
    assert runner.invoke(app, ["lint", str(source), "--write-baseline", str(notes), "--force"]).exit_code == 0
    assert read_baseline(notes)
    placeholder = tmp_path / "empty.json"
    placeholder.touch()  # an empty file holds nothing to lose
    assert runner.invoke(app, ["lint", str(source), "--write-baseline", str(placeholder)]).exit_code == 0


def test_a_baseline_of_the_tree_holds_what_one_file_alone_reports_higher(tmp_path):
    """Nothing calls `evict`: low confidence in the whole package, medium when its file is linted alone (a
    pre-commit hook). The baseline of the tree still holds it, so the hook reports nothing."""
    package = tmp_path / "serve"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kv.py").write_text("import torch\n\n\ndef evict(t: torch.Tensor):\n    return t.sum().item()\n")
    (package / "loop.py").write_text("from serve import kv\n\n\ndef run(t):\n    return t.cuda().nonzero()\n")
    runner = CliRunner()
    baseline = tmp_path / "b.json"
    assert runner.invoke(app, ["lint", str(package), "--write-baseline", str(baseline)]).exit_code == 0
    alone = runner.invoke(app, ["lint", str(package / "kv.py"), "-f", "json"])
    assert _lines(alone) == [5]  # reported when linted alone
    hook = runner.invoke(app, ["lint", str(package / "kv.py"), "--baseline", str(baseline), "-f", "json"])
    assert hook.exit_code == 0 and _lines(hook) == []


def test_fix_with_a_baseline_rewrites_only_the_findings_it_reports(tmp_path):
    """--fix applies to what is reported: a finding the baseline accepted is left as the team accepted it."""
    source = tmp_path / "m.py"
    body = "import torch\n\n\ndef a(dev):\n    return torch.tensor([0, 0], device=dev)\n"
    source.write_text(body)
    runner = CliRunner()
    assert runner.invoke(app, ["lint", str(source), "--write-baseline", str(tmp_path / "b.json")]).exit_code == 0
    source.write_text(body + "\n\ndef c(dev):\n    return torch.tensor([0, 0], device=dev)\n")
    fixed = runner.invoke(app, ["lint", str(source), "--baseline", str(tmp_path / "b.json"), "--fix",
                                "--unsafe-fixes", "-f", "json"])
    lines = source.read_text().splitlines()
    assert lines[4] == "    return torch.tensor([0, 0], device=dev)"  # accepted: untouched
    assert lines[8] == "    return torch.zeros(2, dtype=torch.long, device=dev)"  # reported: fixed
    assert fixed.exit_code == 0 and '"findings": []' in fixed.output  # and the accepted one not reported again


def test_fix_reports_what_the_fixed_file_still_has(tmp_path):
    """A second finding on a fixed line, or a read a rewrite moved, is still reported after --fix (exit 1)."""
    source = tmp_path / "b.py"
    source.write_text("import torch\n\n\ndef f(x, dev):\n    y = torch.tensor([0, 0]).to(dev); n = x.nonzero()\n"
                      "    return y, n\n")
    result = CliRunner().invoke(app, ["lint", str(source), "--fix", "--unsafe-fixes", "-f", "json"])
    assert "torch.zeros(2" in source.read_text()
    assert result.exit_code == 1 and '"SH103"' in result.output


def test_fix_writes_through_a_link_and_leaves_hard_links_alone(tmp_path):
    """The file a symlink names is fixed and the link stays a link; a hard-linked file is not split."""
    import os

    body = "import torch\n\n\ndef a(dev):\n    return torch.tensor([0, 0], device=dev)\n"
    fixed = "    return torch.zeros(2, dtype=torch.long, device=dev)"
    real = tmp_path / "real.py"
    real.write_text(body)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    hard = tmp_path / "hard.py"
    hard.write_text(body)
    os.link(hard, tmp_path / "hard_twin.py")
    runner = CliRunner()
    runner.invoke(app, ["lint", str(link), "--fix", "--unsafe-fixes"])
    assert link.is_symlink() and real.read_text().splitlines()[4] == fixed
    result = runner.invoke(app, ["lint", str(hard), "--fix", "--unsafe-fixes"])
    assert hard.read_text() == body and hard.stat().st_nlink == 2
    assert "hard links" in result.output

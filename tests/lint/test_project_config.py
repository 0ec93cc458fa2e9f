"""`[tool.synchunt]` in pyproject.toml, --exclude, symlink loops, pathological sources, the pre-commit hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.config import SynchuntConfig, load_config
from synchunt.errors import UsageError
from synchunt.findings import Confidence
from synchunt.lint import PARSE_ERROR, iter_python_files, lint_paths, lint_source

REPO_ROOT = Path(__file__).resolve().parents[2]
ITEM = "import torch\ndef f(x: torch.Tensor):\n    return x.item()\n"  # SH109 medium
SYNC = "import torch\ndef g():\n    torch.cuda.synchronize()\n"  # SH301 high
NAMED = "import torch\ndef h(y_cpu):\n    return y_cpu.item()\n"  # SH109 low


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "item.py").write_text(ITEM)
    (tmp_path / "src" / "pkg" / "sync.py").write_text(SYNC)
    (tmp_path / "src" / "pkg" / "named.py").write_text(NAMED)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "third.py").write_text(ITEM)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "bench.py").write_text(SYNC)
    return tmp_path


def write_config(root: Path, body: str) -> Path:
    path = root / "pyproject.toml"
    path.write_text('[project]\nname = "demo"\n\n[tool.synchunt]\n' + body)
    return path


def lint_json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["lint", *args, "--format", "json", "--fail-on", "never"])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}


def relative(findings: list[dict], root: Path) -> set[tuple[str, str]]:
    return {(str(Path(os.path.abspath(item["path"])).relative_to(root)), item["code"]) for item in findings}


def test_nearest_pyproject_with_the_table_wins(project: Path):
    write_config(project, 'select = ["SH1"]\nmin-confidence = "low"\n')
    (project / "src" / "pyproject.toml").write_text('[project]\nname = "inner"\n')  # no [tool.synchunt]
    config = load_config(project / "src" / "pkg")
    assert config.path == project / "pyproject.toml"
    assert config.select == ("SH1",) and config.min_confidence is Confidence.LOW
    assert load_config(project / "src" / "pkg" / "item.py").path == project / "pyproject.toml"


def test_no_configuration_is_the_default(tmp_path: Path):
    config = load_config(tmp_path)
    assert config == SynchuntConfig() and config.path is None


@pytest.mark.parametrize(("body", "message"), [
    ('selct = ["SH1"]\n', "unknown key 'selct'"),
    ('min_confidence = "low"\n', "did you mean min-confidence"),
    ('min-confidence = "sure"\n', "min-confidence must be one of high, medium, low"),
    ('select = "SH1"\n', "select must be a list of non-empty strings"),
    ('ignore = ["XY9"]\n', "'XY9' is not a rule code or prefix"),
    ('exclude = [1]\n', "exclude must be a list"),
    ('per-file-ignores = ["a"]\n', "per-file-ignores must be a table"),
    ('per-file-ignores = { "a/b" = "SH1" }\n', "per-file-ignores: a/b must be a list"),
    ('select = [\n', "cannot read"),
])
def test_bad_tables_are_usage_errors_naming_file_and_key(project: Path, body: str, message: str):
    path = write_config(project, body)
    with pytest.raises(UsageError, match=message) as raised:
        load_config(project)
    assert str(path) in str(raised.value)
    assert isinstance(CliRunner().invoke(app, ["lint", str(project / "src")]).exception, UsageError)


def test_lint_reads_select_ignore_confidence_exclude_and_per_file_ignores(project: Path):
    write_config(project, 'ignore = ["SH301"]\nmin-confidence = "low"\nexclude = ["vendor"]\n'
                          'per-file-ignores = { "src/pkg/named.py" = ["SH109"] }\n')
    code, document = lint_json(str(project))
    assert code == 0
    assert relative(document["findings"], project) == {("src/pkg/item.py", "SH109")}


def test_command_line_overrides_the_configuration(project: Path):
    write_config(project, 'ignore = ["SH301"]\nexclude = ["vendor"]\n')
    _, document = lint_json(str(project), "--select", "SH3")  # --select replaces select and its ignores
    assert relative(document["findings"], project) == {("src/pkg/sync.py", "SH301"), ("scripts/bench.py", "SH301")}
    _, document = lint_json(str(project), "--min-confidence", "low", "--ignore", "SH1")
    assert relative(document["findings"], project) == set()
    _, document = lint_json(str(project), "--exclude", str(project / "scripts") + "," + str(project / "src"))
    assert relative(document["findings"], project) == set()


def test_exclude_option_is_relative_to_the_current_folder(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(project)
    _, document = lint_json(".", "--exclude", "vendor", "--exclude", "scripts/*.py")
    assert relative(document["findings"], project) == {
        ("src/pkg/item.py", "SH109"), ("src/pkg/sync.py", "SH301")}


def test_explicit_files_are_excluded_too(project: Path):
    """pre-commit passes file names: the configuration's exclusions still apply to them."""
    write_config(project, 'exclude = ["vendor/*.py"]\n')
    _, document = lint_json(str(project / "vendor" / "third.py"), str(project / "src" / "pkg" / "item.py"))
    assert relative(document["findings"], project) == {("src/pkg/item.py", "SH109")}


def test_library_applies_the_configuration(project: Path):
    config = load_config(write_config(project, 'exclude = ["scripts"]\n'
                                               'per-file-ignores = { "*.py" = ["SH3"] }\n'))
    findings = lint_paths([project], config=config, min_confidence=Confidence.MEDIUM)
    assert {(Path(finding.path).name, finding.code) for finding in findings} == {
        ("item.py", "SH109"), ("third.py", "SH109")}


def test_symlink_loops_are_followed_once(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "item.py").write_text(ITEM)
    os.symlink(tmp_path, tmp_path / "pkg" / "loop")
    os.symlink(tmp_path / "pkg" / "item.py", tmp_path / "pkg" / "alias.py")
    files = list(iter_python_files([tmp_path, tmp_path / "pkg"]))
    assert len(files) == 1
    assert len(lint_paths([tmp_path])) == 1


def test_pathological_sources_are_one_problem_each_and_the_rest_is_linted(tmp_path: Path):
    (tmp_path / "deep.py").write_text("x = " + "-" * 20_000 + "1\n")
    (tmp_path / "lambdas.py").write_text("f = " + "lambda: " * 5_000 + "1\n")
    (tmp_path / "chain.py").write_text("x = " + "1 + " * 20_000 + "1\n")
    (tmp_path / "good.py").write_text(ITEM)
    findings = lint_paths([tmp_path])
    problems = sorted((Path(finding.path).name, finding.code) for finding in findings if finding.is_problem)
    assert problems == [("chain.py", PARSE_ERROR), ("deep.py", PARSE_ERROR), ("lambdas.py", PARSE_ERROR)]
    assert [finding.code for finding in findings if not finding.is_problem] == ["SH109"]
    assert all("nested too deeply" in finding.message for finding in findings if finding.is_problem)


def test_long_but_ordinary_expressions_are_linted():
    source = "import torch\nx = " + "1 + " * 2_000 + "torch.ones(3, device='cuda').item()\n"
    assert [finding.code for finding in lint_source(source, "long.py")] == ["SH109"]


def test_pathological_source_in_a_real_process_is_one_line_and_exit_2(tmp_path: Path):
    (tmp_path / "deep.py").write_text("x = " + "-" * 20_000 + "1\n")
    (tmp_path / "good.py").write_text(ITEM)
    completed = subprocess.run([sys.executable, "-m", "synchunt", "lint", str(tmp_path)], capture_output=True,
                               text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "300"})
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr + completed.stdout
    (problem,) = [line for line in completed.stdout.splitlines() if "deep.py" in line]
    assert problem.endswith(
        "deep.py:1:1: parse-error cannot lint: the source is nested too deeply to analyse (MemoryError)")
    assert "good.py:3:12: SH109" in completed.stdout


def test_pre_commit_hook_runs_the_lint_on_python_files():
    """The hook file is a one-item YAML list of plain `key: value` lines (no YAML parser needed to read it)."""
    lines = [line.strip() for line in (REPO_ROOT / ".pre-commit-hooks.yaml").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines[0].startswith("- id:")
    hook = dict(line.lstrip("- ").split(": ", 1) for line in lines)
    assert hook["id"] == "synchunt-lint" and hook["entry"] == "synchunt lint"
    assert hook["language"] == "python" and hook["types"] == "[python]"
    assert subprocess.run([sys.executable, "-m", "synchunt", *hook["entry"].split()[1:], "--help"],
                          capture_output=True, timeout=120, check=False).returncode == 0


def test_an_internal_error_costs_one_file_not_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from synchunt.lint import engine

    (tmp_path / "a_bad.py").write_text(ITEM)
    (tmp_path / "b_good.py").write_text(SYNC)
    original = engine.ModuleLinter.run

    def run(self):  # the lint breaks on one file only
        if self.path.endswith("a_bad.py"):
            raise KeyError("boom")
        return original(self)

    monkeypatch.setattr(engine.ModuleLinter, "run", run)
    findings = lint_paths([tmp_path])
    assert [(Path(finding.path).name, finding.code, finding.is_problem) for finding in findings] == [
        ("a_bad.py", PARSE_ERROR, True), ("b_good.py", "SH301", False)]
    assert "internal error (KeyError" in findings[0].message


def test_unknown_rule_codes_in_the_table_name_the_file(project: Path):
    path = write_config(project, 'per-file-ignores = { "scripts/*" = ["SH999"] }\n')
    config = load_config(project)  # well formed: the codes are checked against the catalogue by the command
    with pytest.raises(UsageError, match=r"per-file-ignores: scripts/\*: unknown rule code or prefix 'SH999'"):
        config.check_codes(("SH101", "SH301"))
    result = CliRunner().invoke(app, ["lint", str(project / "src")])
    assert isinstance(result.exception, UsageError) and str(path) in str(result.exception)


STEPS = ("import torch\n"
         "def run_iteration(x: torch.Tensor):\n    return x.item()\n"
         "def rebuild_index(x: torch.Tensor):\n    return x.item()\n"
         "def helper_unnamed(x: torch.Tensor):\n    return x.item()\n")


def contexts(document: dict) -> dict[str, str]:
    return {item["scope"]: item["context"] for item in document["findings"]}


def test_step_functions_mark_entry_points_as_the_step_path(tmp_path: Path):
    (tmp_path / "loop.py").write_text(STEPS)
    _, before = lint_json(str(tmp_path))
    write_config(tmp_path, 'step-functions = ["run_*"]\n')
    _, after = lint_json(str(tmp_path))
    assert contexts(before)["run_iteration"] == "unknown"
    assert contexts(after) == {"run_iteration": "step", "rebuild_index": "unknown", "helper_unnamed": "unknown"}


def test_cold_functions_mark_rare_functions_as_cold(tmp_path: Path):
    (tmp_path / "loop.py").write_text(STEPS)
    write_config(tmp_path, 'cold-functions = ["rebuild_*"]\n')
    _, document = lint_json(str(tmp_path))
    assert contexts(document) == {"run_iteration": "unknown", "rebuild_index": "cold", "helper_unnamed": "unknown"}


def test_exclude_tests_false_lints_test_files(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_item.py").write_text(ITEM)
    (tmp_path / "item.py").write_text(ITEM)
    _, skipped = lint_json(str(tmp_path))
    write_config(tmp_path, "exclude-tests = false\n")
    _, linted = lint_json(str(tmp_path))
    assert relative(skipped["findings"], tmp_path) == {("item.py", "SH109")}
    assert relative(linted["findings"], tmp_path) == {("item.py", "SH109"), ("tests/test_item.py", "SH109")}


def test_test_files_say_what_counts_as_a_test_file(tmp_path: Path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "item_check.py").write_text(ITEM)
    (tmp_path / "test_item.py").write_text(ITEM)
    write_config(tmp_path, 'test-files = ["checks"]\n')
    _, document = lint_json(str(tmp_path))
    # `checks/` is now a test folder (skipped) and `test_*.py` no longer is (the defaults are replaced)
    assert relative(document["findings"], tmp_path) == {("test_item.py", "SH109")}

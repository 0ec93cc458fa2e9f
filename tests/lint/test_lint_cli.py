"""`synchunt lint` through typer's CliRunner and a real subprocess: formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from synchunt.cli import app
from synchunt.errors import UsageError

runner = CliRunner()

LOOP = "import torch\ndef f(x: torch.Tensor):\n    for _ in range(3):\n        y = x[x > 0]\n    return y\n"
WARN = "import torch\ndef f(x: torch.Tensor):\n    return x.item()\n"
UNSURE = "import torch\ndef f(x: torch.Tensor, y_cpu):\n    return y_cpu.item()\n"


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "loop.py").write_text(LOOP)
    (tmp_path / "warn.py").write_text(WARN)
    (tmp_path / "unsure.py").write_text(UNSURE)
    return tmp_path


def invoke(*args: str):
    return runner.invoke(app, ["lint", *args])


def test_exit_1_on_findings_at_or_above_fail_on(tree):
    assert invoke(str(tree / "loop.py"), "--fail-on", "error").exit_code == 1
    assert invoke(str(tree / "warn.py"), "--fail-on", "error").exit_code == 0
    assert invoke(str(tree / "warn.py")).exit_code == 1  # default: warning
    assert invoke(str(tree / "warn.py"), "--fail-on", "never").exit_code == 0


def test_low_confidence_hidden_by_default_and_notes_do_not_fail(tree):
    hidden = invoke(str(tree / "unsure.py"), "--format", "json")
    assert hidden.exit_code == 0 and json.loads(hidden.stdout)["findings"] == []
    shown = invoke(str(tree / "unsure.py"), "--format", "json", "--min-confidence", "low")
    assert [item["severity"] for item in json.loads(shown.stdout)["findings"]] == ["note"]
    assert shown.exit_code == 0
    assert invoke(str(tree / "unsure.py"), "--min-confidence", "low", "--fail-on", "note").exit_code == 1


def test_select_ignore_and_formats(tree):
    result = invoke(str(tree), "--format", "json", "--select", "SH1,SH2", "--ignore", "SH109")
    codes = [item["code"] for item in json.loads(result.stdout)["findings"]]
    assert codes == ["SH101"]
    sarif = json.loads(invoke(str(tree), "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    assert all(rule["id"] != "SH203" for rule in sarif["runs"][0]["tool"]["driver"]["rules"])  # no static form
    github = invoke(str(tree), "--format", "github").stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in github] == ["::error", "::warning"]
    text = invoke(str(tree)).stdout
    assert "loop.py:4:13: SH101 error" in text and "2 findings (1 error, 1 warning) in 3 files" in text


def test_output_file(tree, tmp_path):
    target = tmp_path / "out.sarif"
    result = invoke(str(tree / "warn.py"), "--format", "sarif", "--output", str(target))
    assert result.stdout == "" and json.loads(target.read_text())["runs"][0]["results"][0]["ruleId"] == "SH109"
    text_target = tmp_path / "out.txt"
    invoke(str(tree / "warn.py"), "--output", str(text_target))
    assert "SH109 warning" in text_target.read_text()


def test_exit_2_on_unparseable_file(tree):
    (tree / "broken.py").write_text("def (:\n")
    result = invoke(str(tree), "--format", "json")
    assert result.exit_code == 2
    assert [item["path"].rsplit("/", 1)[-1] for item in json.loads(result.stdout)["problems"]] == ["broken.py"]


def test_bad_input_raises_usage_error(tree):
    assert isinstance(invoke(str(tree / "absent.py")).exception, UsageError)
    assert isinstance(invoke(str(tree), "--select", "XY1").exception, UsageError)
    assert invoke(str(tree), "--format", "xml").exit_code == 2


def test_missing_path_is_one_line_and_exit_2_in_a_real_process(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-c", "from synchunt.cli import main; main()", "lint", str(tmp_path / "absent.py")],
        capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert completed.stderr.strip().splitlines() == [f"error: no such file or directory: {tmp_path / 'absent.py'}"]


def test_output_to_a_folder_is_a_usage_error(tmp_path):
    source = tmp_path / "code.py"
    source.write_text("import torch\nx = torch.arange(3).cuda().item()\n")
    result = CliRunner().invoke(app, ["lint", str(source), "-o", str(tmp_path)])
    assert isinstance(result.exception, UsageError) and "is a folder" in str(result.exception)
    written = tmp_path / "out" / "findings.txt"
    result = CliRunner().invoke(app, ["lint", str(source), "-o", str(written)])
    assert result.exit_code == 1 and "SH109" in written.read_text()

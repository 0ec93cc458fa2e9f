"""`synchunt audit` through typer's CliRunner and as a real subprocess: formats and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import synchunt.capture.registry as registry_module
from synchunt.capture import registered_workloads
from synchunt.capture.workload import Workload
from synchunt.cli import app
from synchunt.errors import UsageError

runner = CliRunner()


def test_audit_cli_real_subset_exits_0_with_the_matrix() -> None:
    result = runner.invoke(app, ["audit", "dcp-kv-filter", "host-pool-free"])
    assert result.exit_code == 0, result.output
    assert "dcp-kv-filter" in result.output and "host-pool-free" in result.output
    assert "yes*" in result.output and result.output.rstrip().splitlines()[-1].startswith("PASS")


def test_audit_cli_exits_1_when_a_fixed_variant_syncs(toys: dict[str, Workload],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "_TABLE", {"honest": toys["honest"], "leaky-fixed": toys["leaky-fixed"]})
    result = runner.invoke(app, ["audit", "--format", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert [c["path"] for c in data["cells"] if not c["passed"]] == ["leaky-fixed"]
    assert [c["role"] for c in data["cells"] if not c["passed"]] == ["fixed"]


def test_audit_cli_exits_1_when_a_bad_variant_is_silent(toys: dict[str, Workload],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "_TABLE", {"silent-bad": toys["silent-bad"]})
    result = runner.invoke(app, ["audit"])
    assert result.exit_code == 1 and "silent-bad bad: the bad variant shows no sync" in result.output


@pytest.mark.parametrize("arguments", [["audit", "no-such-path"], ["audit", "--device", "tpu", "dcp-kv-filter"]])
def test_audit_cli_bad_input_is_a_usage_error(arguments: list[str]) -> None:
    result = runner.invoke(app, arguments)
    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2


def test_audit_cli_unknown_format_exits_2() -> None:
    result = runner.invoke(app, ["audit", "--format", "sarif"])
    assert result.exit_code == 2


def test_audit_cli_writes_json_and_html_files(tmp_path: Path) -> None:
    json_path, html_path, traces = tmp_path / "audit.json", tmp_path / "out" / "audit.html", tmp_path / "traces"
    result = runner.invoke(app, ["audit", "paged-allocator-free", "--format", "json", "-o", str(json_path),
                                 "--out", str(traces)])
    assert result.exit_code == 0, result.output
    data = json.loads(json_path.read_text())
    assert data["schema"] == "synchunt.audit/1" and len(data["cells"]) == 2
    kept = sorted(p.name for p in traces.iterdir())
    assert len(kept) == 2 and all(name.startswith("paged-allocator-free-") for name in kept)
    assert {Path(c["trace_file"]).name for c in data["cells"]} == set(kept)
    result = runner.invoke(app, ["audit", "paged-allocator-free", "--format", "html", "-o", str(html_path)])
    assert result.exit_code == 0 and html_path.read_text().startswith("<!DOCTYPE html>")


def test_audit_cli_full_run_of_every_path_passes_quickly() -> None:
    """The CI command, as a real process: every registered path, both variants, both signals."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "synchunt", "audit", "--device", "cpu", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads(done.stdout)
    assert [c["path"] for c in data["cells"][::2]] == list(registered_workloads())
    assert all(c["passed"] for c in data["cells"])
    assert data["summary"]["disagree"] == 0 and data["summary"]["unknown"] == 0
    bad = [c for c in data["cells"] if c["role"] == "bad"]
    assert all(not c["missing_rules"] for c in bad), [c["path"] for c in bad if c["missing_rules"]]
    assert elapsed < 120

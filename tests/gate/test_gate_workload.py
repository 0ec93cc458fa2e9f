"""The project's own CI gate: the sliced HiCache load path on CPU gates at 0, the masked one fails with its 54
syncs (2 per layer × 27 layers). Profiles full-size workloads, hence `slow`."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from typer.testing import CliRunner

from synchunt.cli import app

REPO = Path(__file__).resolve().parents[2]
SYNCHUNT = Path(sys.executable).parent / "synchunt"
runner = CliRunner()

pytestmark = pytest.mark.slow


def test_the_sliced_hicache_workload_gates_at_zero():
    result = runner.invoke(app, ["gate", "--target", "hicache-dcp", "--impl", "sliced", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "sync-free" in result.output
    assert result.output.rstrip().splitlines()[-1] == "gate passed: 0 syncs counted, budget 0"


def test_the_masked_hicache_workload_fails_the_gate_with_54_syncs():
    result = runner.invoke(app, ["gate", "--target", "hicache-dcp", "--impl", "masked", "--device", "cpu",
                                 "--format", "github"])
    assert result.exit_code == 1, result.output
    (annotation,) = result.stdout.splitlines()
    assert annotation.startswith("::error file=workloads/hicache_dcp/translate.py,line=")
    assert "::54 latent syncs (SH101 boolean-mask-index: aten::nonzero) on scheduler" in annotation
    assert "start_loading › layer_0..26 ×2 each (27 scopes)" in annotation
    assert "gate failed: 54 syncs counted, budget 0 (54 latent syncs on thread scheduler)" in result.stderr


def test_the_masked_gate_in_a_real_process_keeps_its_trace_and_writes_junit(tmp_path):
    report = tmp_path / "gate.xml"
    done = subprocess.run([str(SYNCHUNT), "gate", "--target", "hicache-dcp", "--impl", "masked", "--device", "cpu",
                           "--out", str(tmp_path / "traces"), "--format", "junit", "--output", str(report)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr
    assert "gate failed: 54 syncs counted, budget 0" in done.stderr
    (trace,) = (tmp_path / "traces").glob("hicache-dcp-masked-*.pt.trace.json.gz")
    assert f"trace: {trace}" in done.stderr
    case = ElementTree.parse(report).find("testsuite/testcase[@name='start_loading']")
    assert case.get("classname") == "synchunt.gate.scheduler"
    assert case.find("failure").get("message") == "54 syncs on thread scheduler in start_loading"
    assert len(case.find("failure").text.splitlines()) == 54
    # The kept trace gates the same without re-profiling.
    again = runner.invoke(app, ["gate", str(trace), "--max-syncs", "54"])
    assert again.exit_code == 0 and "gate passed: 54 syncs counted, budget 54" in " ".join(again.output.split())

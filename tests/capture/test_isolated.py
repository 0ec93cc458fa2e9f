"""The CLI profiles a target in a child process: its prints never reach a machine-readable document, and a target
that exits the process, crashes or hangs is "nothing to judge" (exit 2), never a verdict."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.capture.synchunt_process import run_synchunt

TARGETS = textwrap.dedent("""
    import os
    import time

    import torch


    def loud():
        print("hello from the target")
        x = torch.arange(8)
        return x[x > 3]


    def quitter():
        os._exit(0)


    def crasher():
        os.abort()


    def sleeper():
        time.sleep(60)


    def shouter():
        print("\\x1b]0;retitled\\x07\\x1b[2Jcleared")
        print("::error file=evil.py,line=1::forged")
        x = torch.arange(8)
        return x[x > 3]


    def idler():
        return sum(range(10))
""")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("isolated")
    (root / "targets.py").write_text(TARGETS)
    return root


def test_a_target_that_prints_leaves_the_json_document_clean(folder: Path) -> None:
    done = run_synchunt("profile", "targets.py:loud", "--out", "traces", "--no-report", "--no-guard", "-f", "json",
                     cwd=folder)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # nothing but the analysis on stdout
    assert document["summary"]["syncs"] == 1 and "hello from the target" in done.stderr


def test_a_target_that_prints_leaves_the_sarif_log_clean(folder: Path) -> None:
    done = run_synchunt("gate", "--target", "targets.py:loud", "-f", "sarif", cwd=folder)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["version"] == "2.1.0" and "hello from the target" in done.stderr


@pytest.mark.parametrize(("function", "reason"), [("quitter", "exited with status 0 before returning"),
                                                   ("crasher", "was killed by signal")])
def test_a_target_that_ends_the_process_is_nothing_to_judge(folder: Path, function: str, reason: str) -> None:
    done = run_synchunt("gate", "--target", f"targets.py:{function}", cwd=folder)
    assert done.returncode == 2 and reason in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error:") and "Traceback" not in done.stderr
    assert "gate passed" not in done.stdout + done.stderr


def test_a_target_past_its_timeout_is_stopped(folder: Path) -> None:
    done = run_synchunt("profile", "targets.py:sleeper", "--timeout", "3", "--out", "traces", cwd=folder)
    assert done.returncode == 2 and "ran past --timeout 3 s" in done.stderr


def test_a_target_cannot_drive_the_terminal_or_forge_a_ci_annotation(folder: Path) -> None:
    """Its output is passed on line by line with escape sequences shown, and no line starting a CI command."""
    done = run_synchunt("gate", "--target", "targets.py:shouter", "-f", "sarif", cwd=folder)
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "\\x1b]0;retitled\\x07\\x1b[2Jcleared" in done.stderr
    assert not any(line.startswith("::") for line in done.stderr.splitlines())
    assert "  ::error file=evil.py,line=1::forged" in done.stderr


def test_a_target_that_runs_no_torch_op_is_nothing_to_judge(folder: Path) -> None:
    done = run_synchunt("gate", "--target", "targets.py:idler", cwd=folder)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no PyTorch operator or runtime call was recorded" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: nothing to judge")

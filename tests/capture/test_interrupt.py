"""Ctrl-C during `synchunt profile`: one line saying so, exit 130, and the child that runs the target stopped with
it, with what it started (left running, it wrote a trace after the user had seen the run end)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TARGET = textwrap.dedent("""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path


    def stuck():
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # a data loader's, say
        Path("worker.pid").write_text(str(worker.pid))
        Path("child.pid").write_text(str(os.getpid()))
        time.sleep(120)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def _profile_until_the_target_runs(tmp_path: Path) -> tuple[subprocess.Popen[str], int, int]:
    """`synchunt profile` of the stuck target, in a session of its own, once the target runs: (the run, the pid of
    the child running the target, the pid of the worker the target started)."""
    (tmp_path / "slow.py").write_text(TARGET)
    run = subprocess.Popen([sys.executable, "-m", "synchunt", "profile", "slow.py:stuck", "--out", "traces"],
                           cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    marker = tmp_path / "child.pid"
    deadline = time.monotonic() + 120
    while not marker.exists() or not marker.read_text():
        assert run.poll() is None and time.monotonic() < deadline, "the target never started"
        time.sleep(0.1)
    return run, int(marker.read_text()), int((tmp_path / "worker.pid").read_text())


@pytest.mark.skipif(sys.platform != "linux", reason="signals and /proc as on Linux")
@pytest.mark.parametrize("whole_group", [False, True], ids=["parent only", "process group"])
def test_interrupting_profile_says_so_and_stops_the_child(tmp_path: Path, whole_group: bool) -> None:
    run, child, worker = _profile_until_the_target_runs(tmp_path)
    (os.killpg if whole_group else os.kill)(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130
    assert err.strip().splitlines()[-1:] == ["error: interrupted"], err
    assert not _alive(child)
    deadline = time.monotonic() + 10  # the worker's parent is gone: it is killed, and reaped by init
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker), "a process the target started outlived the interrupt"
    assert not list((tmp_path / "traces").glob("*.json.gz"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the child asks Linux to be killed with its parent")
def test_a_parent_killed_by_another_signal_takes_the_child_with_it(tmp_path: Path) -> None:
    """`kill` (SIGTERM) or a terminal closing stops the parent without a word; the child, in a session of its own,
    must not run on and write a trace later."""
    run, child, worker = _profile_until_the_target_runs(tmp_path)
    os.kill(run.pid, signal.SIGTERM)
    run.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)
    assert not list((tmp_path / "traces").glob("*.json.gz"))
    if _alive(worker):  # the target's own process: orphaned, not ours to keep
        os.kill(worker, signal.SIGKILL)

"""The benchmarks' quiet-machine check: a loaded run is reported as noise, never as a result."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("machine", Path(__file__).parents[2] / "benchmarks" / "machine.py")
machine = importlib.util.module_from_spec(SPEC)
sys.modules.setdefault("machine", machine)  # dataclasses look their module up
SPEC.loader.exec_module(machine)


def _verdict(monkeypatch: pytest.MonkeyPatch, loads: list[float], **after: float):
    readings = iter(loads)
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (next(readings), 0.0, 0.0))
    quiet = machine.Quietness.before()
    return quiet.after(**after)


def test_quiet_run_is_a_result(monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = _verdict(monkeypatch, [0.2, 0.4], baseline_ms=6.1, quiet_baseline_ms=6.0)
    assert verdict.quiet and verdict.exit_code == 0 and verdict.line.startswith("machine: quiet")


def test_load_before_or_after_is_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _verdict(monkeypatch, [5.0, 0.2]).quiet
    verdict = _verdict(monkeypatch, [0.2, 2.7])
    assert verdict.exit_code == machine.NOISE_EXIT and verdict.line.startswith("NOISE")
    assert _verdict(monkeypatch, [0.2, 1.7]).quiet  # the run's own process: one core of load after it


def test_inflated_baseline_is_noise_at_low_load(monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = _verdict(monkeypatch, [0.1, 0.1], baseline_ms=164.0, quiet_baseline_ms=6.0)
    assert not verdict.quiet and "baseline 164.00 ms" in verdict.line


def test_allow_loaded_prints_but_stays_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([4.0, 4.0])
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (next(readings), 0.0, 0.0))
    verdict = machine.Quietness(load_before=machine.load_average(), allow_loaded=True).after()
    assert verdict.exit_code == 0 and verdict.line.startswith("NOISE")


def test_every_benchmark_that_times_asks_whether_the_machine_is_quiet() -> None:
    """A benchmark that reads a clock reports through the quiet check (``Quietness``), so no timing taken on a
    loaded machine comes out as a result."""
    import re

    clocks = re.compile(r"\b(perf_counter|process_time|thread_time|monotonic)(_ns)?\(")
    benchmarks = Path(__file__).parents[2] / "benchmarks"
    timing = [path for path in sorted(benchmarks.rglob("*.py")) if clocks.search(path.read_text())]
    assert timing, "no benchmark reads a clock: the pattern is stale"
    helpers = {"machine.py", "bare_decode.py", "instrument.py", "profile_phases.py", "plain_run.py"}
    unchecked = [path.relative_to(benchmarks).as_posix() for path in timing
                 if path.name not in helpers and "Quietness" not in path.read_text()]
    assert unchecked == []

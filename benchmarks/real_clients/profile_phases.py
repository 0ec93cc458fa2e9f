"""Where `synchunt profile`'s time goes, phase by phase, in fresh processes laid out as the CLI lays them out.

    python benchmarks/real_clients/profile_phases.py parent              # the CLI process before the capture
    python benchmarks/real_clients/profile_phases.py child FILE.py OUT   # the capture child, then the analysis

Each prints one JSON object of seconds per phase. The child side wraps synchunt's capture functions from outside
(setup, each step, the guard pass, the trace export, the gzip write, the source map) to time them; a function that
is not where this script expects it is reported as missing, never guessed. benchmarks/profile_overhead.py runs
these and prints the medians.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any


class Clock:
    """Wall and CPU seconds (``time.process_time``: this process's own work, which a loaded machine inflates far
    less than wall time) of each phase, added up over its calls."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def add(self, name: str, wall: float, cpu: float) -> None:
        self.wall[name] = self.wall.get(name, 0.0) + wall
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu

    def phase(self, name: str) -> _Phase:
        return _Phase(self, name)

    def wrap(self, name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return function(*args, **kwargs)
        return wrapper

    def json(self, **extra: Any) -> dict[str, Any]:
        return {"wall": self.wall, "cpu": self.cpu, **extra}


class _Phase:
    def __init__(self, clock: Clock, name: str) -> None:
        self.clock, self.name = clock, name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc: object) -> None:
        self.clock.add(self.name, time.perf_counter() - self.wall, time.process_time() - self.cpu)


def parent() -> dict[str, Any]:
    clock = Clock()
    with clock.phase("parent: import synchunt.cli"):
        import synchunt.cli  # noqa: F401 - what `synchunt` loads before it parses the command line
    with clock.phase("parent: import torch (the check)"):
        import torch  # noqa: F401 - profile_command's import_torch()
    return clock.json()


def child(target_file: str, out: Path) -> dict[str, Any]:
    clock = Clock()
    missing: list[str] = []
    with clock.phase("child: import synchunt.capture"):
        from synchunt.capture import CaptureSettings, capture, resolve_target
    with clock.phase("child: import torch"):
        import torch
    with clock.phase("child: import the target (and its libraries)"):
        target = resolve_target(f"{target_file}:step", {}, setup="setup")

    steps: list[float] = []

    def step(state: Any, _step: Any = target.step) -> Any:
        begin = time.perf_counter()
        try:
            return _step(state)
        finally:
            steps.append(time.perf_counter() - begin)

    target = dataclasses.replace(target, setup=clock.wrap("child: setup()", target.setup), step=step)
    from synchunt.capture import profiler as capture_profiler

    for name, label in (("run_guarded", "child: guard pass (steps included)"),
                        ("write_gzip_with_metadata", "child: gzip + write"), ("build_source_map", "child: source map")):
        if hasattr(capture_profiler, name):
            setattr(capture_profiler, name, clock.wrap(label, getattr(capture_profiler, name)))
        else:
            missing.append(f"synchunt.capture.profiler.{name}")
    torch.profiler.profile.export_chrome_trace = clock.wrap("child: export_chrome_trace",
                                                            torch.profiler.profile.export_chrome_trace)
    settings = CaptureSettings()
    with clock.phase("child: capture() total"):
        captured = capture(target, out, settings)
    profiled = steps[: settings.warmup + settings.iterations]

    # The parent's work after the child returns (its imports included: the parent pays them too).
    with clock.phase("parent: load_trace (gunzip + parse)"):
        from synchunt.trace import load_trace

        trace = load_trace(captured.path)
    with clock.phase("parent: analyze"):
        from synchunt.attribute import analyze

        result = analyze(trace)
    with clock.phase("parent: HTML report"):
        from synchunt.cli.report import write_report

        write_report(result, [trace], out / "report.html")
    with clock.phase("parent: render JSON"):
        from synchunt.render.analysis import ANALYSIS_FORMATS
        from synchunt.render.registry import RenderOptions

        ANALYSIS_FORMATS.get("json")(result, RenderOptions(color=False, width=120))
    return clock.json(steps_profiled_wall=sum(profiled), steps_guarded_wall=sum(steps[len(profiled):]),
                      step_times=steps, trace_mb=captured.path.stat().st_size / 1e6, missing=missing)


if __name__ == "__main__":
    if sys.argv[1] == "parent":
        print(json.dumps(parent()))
    else:
        print(json.dumps(child(sys.argv[2], Path(sys.argv[3]))))

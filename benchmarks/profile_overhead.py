"""`synchunt profile`'s wall time against the plain run of the same target: import + set-up + the same steps.

    .venv/bin/python benchmarks/profile_overhead.py                      # every real-client target installed
    .venv/bin/python benchmarks/profile_overhead.py hf_llama_greedy --repeats 5 --phases

Goal (issue 24): profile ≤ 1.5 × plain + 1 s. Each repeat runs both, each in a fresh process, alternating which goes
first; the figures are medians. ``plain`` imports the target file, calls ``setup()`` and runs ``warmup + iterations``
steps (``benchmarks/real_clients/plain_run.py``); ``profile`` is ``synchunt profile FILE:step --setup setup`` as a
user runs it (report and guard on, JSON to a pipe). Wall seconds are the goal's unit; the children's CPU seconds
(user + system) are printed beside them because a loaded machine inflates them far less.

``--phases`` also runs ``benchmarks/real_clients/profile_phases.py`` to say where profile's time goes (parent and
child processes, imports, set-up, profiled steps, guard pass, export, gzip, parse, analysis, report).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import Quietness, add_quiet_options

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
REAL_CLIENTS = BENCH / "real_clients"
sys.path.insert(0, str(BENCH))

from real_clients import missing_library, truths  # noqa: E402

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}


def timed(command: list[str]) -> tuple[float, float]:
    """(wall s, children's CPU s) of one command, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} … exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(target_file: str, out: Path, warmup: int, iterations: int) -> dict[str, list[str]]:
    return {
        "plain": [sys.executable, str(REAL_CLIENTS / "plain_run.py"), target_file, str(warmup + iterations)],
        "profile": [sys.executable, "-m", "synchunt", "profile", f"{target_file}:step", "--setup", "setup",
                    "--out", str(out), "--format", "json", "--warmup", str(warmup), "--iterations", str(iterations)],
    }


def measure(target_file: str, repeats: int, warmup: int, iterations: int) -> dict[str, list[tuple[float, float]]]:
    runs: dict[str, list[tuple[float, float]]] = {"plain": [], "profile": []}
    with tempfile.TemporaryDirectory(prefix="profile-overhead-") as scratch:
        pair = commands(target_file, Path(scratch), warmup, iterations)
        for repeat in range(repeats):
            order = ("plain", "profile") if repeat % 2 == 0 else ("profile", "plain")
            for name in order:
                runs[name].append(timed(pair[name]))
    return runs


def phases(target_file: str, repeats: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="profile-phases-") as scratch:
            for argv in (["parent"], ["child", target_file, scratch]):
                start = time.perf_counter()
                done = subprocess.run([sys.executable, str(REAL_CLIENTS / "profile_phases.py"), *argv], cwd=REPO,
                                      env=ENV, capture_output=True, text=True)
                elapsed = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(f"profile_phases {argv[0]} failed: {done.stderr.strip()[-300:]}")
                result = json.loads(done.stdout.strip().splitlines()[-1])
                inside = sum(v for k, v in result["wall"].items() if not _inside_capture(k))
                wall.setdefault(f"{argv[0]}: interpreter start + exit", []).append(max(0.0, elapsed - inside))
                for name, value in result["wall"].items():
                    wall.setdefault(name, []).append(value)
                for name, value in result["cpu"].items():
                    cpu.setdefault(name, []).append(value)
                if argv[0] == "child":
                    wall.setdefault("child: steps under the profiler", []).append(result["steps_profiled_wall"])
                    if result["missing"]:
                        print(f"note: not found, not timed: {', '.join(result['missing'])}", file=sys.stderr)
    return wall, cpu


# Phases that happen inside capture(): they are parts of its total, not beside it.
_CAPTURE_PARTS = ("setup()", "guard pass", "gzip + write", "source map", "export_chrome_trace")


def _inside_capture(name: str) -> bool:
    return any(part in name for part in _CAPTURE_PARTS)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="real-client target names (default: all installed)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--phases", action="store_true", help="also time profile's phases (fresh processes)")
    add_quiet_options(parser)
    args = parser.parse_args()
    quiet = Quietness.before(args)
    known = truths()
    names = args.targets or [name for name, truth in known.items() if missing_library(truth) is None]
    print("| target | plain s | profile s | ratio | budget s (1.5x + 1) | within | plain CPU s | profile CPU s |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for name in names:
        runs = measure(known[name]["file"], args.repeats, args.warmup, args.iterations)
        plain, profile = (median([w for w, _ in runs[k]]) for k in ("plain", "profile"))
        plain_cpu, profile_cpu = (median([c for _, c in runs[k]]) for k in ("plain", "profile"))
        budget = 1.5 * plain + 1.0
        print(f"| {name} | {plain:.2f} | {profile:.2f} | {profile / plain:.2f} | {budget:.2f} | "
              f"{'yes' if profile <= budget else 'NO'} | {plain_cpu:.2f} | {profile_cpu:.2f} |", flush=True)
    if args.phases:
        for name in names:
            wall, cpu = phases(known[name]["file"], args.repeats)
            print(f"\n{name}: profile's phases, medians of {args.repeats} (wall s / CPU s)")
            for phase in wall:  # in the order the phases run: the CLI process, the capture child, the analysis
                print(f"  {phase:48s} {median(wall[phase]):7.2f}  {median(cpu.get(phase, [])):7.2f}")
    verdict = quiet.after()
    print(verdict.line)
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())

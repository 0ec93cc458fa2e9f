"""The load-loop benchmark runs end to end and ends with its ratio line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_load_loop_benchmark_prints_its_ratios_last() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "load_loop.py"), "--repeats", "1", "--warmup", "0",
         "--device", "cpu", "--allow-loaded"],
        capture_output=True, text=True, check=True, timeout=120,
    )
    lines = done.stdout.strip().splitlines()
    assert re.fullmatch(r"masked/none=\d+\.\d\d sliced/none=\d+\.\d\d", lines[-1])
    assert {line.split()[1] for line in lines if line.startswith("[cpu]")} == {"config", "masked", "sliced",
                                                                                 "none"}

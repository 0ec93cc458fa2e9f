"""``python -m synchunt`` as a user runs it: a real process, its own working folder, output captured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_synchunt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "synchunt", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)

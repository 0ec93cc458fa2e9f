"""The real-client corpus: its instrument, truth and scoring live in benchmarks/real_clients/ (outside the package)."""

from __future__ import annotations

import sys
from pathlib import Path

REAL_CLIENTS = Path(__file__).resolve().parents[2] / "benchmarks" / "real_clients"
sys.path.insert(0, str(REAL_CLIENTS))

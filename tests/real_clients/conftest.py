"""The real-client corpus: its instrument, truth and scoring live in benchmarks/real_clients/ (outside the package)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REAL_CLIENTS = Path(__file__).resolve().parents[2] / "benchmarks" / "real_clients"
sys.path.insert(0, str(REAL_CLIENTS))

# The targets build their models from configs: nothing may reach for a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

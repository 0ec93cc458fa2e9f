"""The trust tests' fixture: one batched run of every hostile case the session collected."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_runner import Result, run_cases
from trust_support import CORPUS, SEED


@pytest.fixture(scope="session")
def hostile_results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """Every collected ``case_id`` run once, side by side on two warm workers (the slowest first)."""
    wanted = {item.callspec.params["case_id"] for item in request.session.items
              if hasattr(item, "callspec") and "case_id" in item.callspec.params}
    ordered = sorted(wanted, key=lambda case_id: (-CORPUS[case_id].timeout_s, case_id))
    results = run_cases(ordered, seed=SEED, workers=2, root=tmp_path_factory.mktemp("hostile"))
    return {result.id: result for result in results}

"""The real traces written by others beside the checkout (``../shared/traces``), for the tests that read them."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"


def shared_trace_path(relative: str) -> Path:
    """``../shared/traces/<relative>``, or skip the test (with the reason) when it is not beside the checkout."""
    path = SHARED_TRACES / relative
    if not path.exists():
        pytest.skip(f"the shared real traces are not beside the checkout ({path})")
    return path

"""Shared fixtures: the real traces beside the checkout and traces profiled in this test session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_TRACES = REPO_ROOT.parent / "shared" / "traces" / "hta"


@pytest.fixture(scope="session")
def hta_traces() -> Path:
    if not SHARED_TRACES.is_dir():
        pytest.skip(f"the shared HTA traces are not beside the checkout ({SHARED_TRACES})")
    return SHARED_TRACES


@pytest.fixture(scope="session")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``profiled("hicache-dcp", impl="masked")`` → a trace captured once per session for those options."""
    from synchunt.capture import capture, resolve_target

    cache: dict[tuple, Path] = {}

    def run(target: str, *, small: bool = False, **options: object) -> Path:
        key = (target, small, tuple(sorted(options.items())))
        if key not in cache:
            out = tmp_path_factory.mktemp("traces")
            resolved = resolve_target(target, {k.replace("_", "-"): str(v) for k, v in options.items()}, small=small)
            cache[key] = capture(resolved, out).path
        return cache[key]

    return run

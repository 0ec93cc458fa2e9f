"""Shared fixtures: the real traces beside the checkout and traces profiled in this test session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from shared_traces import shared_trace_path

REPO_ROOT = Path(__file__).resolve().parents[1]
@pytest.fixture(scope="session")
def shared_trace() -> Callable[[str], Path]:
    """``shared_trace("hta/amd_trace/…json.gz")``: a real trace from ``../shared/traces`` (skips when absent)."""
    return shared_trace_path


@pytest.fixture(scope="session")
def hta_traces() -> Path:
    return shared_trace_path("hta")


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

"""Fixtures of the gate tests: one shared set of syncs (a profiled masked HiCache step on CPU, with Python call
sites, plus an in-repository GPU trace whose syncs have no Python frame; the real HTA traces for the tests that
read them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from synchunt.attribute import Analysis, analyze

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"


@pytest.fixture(scope="session")
def event_sync_trace() -> Path:
    """3 confirmed syncs (SH110 item, SH302 cudaEventSynchronize, SH301 cudaDeviceSynchronize), no frames: the
    in-repository fixture in the shape of HTA's critical_path/cuda_event_sync trace."""
    return FIXTURES / "GATE-three-confirmed-no-frames.json"


@pytest.fixture(scope="session")
def masked_small_trace(profiled: Callable[..., Path]) -> Path:
    """8 latent SH101 syncs (2 per layer, 4 layers) at translate.py's dcp_kernel_indices_masked."""
    return profiled("hicache-dcp", small=True, impl="masked", device="cpu")


@pytest.fixture(scope="session")
def shared_analysis(masked_small_trace: Path, event_sync_trace: Path) -> Analysis:
    return analyze([masked_small_trace, event_sync_trace])

"""What every figure shares: the font, plotly JSON, and one time unit per axis (µs, or ms from 1,000 µs on)."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

FONT = {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 12}


def time_unit(largest_us: float) -> tuple[float, str]:
    """The divisor and unit for an axis whose largest value is ``largest_us``: µs below 1,000 µs, ms below 1 s,
    then s, so that no tick reads ``150k``."""
    if largest_us >= 1e6:
        return 1e6, "s"
    if largest_us >= 1e3:
        return 1e3, "ms"
    return 1.0, "µs"


def in_unit(value_us: float, scale: float, unit: str) -> str:
    """``value_us`` in the axis's unit: bar labels and their axis agree."""
    return f"{value_us / scale:.1f} {unit}" if scale == 1.0 else f"{value_us / scale:.2f} {unit}"


def figure_json(figure: go.Figure) -> dict[str, Any]:
    return json.loads(figure.to_json(validate=False, engine="json"))

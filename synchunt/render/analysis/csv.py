"""The analysis as CSV: one row per sync, lists joined into one cell."""

from __future__ import annotations

from synchunt.attribute import Analysis
from synchunt.render.registry import Renderer, RenderOptions


def render_csv(analysis: Analysis, options: RenderOptions | None = None) -> str:
    frame = analysis.syncs.copy()
    frame["op_chain"] = frame["op_chain"].map(" > ".join)
    frame["scope_chain"] = frame["scope_chain"].map(" > ".join)
    frame["stack"] = frame["stack"].map(lambda s: " | ".join(f"{f['file']}:{f['line']} {f['function']}" for f in s))
    return frame.to_csv(index=False)


RENDERER = Renderer("csv", ".csv", "one row per sync", render_csv)

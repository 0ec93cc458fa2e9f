"""Machine-readable renderers of an analysis: JSON (the versioned contract) and CSV (one row per sync)."""

from __future__ import annotations

import json

from synchunt.attribute import Analysis


def render_json(analysis: Analysis) -> str:
    return json.dumps(analysis.to_json(), indent=2, ensure_ascii=False)


def render_csv(analysis: Analysis) -> str:
    frame = analysis.syncs.copy()
    frame["op_chain"] = frame["op_chain"].map(" > ".join)
    frame["scope_chain"] = frame["scope_chain"].map(" > ".join)
    frame["stack"] = frame["stack"].map(lambda s: " | ".join(f"{f['file']}:{f['line']} {f['function']}" for f in s))
    return frame.to_csv(index=False)

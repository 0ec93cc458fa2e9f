"""The comparison as a versioned JSON document (``synchunt.comparison/2``)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from synchunt.compare import Comparison
from synchunt.render.comparison.headline import headline, side_verdict
from synchunt.render.registry import Renderer, RenderOptions

SCHEMA = "synchunt.comparison/2"


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    sites = [{**asdict(s), "delta": s.delta, "stall_saved_us": s.stall_saved_us, "status": s.status}
             for s in comparison.sites]
    sides = {name: {**asdict(side), "verdict": side_verdict(side)}
             for name, side in (("before", comparison.before), ("after", comparison.after))}
    return {"schema": SCHEMA, "headline": headline(comparison), "changed": comparison.changed,
            "worse": comparison.worse, "noise": asdict(comparison.noise), **sides,
            "stall_saved_us": comparison.stall_saved_us, "ops_gone": list(comparison.ops_gone),
            "ops_new": list(comparison.ops_new), "sites": sites, "ops": [asdict(o) for o in comparison.ops],
            "scopes": [asdict(s) for s in comparison.scopes]}


def render_json(comparison: Comparison, options: RenderOptions | None = None) -> str:
    return json.dumps(comparison_document(comparison), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


RENDERER = Renderer("json", ".json", "the versioned JSON document (synchunt.comparison/2)", render_json)

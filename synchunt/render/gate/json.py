"""The gate result as JSON: the verdict, the budget, the counted and allowed syncs, the baseline's entries."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from synchunt.gate.evaluate import GateResult
from synchunt.render.gate.headline import gate_headline
from synchunt.render.registry import Renderer, RenderOptions

SCHEMA = "synchunt.gate/1"


def gate_document(result: GateResult) -> dict[str, Any]:
    return {"schema": SCHEMA, "passed": result.passed, "judged": result.judged,
            "missing_evidence": list(result.missing_evidence), "exit_code": result.exit_code,
            "headline": gate_headline(result), "budget": result.budget, "idle_budget_us": result.idle_budget_us,
            "counted_idle_us": result.counted_idle_us, "strict": result.strict,
            "counted": msgspec.to_builtins(result.counted), "allowed": msgspec.to_builtins(result.allowed),
            "baseline": None if not result.usage else {
                "path": result.baseline_path,
                "entries": [{"rule": u.entry.key.rule, "site": u.entry.key.site, "op": u.entry.key.op,
                             "reason": u.entry.reason, "max": u.entry.max_count,
                             "expires": u.entry.expires.isoformat() if u.entry.expires else None,
                             "matched": u.matched, "allowed": u.allowed, "status": u.status} for u in result.usage]},
            "traces": msgspec.to_builtins(result.analysis.traces)}


def render_json(result: GateResult, options: RenderOptions | None = None) -> str:
    return json.dumps(gate_document(result), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


RENDERER = Renderer("json", ".json", "the verdict and the syncs it counted (synchunt.gate/1)", render_json)

"""The audit as its versioned JSON document (``synchunt.audit/1``), re-renderable without running anything."""

from __future__ import annotations

import json

from synchunt.audit.model import AuditResult
from synchunt.render.registry import Renderer, RenderOptions


def render_json(result: AuditResult, options: RenderOptions | None = None) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


RENDERER = Renderer("json", ".json", "the versioned audit document (synchunt.audit/1)", render_json)

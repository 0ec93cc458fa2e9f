"""The analysis as its versioned JSON contract (strict JSON: a missing value is null, never NaN)."""

from __future__ import annotations

from synchunt.attribute import Analysis
from synchunt.attribute.document import encode
from synchunt.render.registry import Renderer, RenderOptions


def render_json(analysis: Analysis, options: RenderOptions | None = None) -> str:
    import msgspec

    return msgspec.json.format(encode(analysis), indent=2).decode("utf-8") + "\n"


RENDERER = Renderer("json", ".json", "the versioned JSON document (synchunt.analysis/2)", render_json)

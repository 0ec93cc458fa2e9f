"""The analysis as its versioned JSON contract (strict JSON: a missing value is null, never NaN)."""

from __future__ import annotations

from synchunt.attribute import Analysis
from synchunt.attribute.document import encode
from synchunt.render.registry import Renderer, RenderOptions


def render_json(analysis: Analysis, options: RenderOptions | None = None) -> bytes:
    """UTF-8 bytes, as written: a big analysis (thousands of syncs, megabytes) is not decoded to text only to be
    encoded again on the way out."""
    import msgspec

    return msgspec.json.format(encode(analysis), indent=2) + b"\n"


RENDERER = Renderer("json", ".json", "the versioned JSON document (synchunt.analysis/3)", render_json)

"""The catalogue as JSON: every field of every rule (what each stage matches included)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import msgspec

from synchunt.render.registry import Renderer, RenderOptions
from synchunt.rules import Rule


def render_json(rules: Sequence[Rule], options: RenderOptions | None = None) -> str:
    data = [{**msgspec.to_builtins(rule), "kind": rule.kind.value, "stages": list(rule.stages)} for rule in rules]
    return json.dumps(data, indent=2, default=str) + "\n"


RENDERER = Renderer("json", ".json", "every field of every rule", render_json)

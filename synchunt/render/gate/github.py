"""The gate result as GitHub Actions annotations: one per call site and rule of the counted syncs."""

from __future__ import annotations

from synchunt.gate.evaluate import GateResult
from synchunt.render.gate.findings import gate_findings
from synchunt.render.github import render_github as annotations
from synchunt.render.registry import Renderer, RenderOptions


def render_github(result: GateResult, options: RenderOptions | None = None) -> str:
    return annotations(gate_findings(result))


RENDERER = Renderer("github", ".txt", "GitHub Actions workflow commands (annotations on the syncing lines)",
                    render_github)

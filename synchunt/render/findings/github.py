"""Findings as GitHub Actions workflow commands (annotations on the PR's lines)."""

from __future__ import annotations

from synchunt.findings import FindingSet
from synchunt.render.github import render_github as annotations
from synchunt.render.registry import Renderer, RenderOptions


def render_github(findings: FindingSet, options: RenderOptions | None = None) -> str:
    return annotations(findings.findings)


RENDERER = Renderer("github", ".txt", "GitHub Actions annotations (::error/::warning/::notice)", render_github)

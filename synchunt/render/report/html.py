"""The stall report as one self-contained HTML page (no network access of any kind)."""

from __future__ import annotations

from synchunt.render.registry import Renderer, RenderOptions
from synchunt.report import StallReport


def render_html(report: StallReport, options: RenderOptions | None = None) -> str:
    from synchunt.render.html import render_page

    return render_page(report)


RENDERER = Renderer("html", ".html", "the self-contained HTML stall report", render_html)

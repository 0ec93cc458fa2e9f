"""The analysis as the HTML stall report (without timelines: those need the traces, see ``synchunt report``)."""

from __future__ import annotations

from synchunt.attribute import Analysis
from synchunt.render.registry import Renderer, RenderOptions


def render_html(analysis: Analysis, options: RenderOptions | None = None) -> str:
    from synchunt.render.html import render_page
    from synchunt.report import build_report

    return render_page(build_report(analysis))


RENDERER = Renderer("html", ".html", "the self-contained HTML stall report (no timeline without the traces)",
                    render_html)

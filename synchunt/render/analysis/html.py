"""The analysis as the HTML stall report: the report's own renderer over this analysis (its timelines need the
traces, which the CLI loads for ``--format html``; a saved analysis alone has none)."""

from __future__ import annotations

from synchunt.attribute import Analysis
from synchunt.render.registry import Renderer, RenderOptions


def render_html(analysis: Analysis, options: RenderOptions | None = None) -> str | bytes:
    from synchunt.render.report import REPORT_FORMATS
    from synchunt.report import build_report

    return REPORT_FORMATS.get("html")(build_report(analysis), options)


RENDERER = Renderer("html", ".html", "the self-contained HTML stall report", render_html)

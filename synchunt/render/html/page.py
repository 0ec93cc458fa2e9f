"""Page assembly: the template, its stylesheet and script, plotly.js and one JSON data island, all inline."""

from __future__ import annotations

import re
import secrets
from functools import cache
from importlib import resources
from typing import Any

from synchunt.attribute import Analysis
from synchunt.compare import Comparison
from synchunt.render.comparison.json import comparison_document
from synchunt.render.html import figures
from synchunt.render.html.escape import script_json
from synchunt.render.html.timeline import timeline_figure
from synchunt.render.html.view import build_model
from synchunt.report import ReportSide, StallReport

_PLACEHOLDER = re.compile(r"@(NONCE|VERSION|TITLE|CSS|DATA|PLOTLY|SCRIPT)@")


def render_page(report: StallReport) -> str:
    """The whole report as one HTML document (no external resources of any kind)."""
    sides = [_side(side) for side in report.sides]
    comparison = report.comparison
    if comparison is not None:
        sides[0]["heading"] = "Before: " + ", ".join(comparison.before.labels)
        sides[1]["heading"] = "After: " + ", ".join(comparison.after.labels)
    analyses = [side.analysis for side in report.sides]
    data = {"title": _title(analyses[0], comparison), "subtitle": _subtitle(analyses), "version": page_version(),
            "sides": sides, "comparison": _comparison(comparison)}
    return fill_shell("synchunt stall report", data, asset("page.js"), plotly=_plotly_js())


def fill_shell(title: str, data: Any, script: str, *, plotly: str = "") -> str:
    """A page on the report's shell (content security policy, stylesheet, data island, DOM helpers).

    ``data`` enters only through :func:`script_json`; ``script`` runs after ``dom.js`` under the page's nonce.
    """
    values = {"NONCE": secrets.token_urlsafe(18), "VERSION": page_version(), "TITLE": title, "CSS": asset("page.css"),
              "DATA": script_json(data), "PLOTLY": plotly, "SCRIPT": asset("dom.js") + "\n" + script}
    # One pass: inserted text (plotly.js, the data) is never scanned for placeholders again.
    return _PLACEHOLDER.sub(lambda match: values[match[1]], asset("page.html"))


def _side(side: ReportSide) -> dict[str, Any]:
    model = build_model(side.analysis, side.sources)
    timelines = [{"title": timeline.title, "note": timeline.note(), "decimated": timeline.decimated,
                  "gpu_lanes": timeline.stream_lanes, "figure": timeline_figure(timeline)}
                 for timeline in side.timelines]
    data: dict[str, Any] = {"key": side.key, "heading": None, "model": model.as_json(), "timelines": timelines,
                            "figures": {}}
    if model.sites:
        data["figures"] = {"sites": figures.sites_figure(model)}
        if len(model.scopes) > 1:  # one scope: a single bar says nothing the table does not
            data["figures"]["scopes"] = figures.scopes_figure(model)
        if any(path.frames for site in model.sites for path in site.paths):  # else no Python frames to draw
            data["figures"]["callpath"] = figures.callpath_figure(model)
    return data


def _comparison(comparison: Comparison | None) -> dict[str, Any] | None:
    if comparison is None:
        return None
    return {**comparison_document(comparison), "figure": figures.compare_figure(comparison)}


def _labels(analysis: Analysis) -> str:
    names = []
    for info in analysis.traces:
        meta = info.synchunt or {}
        names.append(" ".join(str(v) for v in (meta.get("target"), meta.get("label")) if v) or info.path)
    return ", ".join(dict.fromkeys(names))


def _title(analysis: Analysis, comparison: Comparison | None) -> str:
    if comparison is not None:
        return f"synchunt: {', '.join(comparison.before.labels)} → {', '.join(comparison.after.labels)}"
    return f"synchunt stall report: {_labels(analysis)}"


def _subtitle(analyses: list[Analysis]) -> str:
    traces = sum(len(analysis.traces) for analysis in analyses)
    modes = sorted({info.mode for analysis in analyses for info in analysis.traces})
    return f"{traces} trace{'s' if traces != 1 else ''} · detection mode {', '.join(modes)}"


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@cache
def asset(name: str) -> str:
    """A file of the pages' assets (template, stylesheet, scripts)."""
    return resources.files("synchunt.render.html").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def page_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("synchunt")
    except PackageNotFoundError:
        return "unknown"

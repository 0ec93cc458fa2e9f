"""Page assembly: the template, its stylesheet and script, plotly.js and one JSON data island, all inline."""

from __future__ import annotations

import re
import secrets
from functools import cache
from importlib import resources
from typing import Any

from synchunt.attribute import Analysis
from synchunt.report.compare import Comparison
from synchunt.report.html import figures
from synchunt.report.html.escape import script_json
from synchunt.report.html.model import build_model
from synchunt.report.html.timeline import DEFAULT_BUDGET, build_timeline
from synchunt.trace import Trace

_PLACEHOLDER = re.compile(r"@(NONCE|VERSION|TITLE|CSS|DATA|PLOTLY|SCRIPT)@")


def render_page(analysis: Analysis, traces: list[Trace], *, comparison: Comparison | None = None,
                after: Analysis | None = None, after_traces: list[Trace] | None = None,
                thread: str | None = None, budget: int = DEFAULT_BUDGET) -> str:
    """The whole report as one HTML document (no external resources of any kind)."""
    before_key = "before" if comparison is not None else "report"
    sides = [_side(before_key, analysis, traces, thread, budget)]
    if comparison is not None and after is not None:
        sides[0]["heading"] = "Before: " + ", ".join(comparison.before.labels)
        sides.append(_side("after", after, after_traces or [], thread, budget))
        sides[1]["heading"] = "After: " + ", ".join(comparison.after.labels)
    data = {"title": _title(analysis, comparison), "subtitle": _subtitle(analysis, after), "version": page_version(),
            "sides": sides, "comparison": _comparison(comparison)}
    return fill_shell("synchunt stall report", data, _asset("page.js"), plotly=_plotly_js())


def fill_shell(title: str, data: Any, script: str, *, plotly: str = "") -> str:
    """A page on the report's shell (content security policy, stylesheet, data island, DOM helpers).

    ``data`` enters only through :func:`script_json`; ``script`` runs after ``dom.js`` under the page's nonce.
    """
    values = {"NONCE": secrets.token_urlsafe(18), "VERSION": page_version(), "TITLE": title, "CSS": _asset("page.css"),
              "DATA": script_json(data), "PLOTLY": plotly, "SCRIPT": _asset("dom.js") + "\n" + script}
    # One pass: inserted text (plotly.js, the data) is never scanned for placeholders again.
    return _PLACEHOLDER.sub(lambda match: values[match[1]], _asset("page.html"))


def _side(key: str, analysis: Analysis, traces: list[Trace], thread: str | None, budget: int) -> dict[str, Any]:
    model = build_model(analysis)
    timelines = []
    wanted = {info.path for info in analysis.traces}
    for trace in traces:
        if str(trace.path) not in wanted:
            continue
        timeline = build_timeline(trace, analysis, thread=thread, budget=budget)
        timelines.append({"title": timeline.title, "note": timeline.note(), "decimated": timeline.decimated,
                          "figure": figures.timeline_figure(timeline)})
    side: dict[str, Any] = {"key": key, "heading": None, "model": model.as_json(), "timelines": timelines,
                            "figures": {}}
    if model.sites:
        side["figures"] = {"sites": figures.sites_figure(model), "scopes": figures.scopes_figure(model),
                           "callpath": figures.callpath_figure(model)}
    return side


def _comparison(comparison: Comparison | None) -> dict[str, Any] | None:
    if comparison is None:
        return None
    return {**comparison.to_json(), "figure": figures.compare_figure(comparison)}


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


def _subtitle(analysis: Analysis, after: Analysis | None) -> str:
    traces = len(analysis.traces) + (len(after.traces) if after is not None else 0)
    modes = sorted({info.mode for info in analysis.traces} | {i.mode for i in (after.traces if after else ())})
    return f"{traces} trace{'s' if traces != 1 else ''} · detection mode {', '.join(modes)}"


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


@cache
def _asset(name: str) -> str:
    return resources.files("synchunt.report.html").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def page_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("synchunt")
    except PackageNotFoundError:
        return "unknown"

"""Plotly figures of the report, as plotly JSON. Every trace-derived label goes through ``plotly_text``."""

from __future__ import annotations

import json
import math
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from synchunt.compare import Comparison
from synchunt.render.html.escape import plotly_text
from synchunt.render.html.view import ReportModel, SiteView
from synchunt.render.units import format_us
from synchunt.report.timeline import Timeline
from synchunt.sites import FrameFilter

SCOPE_COLOUR = "#9db4d3"
OP_COLOUR = "#c9ccd1"
SYNC_OP_COLOUR = "#f2a65a"
BEFORE_COLOUR = "#d9534f"
AFTER_COLOUR = "#2e9d5b"
USER_FRAME_COLOUR = "#8fb3e3"
SITE_COLOURS = ["#d9534f", "#5b8bd0", "#f2a65a", "#8e6bbf", "#4cae9b", "#c9a227", "#7f8c8d"]
_FONT = {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 12}


def timeline_figure(timeline: Timeline) -> dict[str, Any]:
    figure = go.Figure()
    bars = timeline.bars
    for kind, colour, name in (("scope", SCOPE_COLOUR, "scope"), ("op", OP_COLOUR, "op"),
                               ("sync-op", SYNC_OP_COLOUR, "op around a sync")):
        rows = bars[bars["kind"] == kind]
        if rows.empty:
            continue
        figure.add_bar(
            orientation="h", y=rows["lane"].map(plotly_text).tolist(), x=rows["dur_ms"].tolist(),
            base=rows["start_ms"].tolist(), name=name, marker={"color": colour, "line": {"width": 0}},
            width=0.7, hovertemplate="%{hovertext}<extra></extra>",
            hovertext=[f"<b>{plotly_text(n)}</b><br>{format_us(d * 1e3)} at {s:.3f} ms"
                       for n, d, s in zip(rows["name"], rows["dur_ms"], rows["start_ms"], strict=True)])
    syncs = timeline.syncs
    if len(syncs):
        biggest = max(float(syncs["stall_us"].max()), 1e-9)
        figure.add_scatter(
            x=syncs["t_ms"].tolist(), y=syncs["lane"].map(plotly_text).tolist(), mode="markers", name="sync",
            marker={"size": [8 + 18 * math.sqrt(max(v, 0.0) / biggest) for v in syncs["stall_us"]],
                    "color": syncs["stall_us"].tolist(), "colorscale": "YlOrRd", "cmin": 0, "cmax": biggest,
                    "line": {"color": "#7a1f1f", "width": 1}, "symbol": "diamond",
                    "colorbar": {"title": {"text": "stall µs"}, "thickness": 12, "len": 0.8}},
            hovertemplate="%{hovertext}<extra></extra>",
            hovertext=[_sync_hover(row) for row in syncs.itertuples(index=False)])
    xaxis: dict[str, Any] = {"title": {"text": "ms since the first event shown"}, "zeroline": False}
    focus = timeline.sync_focus()
    if focus is not None:
        xaxis["range"] = list(focus)
    height = 120 + 34 * max(len(timeline.lanes), 2)
    figure.update_layout(
        barmode="overlay", height=height, margin={"l": 10, "r": 10, "t": 10, "b": 40}, font=_FONT,
        legend={"orientation": "h", "y": -0.25 if height < 300 else -0.12}, dragmode="zoom", hovermode="closest",
        xaxis=xaxis,
        yaxis={"categoryorder": "array", "categoryarray": [plotly_text(lane) for lane in timeline.lanes],
               "autorange": "reversed", "automargin": True, "fixedrange": True})
    return _json(figure)


def sites_figure(model: ReportModel) -> dict[str, Any]:
    """Count and total stall per call site, side by side."""
    sites = list(reversed(model.sites))  # plotly draws the first category at the bottom
    labels = [plotly_text(short_site(s)) for s in sites]
    hover = [f"<b>{plotly_text(s.site)}</b><br>{s.count} syncs · {format_us(s.stall_us)} stall "
             f"({format_us(s.max_stall_us)} max)<br>{plotly_text(', '.join(s.rules))}" for s in sites]
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=("syncs", "stall (ms)"))
    figure.add_bar(orientation="h", y=labels, x=[s.count for s in sites], marker_color=BEFORE_COLOUR,
                   hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", row=1, col=1,
                   text=[str(s.count) for s in sites], textposition="auto")
    figure.add_bar(orientation="h", y=labels, x=[s.stall_us / 1e3 for s in sites], marker_color=SYNC_OP_COLOUR,
                   hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", row=1, col=2,
                   text=[format_us(s.stall_us) for s in sites], textposition="auto")
    figure.update_layout(showlegend=False, height=110 + 38 * len(sites), font=_FONT,
                         margin={"l": 10, "r": 10, "t": 30, "b": 30})
    figure.update_yaxes(automargin=True)
    return _json(figure)


def scopes_figure(model: ReportModel) -> dict[str, Any]:
    """Syncs per scope (``layer_0`` … ``layer_26``), stacked by call site: a regular pattern shows as a comb."""
    scopes = model.scopes
    short = _short_scopes([s.scope for s in scopes])
    figure = go.Figure()
    for number, site in enumerate(model.sites):
        counts = [scope.by_site.get(site.site, 0) for scope in scopes]
        figure.add_bar(x=[plotly_text(name) for name in short], y=counts, name=plotly_text(short_site(site)),
                       marker_color=SITE_COLOURS[number % len(SITE_COLOURS)],
                       hovertext=[f"<b>{plotly_text(scope.scope)}</b><br>{n} from {plotly_text(short_site(site))}"
                                  f"<br>{scope.count} syncs, {format_us(scope.stall_us)} stall in this scope"
                                  for scope, n in zip(scopes, counts, strict=True)],
                       hovertemplate="%{hovertext}<extra></extra>")
    figure.update_layout(barmode="stack", height=320, font=_FONT, margin={"l": 10, "r": 10, "t": 10, "b": 10},
                         legend={"orientation": "h", "y": 1.12}, showlegend=len(model.sites) > 1,
                         yaxis={"title": {"text": "syncs"}, "automargin": True, "rangemode": "tozero"},
                         xaxis={"automargin": True, "tickangle": -45 if len(scopes) > 8 else 0,
                                "categoryorder": "array", "categoryarray": [plotly_text(n) for n in short]})
    return _json(figure)


def callpath_figure(model: ReportModel) -> dict[str, Any]:
    """Icicle of the Python call paths (outermost frame at the root) down to each call site's ops."""
    ids: dict[tuple[str, ...], str] = {}
    labels, parents, values, hovers, colours = [], [], [], [], []
    user = FrameFilter()

    def node(path: tuple[str, ...], label: str, count: int, hover: str, colour: str) -> None:
        if path in ids:
            values[int(ids[path][1:])] += count
            return
        ids[path] = f"n{len(labels)}"
        labels.append(plotly_text(label))
        parents.append(ids[path[:-1]] if len(path) > 1 else "")
        values.append(count)
        hovers.append(hover)
        colours.append(colour)

    for site in model.sites:
        for stack, count in site.stacks:
            path: tuple[str, ...] = ()
            for frame in reversed(stack):  # innermost first in the analysis
                text = f"{frame['file']}:{frame['line']} {frame['function']}"
                path = (*path, text)
                node(path, f"{frame['function']} ({frame['file'].rsplit('/', 1)[-1]}:{frame['line']})", count,
                     plotly_text(text), USER_FRAME_COLOUR if user.is_user(frame["file"]) else OP_COLOUR)
            if site.op_chains:
                chain = site.op_chains[0][0] + (" …" if len(site.op_chains) > 1 else "")
                node((*path, "op:" + chain), chain, count,
                     f"<b>{plotly_text(chain)}</b><br>{plotly_text(', '.join(site.rules))}", BEFORE_COLOUR)
    figure = go.Figure(go.Icicle(ids=list(ids.values()), labels=labels, parents=parents, values=values,
                                 branchvalues="total", hovertext=hovers, marker={"colors": colours},
                                 hovertemplate="%{hovertext}<br>%{value} syncs<extra></extra>",
                                 tiling={"orientation": "v", "pad": 1}, pathbar={"visible": False},
                                 textinfo="label+value"))
    depth = max((len(path) for path in ids), default=1)
    figure.update_layout(height=40 + 30 * depth, font=_FONT, margin={"l": 4, "r": 4, "t": 4, "b": 4})
    return _json(figure)


def compare_figure(comparison: Comparison) -> dict[str, Any]:
    """Before/after syncs per call site and per scope."""
    figure = make_subplots(rows=1, cols=2, column_widths=[0.3, 0.7], horizontal_spacing=0.08,
                           subplot_titles=("syncs per call site", "syncs per scope"))
    sites = [plotly_text(short_label(s.site)) for s in comparison.sites]
    scopes = _short_scopes([s.key for s in comparison.scopes])
    for side, colour in (("before", BEFORE_COLOUR), ("after", AFTER_COLOUR)):
        figure.add_bar(x=sites, y=[getattr(s, side) for s in comparison.sites], name=side, marker_color=colour,
                       legendgroup=side, row=1, col=1)
        figure.add_bar(x=[plotly_text(n) for n in scopes], y=[getattr(s, side) for s in comparison.scopes],
                       name=side, marker_color=colour, legendgroup=side, showlegend=False, row=1, col=2)
    figure.update_layout(barmode="group", height=340, font=_FONT, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                         legend={"orientation": "h", "y": 1.18})
    figure.update_xaxes(automargin=True)
    figure.update_xaxes(tickangle=-45 if len(scopes) > 8 else 0, tickfont={"size": 10}, row=1, col=2)
    figure.update_yaxes(rangemode="tozero", automargin=True)
    return _json(figure)


def short_site(site: SiteView) -> str:
    return short_label(site.site)


def short_label(site: str) -> str:
    """``workloads/hicache_dcp/translate.py:18 fn`` → ``translate.py:18 fn``."""
    location, _, function = site.partition(" ")
    return f"{location.rsplit('/', 1)[-1]} {function}".strip()


def _short_scopes(scopes: list[str]) -> list[str]:
    """The innermost scope name when that is unambiguous, else the full chain."""
    inner = [scope.rsplit(" › ", 1)[-1] for scope in scopes]
    return inner if len(set(inner)) == len(inner) else scopes


def _sync_hover(row: Any) -> str:
    kind = "confirmed" if row.confirmed else "latent"
    return (f"<b>{plotly_text(row.op_chain)}</b><br>{plotly_text(row.site)}<br>{plotly_text(row.rule)} · "
            f"{kind} · stall {format_us(row.stall_us)}<br>{plotly_text(row.scope or '(no scope)')}")


def _json(figure: go.Figure) -> dict[str, Any]:
    return json.loads(figure.to_json(validate=False, engine="json"))

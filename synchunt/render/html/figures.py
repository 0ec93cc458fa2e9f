"""Plotly figures of the report, as plotly JSON. Every trace-derived label goes through ``plotly_text``."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from synchunt.attribute import SiteSummary
from synchunt.compare import Comparison
from synchunt.render.html.escape import plotly_text
from synchunt.render.html.view import MAX_STACKS_PER_SITE, STACK_INNER, STACK_OUTER, ReportModel
from synchunt.units import format_us

FONT = {"family": "system-ui, -apple-system, Segoe UI, sans-serif", "size": 12}


def time_unit(largest_us: float) -> tuple[float, str]:
    """The divisor and unit for an axis whose largest value is ``largest_us``: µs below 1,000 µs, ms below 1 s,
    then s, so that no tick reads ``150k``."""
    if largest_us >= 1e6:
        return 1e6, "s"
    if largest_us >= 1e3:
        return 1e3, "ms"
    return 1.0, "µs"


def in_unit(value_us: float, scale: float, unit: str) -> str:
    """``value_us`` in the axis's unit: bar labels and their axis agree."""
    return f"{value_us / scale:.1f} {unit}" if scale == 1.0 else f"{value_us / scale:.2f} {unit}"


def figure_json(figure: go.Figure) -> dict[str, Any]:
    return json.loads(figure.to_json(validate=False, engine="json"))


SCOPE_COLOUR = "#9db4d3"
OP_COLOUR = "#c9ccd1"
SYNC_OP_COLOUR = "#f2a65a"
BEFORE_COLOUR = "#d9534f"
AFTER_COLOUR = "#2e9d5b"
USER_FRAME_COLOUR = "#8fb3e3"
IDLE_COLOUR = "#b03a2e"
DELAY_COLOUR = "#8e6bbf"
SITE_COLOURS = ["#d9534f", "#5b8bd0", "#f2a65a", "#8e6bbf", "#4cae9b", "#c9a227", "#7f8c8d"]
STACKED_SITES = 12  # the scope chart stacks the busiest sites; the rest share one segment


def sites_figure(model: ReportModel) -> dict[str, Any]:
    """Per call site, side by side: count, total stall, and (when known) the device idle caused and the delay of
    the next collectives across ranks. Sites are in the model's order (most idle, then most stall, first)."""
    sites = list(reversed(model.sites))  # plotly draws the first category at the bottom
    labels = [plotly_text(short_site(s)) for s in sites]
    hover = [_site_hover(s) for s in sites]
    columns: list[tuple[str, list[float], str]] = [("stall", [s.stall_us for s in sites], SYNC_OP_COLOUR)]
    if any(s.device_idle_us is not None for s in sites):
        columns.append(("device idle caused", [s.device_idle_us or 0.0 for s in sites], IDLE_COLOUR))
    if any(s.collective_delay_us is not None for s in sites):
        columns.append(("collective delay", [s.collective_delay_us or 0.0 for s in sites], DELAY_COLOUR))
    units = [time_unit(max(values, default=0.0)) for _, values, _ in columns]
    figure = make_subplots(rows=1, cols=1 + len(columns), shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=("syncs", *(f"{title} ({unit})" for (title, _, _), (_, unit)
                                                      in zip(columns, units, strict=True))))
    figure.add_bar(orientation="h", y=labels, x=[s.count for s in sites], marker_color=BEFORE_COLOUR,
                   hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", row=1, col=1,
                   text=[str(s.count) for s in sites], textposition="auto")
    for number, ((_, values, colour), (scale, unit)) in enumerate(zip(columns, units, strict=True), start=2):
        figure.add_bar(orientation="h", y=labels, x=[v / scale for v in values], marker_color=colour,
                       hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", row=1, col=number,
                       text=[in_unit(v, scale, unit) for v in values], textposition="auto")
    figure.update_layout(showlegend=False, height=130 + 38 * len(sites), font=FONT,
                         margin={"l": 10, "r": 10, "t": 50, "b": 30})  # room for the modebar above the titles
    figure.update_yaxes(automargin=True)
    figure.update_xaxes(rangemode="tozero")
    return figure_json(figure)


def _site_hover(site: SiteSummary) -> str:
    lines = [f"<b>{plotly_text(site.site)}</b>", f"{site.count} syncs · {format_us(site.stall_us)} stall "
             f"({format_us(site.max_stall_us)} max)"]
    if site.device_idle_us is not None:
        lines.append(f"device idle {format_us(site.device_idle_us)} caused")
    if site.collective_delay_us is not None:
        lines.append(f"next collectives {format_us(site.collective_delay_us)} after the first rank, in all")
    lines.append(plotly_text(", ".join(site.rules)))
    return "<br>".join(lines)


def scopes_figure(model: ReportModel) -> dict[str, Any]:
    """Syncs per scope (``layer_0`` … ``layer_26``), stacked by call site: a regular pattern shows as a comb."""
    scopes = model.scopes
    short = _short_scopes([s.scope for s in scopes])
    figure = go.Figure()
    stacked = model.sites[:STACKED_SITES]
    series = [(plotly_text(short_site(site)), [scope.by_site.get(site.site, 0) for scope in scopes])
              for site in stacked]
    if len(model.sites) > len(stacked):  # one bar segment per site would be a sites × scopes matrix of hovers
        shown = {site.site for site in stacked}
        series.append((f"{len(model.sites) - len(stacked)} other sites",
                       [sum(n for key, n in scope.by_site.items() if key not in shown) for scope in scopes]))
    for number, (name, counts) in enumerate(series):
        figure.add_bar(x=[plotly_text(n) for n in short], y=counts, name=name,
                       marker_color=SITE_COLOURS[number % len(SITE_COLOURS)],
                       hovertext=[f"<b>{plotly_text(scope.scope)}</b><br>{n} from {name}"
                                  f"<br>{scope.count} syncs, {format_us(scope.stall_us)} stall in this scope"
                                  for scope, n in zip(scopes, counts, strict=True)],
                       hovertemplate="%{hovertext}<extra></extra>")
    figure.update_layout(barmode="stack", height=340, font=FONT, margin={"l": 10, "r": 10, "t": 36, "b": 10},
                         legend={"orientation": "h", "x": 0, "y": 1, "yanchor": "top", "yref": "container"},
                         showlegend=len(model.sites) > 1,
                         yaxis={"title": {"text": "syncs"}, "automargin": True, "rangemode": "tozero"},
                         xaxis={"automargin": True, "tickangle": -45 if len(scopes) > 8 else 0,
                                "categoryorder": "array", "categoryarray": [plotly_text(n) for n in short]})
    return figure_json(figure)


def callpath_figure(model: ReportModel) -> dict[str, Any]:
    """Icicle of the Python call paths (outermost frame at the root) down to each call site's ops. A very deep
    path keeps both ends, as the page's lists do, with one box for the frames left out between them."""
    ids: dict[tuple[str, str], str] = {}  # (parent's id, this frame) → id: a path's prefix is its parent's id
    labels, parents, values, hovers, colours = [], [], [], [], []
    depths: dict[str, int] = {"": 0}

    def node(parent: str, key: str, label: str, count: int, hover: str, colour: str) -> str:
        known = ids.get((parent, key))
        if known is not None:
            values[int(known[1:])] += count
            return known
        ids[parent, key] = name = f"n{len(labels)}"
        depths[name] = depths[parent] + 1
        labels.append(plotly_text(label))
        parents.append(parent)
        values.append(count)
        hovers.append(hover)
        colours.append(colour)
        return name

    for site in model.sites:
        for entry in site.paths[:MAX_STACKS_PER_SITE]:
            parent, count = "", entry.count
            users = entry.user or (False,) * len(entry.frames)
            frames: list[tuple[Any, bool | int]] = list(zip(entry.frames, users, strict=True))  # innermost first
            if len(frames) > STACK_INNER + STACK_OUTER:
                left_out = len(frames) - STACK_INNER - STACK_OUTER
                frames = [*frames[:STACK_INNER], (None, left_out), *frames[-STACK_OUTER:]]
            for frame, user in reversed(frames):
                if frame is None:
                    parent = node(parent, f"gap:{user}", f"… {user} frames left out", count,
                                  f"{user} frames left out", OP_COLOUR)
                    continue
                text = f"{frame.file}:{frame.line} {frame.function}"
                parent = node(parent, text, f"{frame.function} ({frame.file.rsplit('/', 1)[-1]}:{frame.line})",
                              count, plotly_text(text), USER_FRAME_COLOUR if user else OP_COLOUR)
            chain, rule = entry.op_chain, entry.rule
            node(parent, f"op:{chain}:{rule}", f"{chain} ({rule})", count,
                 f"<b>{plotly_text(chain)}</b><br>{plotly_text(rule)}", BEFORE_COLOUR)
    figure = go.Figure(go.Icicle(ids=list(ids.values()), labels=labels, parents=parents, values=values,
                                 branchvalues="total", hovertext=hovers, marker={"colors": colours},
                                 hovertemplate="%{hovertext}<br>%{value} syncs<extra></extra>",
                                 tiling={"orientation": "v", "pad": 1}, pathbar={"visible": False},
                                 textinfo="label+value"))
    depth = max(depths.values(), default=0) or 1
    figure.update_layout(height=40 + 30 * depth, font=FONT, margin={"l": 4, "r": 4, "t": 4, "b": 4})
    return figure_json(figure)


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
    # The legend at the very top of the figure (container coordinates), the subplot titles below it: whatever
    # the page's width, the two never overlap.
    figure.update_layout(barmode="group", height=370, font=FONT, margin={"l": 10, "r": 10, "t": 64, "b": 10},
                         legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1, "yanchor": "top",
                                 "yref": "container"})
    figure.update_xaxes(automargin=True)
    figure.update_xaxes(tickangle=-45 if len(scopes) > 8 else 0, tickfont={"size": 10}, row=1, col=2)
    figure.update_yaxes(rangemode="tozero", automargin=True)
    return figure_json(figure)


def short_site(site: SiteSummary) -> str:
    label = short_label(site.where or site.site)
    return f"{label} via {short_label(f'{site.via.file}:{site.via.line} {site.via.function}')}" if site.via else label


def short_label(site: str) -> str:
    """``workloads/hicache_dcp/translate.py:18 fn`` → ``translate.py:18 fn``."""
    location, _, function = site.partition(" ")
    return f"{location.rsplit('/', 1)[-1]} {function}".strip()


def _short_scopes(scopes: list[str]) -> list[str]:
    """The innermost scope name when that is unambiguous, else the full chain."""
    inner = [scope.rsplit(" › ", 1)[-1] for scope in scopes]
    return inner if len(set(inner)) == len(inner) else scopes

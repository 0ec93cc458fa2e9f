"""The timeline figure: host lanes (scopes, ops, syncs) above GPU stream lanes, each sync labelled and tied to the
work it waited for, the device idle it caused drawn as a gap. Every trace-derived label goes through
``plotly_text``."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from synchunt.render.html.escape import plotly_text
from synchunt.render.html.figures import FONT, figure_json, time_unit
from synchunt.report.timeline import Timeline
from synchunt.units import format_us, signed_us

BAR_KINDS = (("scope", "#9db4d3", "scope"), ("op", "#c9ccd1", "op"), ("sync-op", "#f2a65a", "op around a sync"),
             ("kernel", "#9cc5a1", "kernel"), ("memcpy", "#c5a3d9", "memcpy"), ("memset", "#d6c48a", "memset"),
             ("waited-on", "#5b2c83", "work a sync waited for"))
IDLE_COLOUR = "rgba(214, 39, 40, 0.55)"
LINK_COLOUR = "#5b2c83"
LABEL_ALL_UP_TO = 20  # with more syncs, a marker's label is its rule code alone
LEGEND_PER_ROW = 4  # at the narrowest page the legend wraps after about four entries
CHAR_WIDTH_PX, PLOT_WIDTH_PX = 6.5, 1000  # a label's width, for spacing labels (the plot is ~1000 px wide)


def timeline_figure(timeline: Timeline) -> dict[str, Any]:
    figure = go.Figure()
    bars = timeline.bars
    for kind, colour, name in BAR_KINDS:
        rows = bars[bars["kind"] == kind]
        if rows.empty:
            continue
        figure.add_bar(
            orientation="h", y=rows["lane"].map(plotly_text).tolist(), x=rows["dur_ms"].tolist(),
            base=rows["start_ms"].tolist(), name=name, marker={"color": colour, "line": {"width": 0}},
            width=0.7, hovertemplate="%{hovertext}<extra></extra>",
            hovertext=[f"<b>{plotly_text(n)}</b><br>{format_us(d * 1e3)} at {s:.3f} ms<br>{plotly_text(lane)}"
                       for n, d, s, lane in zip(rows["name"], rows["dur_ms"], rows["start_ms"], rows["lane"],
                                                strict=True)])
    _gaps(figure, timeline.gaps)
    _links(figure, timeline.syncs)
    xaxis: dict[str, Any] = {"title": {"text": "ms since the first event shown"}, "zeroline": False}
    focus = timeline.sync_focus()
    if focus is not None:
        xaxis["range"] = list(focus)
    shown = focus or ((float(bars["start_ms"].min()), float((bars["start_ms"] + bars["dur_ms"]).max()))
                      if len(bars) else (0.0, 1.0))
    _markers(figure, timeline.syncs, shown)
    lanes = [plotly_text(lane) for lane in timeline.lanes]
    # The legend below the axis title, in the figure's own coordinates: a margin tall enough for its rows.
    legend_rows = math.ceil(len(figure.data) / LEGEND_PER_ROW)
    bottom = 52 + 22 * legend_rows
    figure.update_layout(
        barmode="overlay", height=100 + bottom + 34 * max(len(timeline.lanes), 2), font=FONT,
        margin={"l": 10, "r": 10, "t": 16, "b": bottom},
        legend={"orientation": "h", "x": 0, "y": 0, "yanchor": "bottom", "yref": "container"}, dragmode="zoom",
        hovermode="closest",
        xaxis=xaxis,
        yaxis={"categoryorder": "array", "categoryarray": lanes, "tickmode": "array", "tickvals": lanes,
               "ticktext": [plotly_text(label) for label in timeline.labels], "autorange": "reversed",
               "automargin": True, "fixedrange": True})
    return figure_json(figure)


def _gaps(figure: go.Figure, gaps: pd.DataFrame) -> None:
    if gaps.empty:
        return
    figure.add_bar(
        orientation="h", y=gaps["lane"].map(plotly_text).tolist(), x=gaps["dur_ms"].tolist(),
        base=gaps["start_ms"].tolist(), name="device idle a sync caused", width=0.9,
        marker={"color": IDLE_COLOUR, "line": {"color": "#a61b1b", "width": 1}, "pattern": {"shape": "/"}},
        hovertemplate="%{hovertext}<extra></extra>",
        hovertext=[f"<b>device idle {format_us(row.idle_us)}</b> caused by {plotly_text(row.rule)} at "
                   f"{plotly_text(row.site)}<br>until {plotly_text(row.next) or 'the next activity'}"
                   for row in gaps.itertuples(index=False)])


def _links(figure: go.Figure, syncs: pd.DataFrame) -> None:
    """A dotted line from each sync to the end of the work it waited for."""
    xs: list[float | None] = []
    ys: list[str | None] = []
    for row in syncs.itertuples(index=False):
        if isinstance(row.wait_lane, str) and not _missing(row.wait_end_ms):
            xs += [row.t_ms, float(row.wait_end_ms), None]
            ys += [plotly_text(row.lane), plotly_text(row.wait_lane), None]
    if xs:
        figure.add_scatter(x=xs, y=ys, mode="lines", name="sync → the work it waited for", hoverinfo="skip",
                           line={"color": LINK_COLOUR, "width": 1, "dash": "dot"})


def _markers(figure: go.Figure, syncs: pd.DataFrame, shown: tuple[float, float]) -> None:
    if not len(syncs):
        return
    biggest = max(float(syncs["stall_us"].max()), 1e-9)
    scale, unit = time_unit(biggest)
    labels = syncs["label"] if len(syncs) <= LABEL_ALL_UP_TO else syncs["rule"]
    texts, positions = _labels(syncs, labels.astype(str).tolist(), shown)
    figure.add_scatter(
        x=syncs["t_ms"].tolist(), y=syncs["lane"].map(plotly_text).tolist(), mode="markers+text", name="sync",
        text=[plotly_text(text) for text in texts], textfont={"size": 10, "color": "#7a1f1f"},
        textposition=positions,
        marker={"size": [8 + 18 * math.sqrt(max(v, 0.0) / biggest) for v in syncs["stall_us"]],
                "color": (syncs["stall_us"] / scale).tolist(), "colorscale": "YlOrRd", "cmin": 0,
                "cmax": biggest / scale, "line": {"color": "#7a1f1f", "width": 1}, "symbol": "diamond",
                "colorbar": {"title": {"text": f"stall {unit}"}, "thickness": 12, "len": 0.8}},
        hovertemplate="%{hovertext}<extra></extra>", hovertext=[_hover(row) for row in syncs.itertuples(index=False)])


def _labels(syncs: pd.DataFrame, texts: list[str], shown: tuple[float, float]) -> tuple[list[str], list[str]]:
    """Each marker's label and its position: above the marker, else below when the label before it on its lane
    is too close, else none (a crowd of labels prints over itself; hover still names every sync). Near an edge
    of the view a label reads inwards."""
    low, high = shown
    span = max(high - low, 1e-9)
    char_ms = span * CHAR_WIDTH_PX / PLOT_WIDTH_PX
    shown_texts, positions = [""] * len(syncs), ["top center"] * len(syncs)
    for _, lane in syncs.reset_index(drop=True).groupby("lane", sort=False):
        right_edge = {"top": -math.inf, "bottom": -math.inf}
        for index, t in lane["t_ms"].sort_values(kind="stable").items():
            width = len(texts[index]) * char_ms
            side = "right" if t - low < span * 0.12 else "left" if high - t < span * 0.12 else "center"
            left, right = {"right": (t, t + width), "left": (t - width, t)}.get(side, (t - width / 2, t + width / 2))
            for vertical in ("top", "bottom"):
                if left > right_edge[vertical] + char_ms:
                    shown_texts[index], positions[index] = texts[index], f"{vertical} {side}"
                    right_edge[vertical] = right
                    break
    return shown_texts, positions


def _hover(row: Any) -> str:
    kind = "confirmed" if row.confirmed else "latent"
    lines = [f"<b>{plotly_text(row.op_chain)}</b>", plotly_text(row.site),
             f"{plotly_text(row.rule)} · {kind} · stall {format_us(row.stall_us)}",
             plotly_text(row.scope or "(no scope)")]
    if row.by_order:
        lines.append("seen by the runtime guard only: the trace has no event for it, so it is placed by its order "
                     "among the thread's syncs (stall not measured)")
    if not row.confirmed:
        lines.append("device figures unknown (no device activity traced)")
    elif not _missing(row.idle_us) and row.idle_us > 0:
        lines.append(f"<b>device idle {format_us(row.idle_us)} caused</b>")
    else:
        reason = f": {plotly_text(row.idle_reason)}" if row.idle_reason else ""
        lines.append(f"no device idle charged{reason}")
    if row.waited_on:
        lines.append(f"waited for {plotly_text(row.waited_on)}")
    if not _missing(row.delay_us):
        lines.append(f"next collective {signed_us(row.delay_us)} after the first rank")
    lines.append(plotly_text(row.lane))
    return "<br>".join(lines)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))

"""The comparison for a terminal: both verdicts, the headline, then per call site and per op."""

from __future__ import annotations

from synchunt.compare import Comparison
from synchunt.render.comparison.headline import headline, side_verdict
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label, to_text
from synchunt.units import signed_us

_STATUS_COLOUR = {"gone": "green", "fewer": "green", "new": "red", "more": "red"}


def comparison_renderable(comparison: Comparison):  # type: ignore[no-untyped-def]
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    before, after = comparison.before, comparison.after
    improved = after.syncs < before.syncs or (after.syncs == before.syncs and comparison.stall_saved_us > 0)
    style = "bold" if not comparison.changed else (
        "bold green" if after.syncs == 0 or improved else "bold red" if comparison.worse else "bold")
    parts: list = [
        Text(label(f"before: {', '.join(before.labels)} — {side_verdict(before)}", 400), style="dim"),
        Text(label(f"after:  {', '.join(after.labels)} — {side_verdict(after)}", 400), style="dim"),
        Text(headline(comparison), style=style),
    ]
    if not comparison.sites:
        return Group(*parts)
    table = Table(title="syncs by call site", title_justify="left", expand=True)
    table.add_column("call site", ratio=1, overflow="fold")
    table.add_column("rule", no_wrap=True)
    for column in ("before", "after", "Δ", "Δ stall"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for site in comparison.sites:
        name = Text(label(site.site))
        if site.after_site and site.after_site != site.site:
            name.append(f"\n→ {label(site.after_site)}", style="dim")
        colour = _STATUS_COLOUR.get(site.status, "")
        table.add_row(name, Text(", ".join(site.rules)), Text(str(site.before)), Text(str(site.after)),
                      Text(f"{site.delta:+d}", style=colour), Text(signed_us(-site.stall_saved_us), style=colour),
                      Text(site.status, style=colour))
    parts.append(table)
    if comparison.ops:
        ops = Table(title="syncs by op", title_justify="left")
        for column in ("op", "before", "after"):
            ops.add_column(column, justify="left" if column == "op" else "right")
        for op in comparison.ops:
            ops.add_row(Text(label(op.key)), Text(str(op.before)), Text(str(op.after)))
        parts.append(ops)
    return Group(*parts)


def render_text(comparison: Comparison, options: RenderOptions | None = None) -> str:
    return to_text(comparison_renderable(comparison), options or RenderOptions())


RENDERER = Renderer("text", ".txt", "before/after by call site and op", render_text, machine=False)

"""The gate result for a terminal: the counted syncs by call site, the baseline's entries, then the verdict last
(where a CI log is read)."""

from __future__ import annotations

from collections import Counter

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from synchunt.gate.evaluate import GateResult
from synchunt.render.analysis.text import analysis_renderable
from synchunt.render.gate.headline import gate_headline
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label, to_text

BASELINE_ROWS = 40


def gate_renderable(result: GateResult) -> RenderableType:
    """Trace and baseline text is never read as markup."""
    if not result.judged:
        return Text(gate_headline(result), style="bold red")
    parts: list[RenderableType] = [analysis_renderable(result.counted_analysis)]
    if result.usage:
        parts.append(_baseline_table(result))
    parts.append(Text(gate_headline(result), style="bold green" if result.passed else "bold red"))
    return Group(*parts)


def render_text(result: GateResult, options: RenderOptions | None = None) -> str:
    return to_text(gate_renderable(result), options or RenderOptions())


RENDERER = Renderer("text", ".txt", "the counted syncs by call site, the baseline, then the verdict", render_text,
                    machine=False)


def _baseline_table(result: GateResult) -> Table:
    source = f" ({result.baseline_path})" if result.baseline_path else ""
    table = Table(title=f"baseline{source}", title_justify="left", expand=True, show_lines=False)
    table.add_column("line", justify="right", no_wrap=True)
    table.add_column("rule · op · site · reason", ratio=1, overflow="fold")
    table.add_column("matched", justify="right", no_wrap=True)
    table.add_column("allowed (max)", justify="right", no_wrap=True)
    table.add_column("expires", no_wrap=True)
    table.add_column("status", no_wrap=True)
    # Entries that need attention first; a terminal shows a bounded number (every entry is in --format json).
    ordered = sorted(result.usage, key=lambda usage: usage.status == "ok")
    for usage in ordered[:BASELINE_ROWS]:
        entry = usage.entry
        body = Text(label(f"{entry.key.rule} {entry.key.op} at {entry.key.site}"))
        body.append(f"\n{label(entry.reason, 400)}", style="dim")
        limit = "any" if entry.max_count is None else str(entry.max_count)
        style = "green" if usage.status == "ok" else ("red" if result.strict else "yellow")
        table.add_row(Text(str(entry.line or "")), body, Text(str(usage.matched)),
                      Text(f"{usage.allowed} ({limit})"),
                      Text(entry.expires.isoformat() if entry.expires else "-"), Text(usage.status, style=style))
    rest = ordered[BASELINE_ROWS:]
    if rest:
        statuses = Counter(usage.status for usage in rest)
        summary = ", ".join(f"{count} {status}" for status, count in statuses.most_common())
        table.add_row(Text(""), Text(f"… {len(rest)} more entries ({summary}); all of them in --format json",
                                     style="dim"), Text(str(sum(u.matched for u in rest))), Text(""), Text(""),
                      Text(""))
    return table

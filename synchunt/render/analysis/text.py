"""The terminal summary: a verdict, the notes, then one block per call site with its details and fix."""

from __future__ import annotations

from synchunt.attribute import Analysis, SiteSummary
from synchunt.attribute.model import Detail
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label, to_text
from synchunt.render.verdict import set_aside_note, stall_summary, trace_line, verdict
from synchunt.rules import get_rule
from synchunt.units import format_us, signed_us

MAX_SITES = 50  # the busiest call sites; a terminal is not the place to read 20,000 (the JSON and CSV list all)


def analysis_renderable(analysis: Analysis):  # type: ignore[no-untyped-def]
    """A rich renderable (also embedded by the gate's text). Trace text is never read as markup."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list = []
    for info in analysis.traces:
        parts.append(Text(label(trace_line(info), 400), style="dim"))
        if info.partial is not None:
            parts.append(Text(f"partial trace: {info.partial.reason}; analysed the first {info.partial.events_read} "
                              f"events ({info.partial.bytes_read} bytes)", style="yellow"))
    clean = not analysis.records
    parts.append(Text(verdict(analysis) + stall_summary(analysis), style="bold green" if clean else "bold red"))
    note = set_aside_note(analysis)
    if note:
        parts.append(Text(note, style="dim"))
    for text in analysis.notes:
        parts.append(Text(text, style="yellow"))
    if clean:
        return Group(*parts)
    shared = analysis.shared_details
    if shared:
        parts.append(Text("every call site: " + " · ".join(f"{d.label} {label(d.text)}" for d in shared), style="dim"))
    table = Table(show_lines=True, title="syncs by call site", title_justify="left", expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("call site · details · fix", ratio=1, overflow="fold")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("stall (max)\ndevice idle", justify="right", no_wrap=True)
    delays = any(site.collective_delay_us is not None for site in analysis.sites)
    if delays:  # several ranks: how much later than its peers the rank entered its next collectives
        table.add_column("collective\ndelay", justify="right", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    for number, site in enumerate(analysis.sites[:MAX_SITES], start=1):
        rules = [get_rule(code) for code in site.rules]
        cells = [Text(str(number)), _body(site, rules, shared), Text(_count(site)), Text(_stall(site))]
        if delays:
            delay = site.collective_delay_us
            cells.append(Text(signed_us(delay) if delay is not None else "-"))
        table.add_row(*cells, Text("\n".join(f"{r.code}\n{r.name}" for r in rules)))
    parts.append(table)
    rest = analysis.sites[MAX_SITES:]
    if rest:
        syncs = sum(site.count for site in rest)
        parts.append(Text(f"… and {len(rest):,} more call sites ({syncs:,} syncs, "
                          f"{format_us(sum(site.stall_us for site in rest))} stall) not listed here: "
                          "--format json or csv lists every one", style="yellow"))
    return Group(*parts)


def _body(site: SiteSummary, rules: list, shared: tuple[Detail, ...]):  # type: ignore[no-untyped-def]
    from rich.text import Text

    said = {(detail.field, detail.text) for detail in shared}  # said once above; the counts differ per site
    details = [detail for detail in site.details if (detail.field, detail.text) not in said]
    where = site.call_site
    body = Text()
    body.append(label(site.where), style="bold")
    if where is not None and not where.user:
        body.append("  (library)", style="dim")
    if site.via is not None:
        body.append("\nvia ", style="dim")
        body.append(label(f"{site.via.file}:{site.via.line} {site.via.function}"), style="bold")
        body.append("  (your code)", style="dim")
    if where is not None and where.line_note:
        body.append(f"\n{where.line_note}", style="dim")
    width = max((len(detail.label) for detail in details), default=3) + 1
    for detail in details:
        body.append(f"\n{detail.label + ':':<{width}} ", style="dim")
        body.append(label(detail.text))
    for rule in rules:
        body.append(f"\n{'fix:':<{width}} ", style="dim")
        body.append(rule.fix, style="green")
    rewrite = site.rewrite
    if rewrite is not None:
        body.append(f"\n{'rewrite:':<{width}} ", style="dim")
        body.append(f"{label(rewrite.original)} → {label(rewrite.replacement)}", style="green")
        if rewrite.condition:
            body.append(f"\n{'when:':<{width}} ", style="dim")
            body.append(label(rewrite.condition))
        state = "checked" if rewrite.checked else "a suggestion, not checked (synchunt lint --check-fixes checks it)"
        body.append(f"\n{'status:':<{width}} {state}: {rewrite.title}", style="dim")
    return body


def _count(site: SiteSummary) -> str:
    return f"{site.count}\n({site.warmup} warm-up)" if site.warmup else str(site.count)


def _stall(site: SiteSummary) -> str:
    if site.unmeasured == site.count:  # no trace event to time: not a zero stall
        return "not measured\n(guard only)"
    idle = f"\nidle {format_us(site.device_idle_us)}" if site.device_idle_us is not None else ""
    unmeasured = f"\n{site.unmeasured} not measured" if site.unmeasured else ""
    return f"{format_us(site.stall_us)}\n({format_us(site.max_stall_us)}){idle}{unmeasured}"


def render_text(analysis: Analysis, options: RenderOptions | None = None) -> str:
    return to_text(analysis_renderable(analysis), options or RenderOptions())


RENDERER = Renderer("text", ".txt", "the terminal summary, grouped by call site", render_text, machine=False)

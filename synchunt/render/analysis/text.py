"""The terminal summary: a verdict, then one block per call site with its op chain, scopes and fix."""

from __future__ import annotations

from collections import Counter

from synchunt.attribute import Analysis
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.terminal import to_text
from synchunt.render.text import label
from synchunt.render.units import compress_scopes, format_us, signed_us
from synchunt.render.verdict import set_aside_note, stall_summary, verdict
from synchunt.rules import get_rule

MAX_SITES = 50  # the busiest call sites; a terminal is not the place to read 20,000 (the JSON and CSV list all)


def analysis_renderable(analysis: Analysis):  # type: ignore[no-untyped-def]
    """A rich renderable (also embedded by the gate's text). Trace text is never read as markup."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list = []
    for info in analysis.traces:
        where = f"rank {info.rank} · " if info.rank is not None else ""
        target = info.synchunt.get("target")
        about = f" · {target} {info.synchunt.get('label', '')} on {info.synchunt.get('device', '?')}" if target else ""
        parts.append(Text(label(f"{info.path} ({where}{info.mode}{about})", 400), style="dim"))
        if info.partial is not None:
            parts.append(Text(f"partial trace: {info.partial.reason}; analysed the first {info.partial.events_read} "
                              f"events ({info.partial.bytes_read} bytes)", style="yellow"))
    clean = not analysis.records
    parts.append(Text(verdict(analysis) + stall_summary(analysis), style="bold green" if clean else "bold red"))
    note = set_aside_note(analysis)
    if note:
        parts.append(Text(note, style="dim"))
    if clean:
        return Group(*parts)
    if analysis.totals.latent:
        parts.append(Text("latent: would sync on a GPU; the stall shown is the op's CPU time here, not a device "
                          "wait", style="yellow"))
    table = Table(show_lines=True, title="syncs by call site", title_justify="left", expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("call site · op chain · scopes · fix", ratio=1, overflow="fold")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("stall (max)\ndevice idle", justify="right", no_wrap=True)
    delays = any(site.collective_delay_us is not None for site in analysis.sites)
    if delays:  # several ranks: how much later than its peers the rank entered its next collectives
        table.add_column("collective\ndelay", justify="right", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    shown = analysis.sites[:MAX_SITES]
    wanted = {site.site for site in shown}
    members: dict[str, list] = {}
    for record in analysis.records:
        if record.site in wanted:
            members.setdefault(record.site, []).append(record)
    for number, site in enumerate(shown, start=1):
        chains = Counter(" › ".join(r.op_chain[-3:]) or r.runtime for r in members[site.site])
        rules = [get_rule(code) for code in site.rules]
        body = Text()
        body.append(label(site.site), style="bold")
        if site.line_source == "def":
            body.append("  (the function's first line: the trace names no line)", style="dim")
        body.append("\nop chain: ", style="dim")
        body.append(label("; ".join(chain for chain, _ in chains.most_common(3))))
        body.append("\nscopes:   ", style="dim")
        body.append(label("; ".join(compress_scopes(site.scopes))) or "-")
        body.append("\nthreads:  ", style="dim")
        body.append(label(", ".join(site.threads)))
        for rule in rules:
            body.append("\nfix:      ", style="dim")
            body.append(rule.fix, style="green")
        idle = f"\nidle {format_us(site.device_idle_us)}" if site.device_idle_us is not None else ""
        cells = [Text(str(number)), body, Text(str(site.count)),
                 Text(f"{format_us(site.stall_us)}\n({format_us(site.max_stall_us)}){idle}")]
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


def render_text(analysis: Analysis, options: RenderOptions | None = None) -> str:
    return to_text(analysis_renderable(analysis), options or RenderOptions())


RENDERER = Renderer("text", ".txt", "the terminal summary, grouped by call site", render_text, machine=False)

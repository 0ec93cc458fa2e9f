"""The terminal summary: a verdict, then one block per call site with its op chain, scopes and fix."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from synchunt.attribute import Analysis, site_labels
from synchunt.attribute.verdict import compress_scopes, format_us, verdict
from synchunt.rules import get_rule


def render_text(analysis: Analysis) -> RenderableType:
    """A rich renderable (the CLI prints it; the library never prints). Trace text is never read as markup."""
    parts: list[RenderableType] = []
    for info in analysis.traces:
        where = f"rank {info.rank} · " if info.rank is not None else ""
        target = info.synchunt.get("target")
        about = f" · {target} {info.synchunt.get('label', '')} on {info.synchunt.get('device', '?')}" if target else ""
        parts.append(Text(f"{info.path} ({where}{info.mode}{about})", style="dim"))
    summary = analysis.summary
    clean = summary["syncs"] == 0
    stall = "" if clean else (f" · stall {format_us(summary['stall_us'])} total, "
                              f"{format_us(summary['max_stall_us'])} max")
    parts.append(Text(verdict(analysis) + stall, style="bold green" if clean else "bold red"))
    if clean:
        return Group(*parts)
    if summary["latent"]:
        parts.append(Text("latent: would sync on a GPU; the stall shown is the op's CPU time here, not a device "
                          "wait", style="yellow"))
    labels = site_labels(analysis.syncs)
    table = Table(show_lines=True, title="syncs by call site", title_justify="left", expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("call site · op chain · scopes · fix", ratio=1, overflow="fold")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("stall (max)", justify="right", no_wrap=True)
    table.add_column("rule", no_wrap=True)
    for number, row in enumerate(analysis.call_sites.itertuples(index=False), start=1):
        group = analysis.syncs[labels == row.site]
        chains = group.apply(lambda r: " › ".join(r["op_chain"][-3:]) or r["runtime"], axis=1).value_counts()
        rules = [get_rule(code) for code in row.rules]
        body = Text()
        body.append(row.site, style="bold")
        body.append("\nop chain: ", style="dim")
        body.append("; ".join(chains.index[:3]))
        body.append("\nscopes:   ", style="dim")
        body.append("; ".join(compress_scopes(row.scopes)) or "-")
        body.append("\nthreads:  ", style="dim")
        body.append(", ".join(row.threads))
        for rule in rules:
            body.append("\nfix:      ", style="dim")
            body.append(rule.fix, style="green")
        table.add_row(Text(str(number)), body, Text(str(row.count)),
                      Text(f"{format_us(row.stall_us)}\n({format_us(row.max_stall_us)})"),
                      Text("\n".join(f"{r.code}\n{r.name}" for r in rules)))
    parts.append(table)
    return Group(*parts)

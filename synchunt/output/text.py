"""Terminal text: one line per finding (location, code, severity, confidence, message), then a summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape

from synchunt.output.finding import Finding, Severity

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def render_text(findings: Iterable[Finding], console: Console, *, files_checked: int | None = None,
                show_snippets: bool = True) -> None:
    ordered = sorted(findings, key=lambda finding: finding.sort_key)
    for finding in ordered:
        where = f"[bold]{escape(finding.path)}[/]:{finding.line}:{finding.column}"
        if finding.is_problem:
            console.print(f"{where}: [bold red]{finding.code}[/] {escape(finding.message)}", highlight=False)
            continue
        style = _STYLE[finding.severity]
        scope = f" [dim]in {escape(finding.scope)}[/]" if finding.scope else ""
        console.print(f"{where}: [{style}]{finding.code}[/] [{style}]{finding.severity.value}[/] "
                      f"[dim]({finding.confidence.value} confidence)[/] {escape(finding.message)}{scope}",
                      highlight=False, soft_wrap=True)
        if show_snippets and finding.snippet:
            console.print(f"    [dim]{escape(finding.snippet)}[/]", highlight=False, soft_wrap=True)
    console.print(summary_line(ordered, files_checked=files_checked), highlight=False)


def summary_line(findings: list[Finding], *, files_checked: int | None = None) -> str:
    real = [finding for finding in findings if not finding.is_problem]
    problems = len(findings) - len(real)
    by_severity = Counter(finding.severity for finding in real)
    parts = [f"{by_severity[severity]} {severity.value}" for severity in reversed(Severity)
             if by_severity[severity]]
    text = f"{len(real)} finding{'s' if len(real) != 1 else ''}"
    if parts:
        text += f" ({', '.join(parts)})"
    if files_checked is not None:
        text += f" in {files_checked} file{'s' if files_checked != 1 else ''}"
    if problems:
        text += f"; {problems} file{'s' if problems != 1 else ''} could not be analysed"
    return text

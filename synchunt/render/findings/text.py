"""Terminal text: one line per finding (location, code, severity, confidence, message), then a summary."""

from __future__ import annotations

from collections import Counter

from synchunt.findings import Finding, FindingSet, Rewrite, Severity
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label, one_line, to_text

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def findings_renderable(findings: FindingSet, *, show_snippets: bool = True):  # type: ignore[no-untyped-def]
    from rich.console import Group
    from rich.text import Text

    ordered = sorted(findings.findings, key=lambda finding: finding.sort_key)
    lines = []
    for finding in ordered:
        line = Text()
        line.append(label(finding.path, 400), style="bold")
        line.append(f":{finding.line}:{finding.column}: ")
        if finding.is_problem:
            line.append(finding.code, style="bold red")
            line.append(" " + one_line(finding.message))
            lines.append(line)
            continue
        style = _STYLE[finding.severity]
        line.append(f"{finding.code} {finding.severity.value}", style=style)
        line.append(f" ({finding.confidence.value} confidence)", style="dim")
        line.append(" " + one_line(finding.message))
        if finding.scope:
            line.append(f" in {label(finding.scope)}", style="dim")
        lines.append(line)
        if show_snippets and finding.snippet:
            lines.append(Text("    " + label(finding.snippet, 240), style="dim"))
        if finding.fix is not None:
            lines.extend(_fix_lines(finding.fix))
    lines.append(Text(summary_line(ordered, files_checked=findings.files_checked)))
    return Group(*lines)


def _fix_lines(rewrite: Rewrite) -> list:  # type: ignore[type-arg]
    """The rewrite tailored to the line: what replaces it, and the condition under which it is the same."""
    from rich.text import Text

    status = "checked" if rewrite.checked else "not checked"
    head = Text("    fix ", style="green")
    head.append(f"[{rewrite.pattern}, {rewrite.safety}, {status}]: ", style="dim")
    head.append(label(" ".join(rewrite.replacement.split()), 240))
    added = [edit.text.strip() for edit in rewrite.edits if edit.line == edit.end_line
             and edit.column == edit.end_column and edit.text.strip()]
    if added:
        head.append("  (adds `" + label(added[0], 120) + "`)", style="dim")
    found = [head]
    if rewrite.condition:
        found.append(Text("      if " + label(rewrite.condition, 400), style="dim"))
    return found


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


def render_text(findings: FindingSet, options: RenderOptions | None = None) -> str:
    options = options or RenderOptions()
    # Soft-wrapped: one finding per line whatever the width, so that editors and grep can read it.
    return to_text(findings_renderable(findings), RenderOptions(color=options.color, width=max(options.width, 400)))


RENDERER = Renderer("text", ".txt", "one line per finding, then a summary", render_text, machine=False)

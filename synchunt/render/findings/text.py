"""Terminal text: one line per finding (location, code, severity, confidence, context, message), the step path
first, then a summary by context, rule and file."""

from __future__ import annotations

from collections import Counter

from synchunt.findings import Finding, FindingSet, Rewrite, Severity
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label, one_line, to_text

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def findings_renderable(findings: FindingSet, *, show_snippets: bool = True):  # type: ignore[no-untyped-def]
    from rich.console import Group
    from rich.text import Text

    ordered = sorted(findings.findings, key=context_order)
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
        context = f", {finding.context}" if finding.context else ""
        line.append(f" ({finding.confidence.value} confidence{context})", style="dim")
        line.append(" " + one_line(finding.message))
        if finding.scope:
            line.append(f" in {label(finding.scope)}", style="dim")
        lines.append(line)
        if show_snippets and finding.snippet:
            lines.append(Text("    " + label(finding.snippet, 240), style="dim"))
        if finding.fix is not None:
            lines.extend(_fix_lines(finding.fix))
    lines.extend(Text(text) for text in breakdown(ordered))
    lines.append(Text(summary_line(ordered, files_checked=findings.files_checked)))
    lines.extend(Text(note, style="dim") for note in findings.notes)
    return Group(*lines)


_CONTEXT_RANK = {"step": 0, None: 1, "unknown": 1, "cold": 2}
CONTEXTS = ("step", "unknown", "cold")


def context_order(finding: Finding) -> tuple[int, str, int, int, str]:
    """The step path first, then unknown (and findings without a context, problems among them), then cold; by
    position within each."""
    rank = _CONTEXT_RANK.get(finding.context, 1)
    return (rank, *finding.sort_key)


def breakdown(findings: list[Finding], files: int = 5) -> list[str]:
    """The summary by context, rule and file (the files with most findings), when there is more than one."""
    real = [finding for finding in findings if not finding.is_problem]
    if len(real) < 2:
        return []
    contexts = Counter(finding.context for finding in real if finding.context)
    rules = Counter(finding.code for finding in real)
    paths = Counter(finding.path for finding in real)
    found = []
    if contexts:
        found.append("by context: " + ", ".join(f"{contexts[name]} {name}" for name in CONTEXTS if contexts[name]))
    found.append("by rule: " + ", ".join(f"{code} {count}" for code, count in sorted(
        rules.items(), key=lambda item: (-item[1], item[0]))))
    top = sorted(paths.items(), key=lambda item: (-item[1], item[0]))[:files]
    found.append("by file: " + ", ".join(f"{label(path, 120)} {count}" for path, count in top) + (
        f" (and {len(paths) - files} more)" if len(paths) > files else ""))
    return found


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

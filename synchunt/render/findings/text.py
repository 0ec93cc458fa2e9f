"""Terminal text: one line per finding (location, code, severity, confidence, context, message), the step path
first, then a summary by context, rule and file."""

from __future__ import annotations

from collections import Counter

from synchunt.findings import Finding, FindingSet, Rewrite, Severity
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label, one_line, to_text

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


# One line of the text: its base style and its (text, style) segments. Built once, then written through rich (a
# terminal, or a line rich would wrap) or joined as plain text (everything else: no rich import on that path).
Segments = list[tuple[str, str | None]]
Line = tuple[str | None, Segments]


def _group(lines: list[Line]):  # type: ignore[no-untyped-def]
    from rich.console import Group

    return Group(*map(_rich_text, lines))


def _rich_text(line: Line):  # type: ignore[no-untyped-def]
    from rich.text import Text

    style, segments = line
    text = Text(style=style or "")
    for part, part_style in segments:
        text.append(part, style=part_style)
    return text


def finding_lines(findings: FindingSet, *, show_snippets: bool = True) -> list[Line]:
    ordered = sorted(findings.findings, key=context_order)
    lines: list[Line] = []
    for finding in ordered:
        line: Segments = [(label(finding.path, 400), "bold"), (f":{finding.line}:{finding.column}: ", None)]
        if finding.is_problem:
            line += [(finding.code, "bold red"), (" " + one_line(finding.message), None)]
            lines.append((None, line))
            continue
        style = _STYLE[finding.severity]
        line.append((f"{finding.code} {finding.severity.value}", style))
        context = f", {finding.context}" if finding.context else ""
        line.append((f" ({finding.confidence.value} confidence{context})", "dim"))
        line.append((" " + one_line(finding.message), None))
        if finding.scope:
            line.append((f" in {label(finding.scope)}", "dim"))
        lines.append((None, line))
        if show_snippets and finding.snippet:
            lines.append(("dim", [("    " + label(finding.snippet, 240), None)]))
        if finding.fix is not None:
            lines.extend(_fix_lines(finding.fix))
    lines.extend((None, [(text, None)]) for text in breakdown(ordered))
    lines.append((None, [(summary_line(ordered, files_checked=findings.files_checked), None)]))
    lines.extend(("dim", [(note, None)]) for note in findings.notes)
    return lines


def plain_text(lines: list[Line], width: int) -> str | None:
    """The lines as rich writes them without styles, where that is each line's text: every line printable and at
    most ``width`` cells wide (rich would wrap a wider one). ``None`` where only rich can say."""
    written = ["".join(part for part, _ in segments) for _, segments in lines]
    for text in written:
        if not text.isprintable() or _most_cells(text) > width:
            return None
    return "\n".join(written) + "\n"


def _most_cells(text: str) -> int:
    """An upper bound of the cells ``text`` takes: no character below U+1100 (the first East Asian wide block) is
    wider than one cell, none above wider than two."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for character in text if character >= "\u1100")


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


def _fix_lines(rewrite: Rewrite) -> list[Line]:
    """The rewrite tailored to the line: what replaces it, and the condition under which it is the same."""
    status = "checked" if rewrite.checked else "not checked"
    head: Segments = [("    fix ", None), (f"[{rewrite.pattern}, {rewrite.safety}, {status}]: ", "dim"),
                      (label(" ".join(rewrite.replacement.split()), 240), None)]
    added = [edit.text.strip() for edit in rewrite.edits if edit.line == edit.end_line
             and edit.column == edit.end_column and edit.text.strip()]
    if added:
        head.append(("  (adds `" + label(added[0], 120) + "`)", "dim"))
    found: list[Line] = [("green", head)]
    if rewrite.condition:
        found.append(("dim", [("      if " + label(rewrite.condition, 400), None)]))
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
    width = max(options.width, 400)
    lines = finding_lines(findings)
    plain = None if options.color else plain_text(lines, width)
    if plain is not None:
        return plain
    return to_text(_group(lines), RenderOptions(color=options.color, width=width))


RENDERER = Renderer("text", ".txt", "one line per finding, then a summary", render_text, machine=False)

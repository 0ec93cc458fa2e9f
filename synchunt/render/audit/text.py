"""The audit matrix as plain text (and the helpers its HTML form shares)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from synchunt.audit.model import Agreement, AuditResult, Cell, Signal
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.units import format_us

AGREEMENT_MARKS = {Agreement.AGREE: "yes", Agreement.BLIND_SPOT: "yes*", Agreement.DISAGREE: "NO",
                   Agreement.UNKNOWN: "?"}
LEGEND = ("agree: yes = both signals saw the same rules, the same count of each and at the same functions; "
          "yes* = they differ only in rules the trace cannot see in its mode; NO = they differ (see notes). "
          "Call sites: trace = the function the profiler recorded; guard = the line that synced.")
_HEADERS = ("path", "variant", "trace", "guard", "agree", "rules", "call sites", "result")
_RIGHT = {"trace", "guard"}
_WRAP = 116


def render_text(result: AuditResult, options: RenderOptions | None = None) -> str:
    """The matrix as plain text: a header line, one row per path × variant, notes, legend and the verdict."""
    scale = "small presets" if result.small else "full size"
    lines = [f"synchunt audit · device {result.device} · trace mode {result.trace_mode} · {scale} · "
             f"{len(result.paths)} paths, {len(result.cells)} runs in {format_us(result.seconds * 1e6)}", ""]
    rows = [_row(cell) for cell in result.cells]
    widths = [max([len(header)] + [len(line) for row in rows for line in row[i]])
              for i, header in enumerate(_HEADERS)]
    lines.append(_line([[h] for h in _HEADERS], widths)[0])
    lines.append("  ".join("-" * width for width in widths))
    for row in rows:
        lines.extend(_line(row, widths))
    notes = [(cell, note) for cell in result.cells for note in cell_notes(cell)]
    if notes:
        lines += ["", "Notes"]
        for cell, note in notes:
            lines += textwrap.wrap(f"{cell_name(cell)}: {note}", _WRAP, initial_indent="  ", subsequent_indent="    ")
    lines += ["", *textwrap.wrap(LEGEND, _WRAP), "", verdict_line(result)]
    return "\n".join(lines) + "\n"


def verdict_line(result: AuditResult) -> str:
    """``PASS — …``, or ``FAIL — …`` followed by one line per failing run."""
    if result.passed:
        bad = sum(1 for cell in result.cells if cell.role == "bad")
        fixed = sum(1 for cell in result.cells if cell.role == "fixed")
        return (f"PASS — {fixed} fixed variant{'s' if fixed != 1 else ''} sync-free under both signals, "
                f"{bad} bad variant{'s' if bad != 1 else ''} caught by at least one.")
    failures = result.failures
    listed = [f"  - {cell_name(cell)}: {cell.failure}" for cell in failures]
    return "\n".join([f"FAIL — {len(failures)} of {len(result.cells)} runs:", *listed])


def site_lines(cell: Cell) -> list[str]:
    """``trace  SH101 filter_local_by_mask ×2`` / ``guard  SH101 workloads/paths/x.py:75 ×2``, one per site."""
    lines = []
    if cell.trace is not None:
        lines += [f"trace  {s.rule} {s.function or '<no Python frame> ' + s.op} ×{s.count}" for s in cell.trace.sites]
    if cell.guard is not None:
        lines += [f"guard  {s.rule} {short_path(s.file)}:{s.line} ×{s.count}" for s in cell.guard.sites]
    return lines


def short_path(file: str | None) -> str:
    """A path under the working directory relative to it (as the trace names files); others unchanged."""
    if not file:
        return "?"
    path = Path(file)
    if not path.is_absolute():
        return file
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return file


def variant_label(cell: Cell) -> str:
    return cell.role if cell.variant == cell.role else f"{cell.role}: {cell.variant}"


def rules_label(cell: Cell) -> str:
    text = ", ".join(cell.rules) or "-"
    if cell.missing_rules:
        text += f" (expected {', '.join(cell.expected_rules)})"
    return text


def _row(cell: Cell) -> list[list[str]]:
    return [[cell.path], [variant_label(cell)], [_count(cell.trace)], [_count(cell.guard)],
            [AGREEMENT_MARKS[cell.agreement]], [rules_label(cell)], site_lines(cell) or ["-"],
            ["ok" if cell.passed else "FAIL"]]


def _count(signal: Signal | None) -> str:
    return str(signal.syncs) if signal is not None else "-"


def _line(row: list[list[str]], widths: list[int]) -> list[str]:
    """One table row; a cell with several lines (call sites) makes the row as tall."""
    height = max(len(cell) for cell in row)
    out = []
    for index in range(height):
        parts = []
        for column, (cell, width) in enumerate(zip(row, widths, strict=True)):
            text = cell[index] if index < len(cell) else ""
            parts.append(text.rjust(width) if _HEADERS[column] in _RIGHT else text.ljust(width))
        out.append("  ".join(parts).rstrip())
    return out


def cell_notes(cell: Cell) -> list[str]:
    notes = list(cell.notes)
    if cell.missing_rules:
        notes.append(f"expected {', '.join(cell.missing_rules)} from the registration, seen by neither signal")
    if cell.unexpected_rules:
        notes.append(f"also saw {', '.join(cell.unexpected_rules)}, which the registration does not expect")
    if cell.error:  # other failures are worded in the verdict; an error needs its message here
        notes.append(f"error: {cell.error}")
    return notes


def cell_name(cell: Cell) -> str:
    return f"{cell.path} {variant_label(cell)}"


__all__ = ["AGREEMENT_MARKS", "LEGEND", "cell_name", "cell_notes", "render_text", "rules_label",
           "short_path", "site_lines", "variant_label", "verdict_line"]


RENDERER = Renderer("text", ".txt", "the matrix of paths × variants, notes and the verdict", render_text, machine=False)

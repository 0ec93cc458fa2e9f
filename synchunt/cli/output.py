"""Where command results go: stdout or a file, never overwriting without being asked."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from synchunt.attribute import Analysis
from synchunt.files import write_text_file
from synchunt.trace import Trace


def console(*, stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def write_text(text: str, output: Path | None, *, overwrite: bool = True) -> None:
    if output is None:
        typer_echo(text)
        return
    write_text_file(output, text, overwrite=overwrite)


def typer_echo(text: str) -> None:
    import typer

    typer.echo(text, nl=not text.endswith("\n"))


def emit_analysis(result: Analysis, output_format: str, output: Path | None) -> None:
    from synchunt.report import render_csv, render_json, render_text

    if output_format == "json":
        write_text(render_json(result), output)
    elif output_format == "csv":
        write_text(render_csv(result), output)
    else:
        print_or_write(render_text(result), output)


def print_or_write(renderable: object, output: Path | None) -> None:
    """Print a rich renderable, or write it as plain text to ``output``."""
    if output is None:
        console().print(renderable)
        return
    write_text(render_to_text(renderable), output)


def render_to_text(renderable: object, width: int = 160) -> str:
    """A rich renderable as plain text (for files), without touching the terminal."""
    import io

    recorder = Console(record=True, width=width, file=io.StringIO())
    recorder.print(renderable)
    return recorder.export_text()


def write_report(result: Analysis, trace: Trace) -> Path:
    """The HTML stall report next to the trace (a new file: capture names are unique)."""
    from synchunt.cli.report import default_report_path
    from synchunt.report.html import write_html_report

    html_path = default_report_path(trace.path)
    write_html_report(result, html_path, traces=[trace])
    console(stderr=True).print(f"report: {html_path}", highlight=False)
    return html_path

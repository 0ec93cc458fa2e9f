"""`synchunt report` (the HTML stall report) and `synchunt compare` (before/after in the terminal)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.app import Mode, ModeOpt, OutputOpt, ScopeOpt, ThreadOpt, TracePaths, app


class CompareFormat(str, Enum):
    text = "text"
    json = "json"


HtmlOutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="The HTML file to write (replaced if it exists). Default: next to the first trace, "
                           "never replacing an existing file.")]
CompareOpt = Annotated[list[Path] | None, typer.Option(
    "--compare", help="An 'after' trace (or per-rank folder; repeat for several) to compare against.")]
CompareTrace = Annotated[Path, typer.Argument(help="A trace file or per-rank trace folder.")]


@app.command("report")
def report_command(
    traces: TracePaths,
    output: HtmlOutputOpt = None,
    compare: CompareOpt = None,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.auto,
) -> None:
    """Write a self-contained HTML stall report (timeline, call sites, scopes, call paths) that opens offline;
    with --compare, before/after side by side with the deltas."""
    from synchunt.attribute import analyze, load_sources
    from synchunt.cli.output import console
    from synchunt.errors import UsageError
    from synchunt.report.html import write_html_report

    html_path = output if output is not None else default_report_path(traces[0], compare=bool(compare))
    if output is None and html_path.exists():
        raise UsageError(f"{html_path} exists; pass -o {html_path} to replace it, or choose another name")
    loaded, saved = load_sources(traces)
    result = analyze([*loaded, *saved], mode=mode.value)
    after = None
    if compare:
        after_traces, after_saved = load_sources(compare)
        after = analyze([*after_traces, *after_saved], mode=mode.value)
    written = write_html_report(result, html_path, traces=loaded, compare=after,
                                compare_traces=after_traces if compare else None, thread=thread, scope=scope)
    console(stderr=True).print(f"report: {written}", highlight=False)


@app.command("compare")
def compare_command(
    before: CompareTrace,
    after: CompareTrace,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.auto,
    output_format: Annotated[CompareFormat, typer.Option("--format", "-f", help="text or json.")] = CompareFormat.text,
    output: OutputOpt = None,
) -> None:
    """Compare two traces (before and after a fix): per call site counts, stall and deltas, ops that vanished."""
    from synchunt.attribute import analyze
    from synchunt.report.compare import compare, render_compare_json, render_compare_text

    old = analyze(before, mode=mode.value, thread=thread, scope=scope)
    new = analyze(after, mode=mode.value, thread=thread, scope=scope)
    comparison = compare(old, new)
    if output_format is CompareFormat.json:
        from synchunt.cli.output import write_text

        write_text(render_compare_json(comparison), output)
    else:
        _print(render_compare_text(comparison), output)


def default_report_path(trace: Path, *, compare: bool = False) -> Path:
    """``x.pt.trace.json.gz`` → ``x.html`` (``x-compare.html``); a per-rank folder → ``folder/report.html``."""
    suffix = "-compare.html" if compare else ".html"
    if trace.is_dir():
        return trace / ("report" + suffix)
    name = trace.name.removesuffix(".gz").removesuffix(".json").removesuffix(".pt.trace")
    return trace.with_name(name + suffix)


def _print(renderable: object, output: Path | None) -> None:
    from synchunt.cli.output import print_or_write

    print_or_write(renderable, output)

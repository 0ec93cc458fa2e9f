"""`synchunt report` (the HTML stall report) and `synchunt compare` (before/after in the terminal)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from synchunt.cli.analysis import input_files
from synchunt.cli.app import ForceOpt, Mode, ModeOpt, OutputOpt, ScopeOpt, ThreadOpt, TracePaths, app
from synchunt.cli.load_options import MaxTraceBytesOpt, plain_load
from synchunt.cli.output import emit, format_choices, note
from synchunt.render.comparison import COMPARISON_FORMATS

if TYPE_CHECKING:
    from synchunt.attribute import Analysis
    from synchunt.trace import Trace

CompareFormat = format_choices(COMPARISON_FORMATS)
HtmlOutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="The HTML file to write (an existing one only with --force). Default: next to the first "
                           "trace, with a new name when that one exists.")]
CompareOpt = Annotated[list[Path] | None, typer.Option(
    "--compare", help="An 'after' trace (or per-rank folder; repeat for several) to compare against.")]
CompareTrace = Annotated[Path, typer.Argument(help="A trace file, per-rank trace folder or saved analysis.")]


@app.command("report")
def report_command(
    traces: TracePaths,
    output: HtmlOutputOpt = None,
    compare: CompareOpt = None,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.AUTO,
    force: ForceOpt = False,
    max_trace_bytes: MaxTraceBytesOpt = None,
) -> None:
    """Write a self-contained HTML stall report (timeline, call sites, scopes, call paths) that opens offline;
    with --compare, before/after side by side with the deltas."""
    from synchunt.attribute import analyze, filter_analysis, load_sources

    inputs = input_files([*traces, *(compare or [])])
    html_path = output if output is not None else unused_path(default_report_path(traces[0], compare=bool(compare)))
    if output is not None:
        from synchunt.files import check_output

        check_output(html_path, inputs=inputs, force=force)
    load = plain_load(max_trace_bytes)
    loaded, saved = load_sources(traces, load)
    result = filter_analysis(analyze([*loaded, *saved], mode=mode.value), thread=thread, scope=scope)
    after, after_traces = None, []
    if compare:
        after_traces, after_saved = load_sources(compare, load)
        after = filter_analysis(analyze([*after_traces, *after_saved], mode=mode.value), thread=thread, scope=scope)
    written = write_report(result, loaded, html_path, after=after, after_traces=after_traces, thread=thread,
                           inputs=inputs, force=force)
    note(f"report: {written}")


def write_report(result: Analysis, traces: list[Trace], html_path: Path, *, after: Analysis | None = None,
                 after_traces: list[Trace] | None = None, thread: str | None = None, inputs: list[Path] | None = None,
                 force: bool = False) -> Path:
    """Build the report's data from the analyses and their traces, render the page and write it."""
    from synchunt.files import write_output
    from synchunt.render.report import REPORT_FORMATS
    from synchunt.report import build_report

    report = build_report(result, traces, after=after, after_traces=after_traces or [], thread=thread)
    paths = [Path(t.path) for t in [*traces, *(after_traces or [])]]
    return write_output(html_path, REPORT_FORMATS.get("html")(report), inputs=[*(inputs or []), *paths],
                        force=force)


@app.command("compare")
def compare_command(
    before: CompareTrace,
    after: CompareTrace,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.AUTO,
    output_format: Annotated[CompareFormat, typer.Option(  # type: ignore[valid-type]
        "--format", "-f", help="text or json.")] = CompareFormat(COMPARISON_FORMATS.default),  # noqa: B008
    output: OutputOpt = None,
    force: ForceOpt = False,
    fail_on_new: Annotated[bool, typer.Option(
        "--fail-on-new", help="Exit 1 when the after side has a new call site or more syncs at one.")] = False,
    noise_us: Annotated[float, typer.Option(
        "--noise-us", min=0.0, help="Stall differences up to this many µs are timing noise.")] = 50.0,
    noise_fraction: Annotated[float, typer.Option(
        "--noise-fraction", min=0.0, help="... or up to this fraction of the before stall, if larger.")] = 0.10,
    max_trace_bytes: MaxTraceBytesOpt = None,
) -> None:
    """Compare two traces (before and after a fix): per call site counts, stall and deltas, ops that vanished.

    Exit 0, or 1 with --fail-on-new when the after side is worse; 2 on unusable input.
    """
    from synchunt.attribute import analyze
    from synchunt.compare import Noise, compare

    inputs = input_files([before, after])
    if output is not None:
        from synchunt.files import check_output

        check_output(output, inputs=inputs, force=force)
    load = plain_load(max_trace_bytes)
    old = analyze(before, mode=mode.value, thread=thread, scope=scope, load=load)
    new = analyze(after, mode=mode.value, thread=thread, scope=scope, load=load)
    comparison = compare(old, new, noise=Noise(absolute_us=noise_us, fraction=noise_fraction))
    emit(COMPARISON_FORMATS, output_format.value, comparison, output, inputs=inputs, force=force)
    raise typer.Exit(1 if fail_on_new and comparison.worse else 0)


def default_report_path(trace: Path, *, compare: bool = False) -> Path:
    """``x.pt.trace.json.gz`` → ``x.html`` (``x-compare.html``); a per-rank folder → ``folder/report.html``."""
    suffix = "-compare.html" if compare else ".html"
    if trace.is_dir():
        return trace / ("report" + suffix)
    name = trace.name.removesuffix(".gz").removesuffix(".json").removesuffix(".pt.trace")
    return trace.with_name(name + suffix)


def unused_path(path: Path) -> Path:
    """``path``, or ``name-2.html``, ``name-3.html`` … when it exists (a default name never replaces a file)."""
    candidate, number = path, 2
    while candidate.exists() or candidate.is_symlink():
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
        number += 1
    return candidate

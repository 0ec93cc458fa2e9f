"""`synchunt analyze`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from synchunt.cli.app import ForceOpt, Mode, ModeOpt, OutputOpt, ScopeOpt, SkipOpt, ThreadOpt, TracePaths, app
from synchunt.cli.load_options import (
    CacheDirOpt,
    CacheOpt,
    ExecutorChoice,
    ExecutorOpt,
    MaxTraceBytesOpt,
    ProgressOpt,
    SchedulerOpt,
    WorkersOpt,
    load_options,
)
from synchunt.cli.output import emit, format_choices
from synchunt.render.analysis import ANALYSIS_FORMATS

if TYPE_CHECKING:
    from synchunt.sites import FrameFilter

AnalysisFormat = format_choices(ANALYSIS_FORMATS)
FormatOpt = Annotated[AnalysisFormat, typer.Option(  # type: ignore[valid-type]
    "--format", "-f", help=", ".join(f"{r.name} ({r.description})" for r in ANALYSIS_FORMATS) + ".")]


@app.command("analyze")
def analyze_command(
    traces: TracePaths,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.AUTO,
    output_format: FormatOpt = AnalysisFormat(ANALYSIS_FORMATS.default),  # noqa: B008
    output: OutputOpt = None,
    force: ForceOpt = False,
    skip_package: SkipOpt = None,
    workers: WorkersOpt = 1,
    executor: ExecutorOpt = ExecutorChoice.local,
    scheduler: SchedulerOpt = None,
    cache: CacheOpt = True,
    cache_dir: CacheDirOpt = None,
    progress: ProgressOpt = True,
    max_trace_bytes: MaxTraceBytesOpt = None,
) -> None:
    """Detect and attribute the syncs in saved traces, grouped by call site (``--format html``: the same page as
    ``synchunt report``, timelines included)."""
    from synchunt.attribute import analyze

    if output is not None:
        from synchunt.files import check_output

        check_output(output, inputs=input_files(traces), force=force)
    load = load_options(workers, executor, scheduler, cache, cache_dir, progress, max_trace_bytes)
    if output_format.value == "html":  # the report's page needs the traces themselves, for the timelines
        from synchunt.attribute import load_sources
        from synchunt.render.report import REPORT_FORMATS
        from synchunt.report import build_report

        loaded, saved = load_sources(traces, load)
        result = analyze([*loaded, *saved], mode=mode.value, thread=thread, scope=scope,
                         frame_filter=frame_filter(skip_package))
        emit(REPORT_FORMATS, "html", build_report(result, loaded, thread=thread), output,
             inputs=input_files(traces), force=force)
        return
    result = analyze(traces, mode=mode.value, thread=thread, scope=scope, frame_filter=frame_filter(skip_package),
                     load=load)
    emit(ANALYSIS_FORMATS, output_format.value, result, output, inputs=input_files(traces), force=force)


def input_files(paths: list[Path]) -> list[Path]:
    """The files a command reads: the paths given and, for folders, the traces inside them."""
    from synchunt.trace import trace_files

    found: list[Path] = []
    for path in paths:
        found.append(path)
        if path.is_dir():
            found.extend(trace_files(path))
    return found


def frame_filter(skip_packages: list[str] | None) -> FrameFilter:
    from synchunt.sites import FrameFilter

    return FrameFilter.with_extra(skip_packages or ())

"""`synchunt analyze`."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from synchunt.cli.app import Mode, ModeOpt, OutputOpt, ScopeOpt, SkipOpt, ThreadOpt, TracePaths, app
from synchunt.cli.output import emit_analysis

if TYPE_CHECKING:
    from synchunt.attribute import FrameFilter


class AnalysisFormat(str, Enum):
    text = "text"
    json = "json"
    csv = "csv"


FormatOpt = Annotated[AnalysisFormat, typer.Option("--format", "-f", help="text (rich table), json or csv.")]


@app.command("analyze")
def analyze_command(
    traces: TracePaths,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.auto,
    output_format: FormatOpt = AnalysisFormat.text,
    output: OutputOpt = None,
    skip_package: SkipOpt = None,
) -> None:
    """Detect and attribute the syncs in saved traces, grouped by call site."""
    from synchunt.attribute import analyze

    result = analyze(traces, mode=mode.value, thread=thread, scope=scope, frame_filter=frame_filter(skip_package))
    emit_analysis(result, output_format.value, output)


def frame_filter(skip_packages: list[str] | None) -> FrameFilter:
    from synchunt.sites import FrameFilter

    return FrameFilter.with_extra(skip_packages or ())

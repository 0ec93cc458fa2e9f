"""`synchunt profile`: run a target under torch.profiler, save the trace, analyze it, write the report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.analysis import AnalysisFormat, FormatOpt, frame_filter
from synchunt.cli.app import Mode, ModeOpt, OutputOpt, ScopeOpt, SkipOpt, ThreadOpt, app
from synchunt.cli.output import emit_analysis


@app.command("profile", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def profile_command(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A workload name (see `synchunt workloads`), package.module:function "
                                               "or path/to/file.py:function. Extra --name VALUE options go to it.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the trace (and report).")] = Path("traces"),
    warmup: Annotated[int, typer.Option(help="Iterations run before the recorded window.")] = 1,
    iterations: Annotated[int, typer.Option(help="Recorded iterations.")] = 1,
    small: Annotated[bool, typer.Option("--small", help="Use the workload's small preset.")] = False,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Write the HTML stall report.")] = True,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.auto,
    output_format: FormatOpt = AnalysisFormat.text,
    output: OutputOpt = None,
    skip_package: SkipOpt = None,
) -> None:
    """Run TARGET under torch.profiler, save the trace, then analyze it (e.g. `synchunt profile hicache-dcp
    --impl masked --device cpu`)."""
    from synchunt.attribute import analyze
    from synchunt.capture import CaptureSettings, capture, parse_extra_options, resolve_target
    from synchunt.cli.output import console, write_report
    from synchunt.trace import load_trace

    resolved = resolve_target(target, parse_extra_options(list(ctx.args)), small=small)
    captured = capture(resolved, out, CaptureSettings(warmup=warmup, iterations=iterations))
    console(stderr=True).print(f"trace: {captured.path}", highlight=False)
    trace = load_trace(captured.path)  # parsed once for the analysis and the report
    result = analyze(trace, mode=mode.value, thread=thread, scope=scope, frame_filter=frame_filter(skip_package))
    if report:
        write_report(result, trace)
    emit_analysis(result, output_format.value, output)



"""`synchunt profile`: run a target under torch.profiler, save the trace, analyze it, write the report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.analysis import AnalysisFormat, FormatOpt, frame_filter
from synchunt.cli.app import ForceOpt, Mode, ModeOpt, OutputOpt, ScopeOpt, SkipOpt, ThreadOpt, app
from synchunt.cli.output import emit, note
from synchunt.render.analysis import ANALYSIS_FORMATS


@app.command("profile", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def profile_command(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A workload name (see `synchunt workloads`), package.module:function "
                                               "or path/to/file.py:function. Extra --name VALUE options go to it.")],
    setup: Annotated[str | None, typer.Option(
        "--setup", help="Set-up function (module:function, or a name in the target's module) run once, "
        "unprofiled; what it returns is passed to the step's first parameter.")] = None,
    device: Annotated[str | None, typer.Option(
        "--device", help="What to record: cpu, or cuda / cuda:N for CUDA activities too, or shadow-cuda: run on "
        "the CPU as on a one-GPU machine, so that only device data reaching the host counts (docs/profile.md; "
        "default: the target's own device option or default, else cpu). Also passed to a target with a device "
        "parameter (shadow-cuda as cuda).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the trace (and report).")] = Path("traces"),
    warmup: Annotated[int, typer.Option(help="Iterations run before the recorded window.")] = 1,
    iterations: Annotated[int, typer.Option(help="Recorded iterations.")] = 1,
    small: Annotated[bool, typer.Option("--small", help="Use the workload's small preset.")] = False,
    guard: Annotated[bool, typer.Option(
        "--guard/--no-guard", help="After the recorded window, run the step again under the runtime guard and keep "
        "what it saw with the trace (it sees .tolist(), .cpu(), .numpy(), which a CPU trace cannot).")] = True,
    project_root: Annotated[Path | None, typer.Option(
        "--project-root", help="Name the target's files relative to this folder (default: the nearest folder "
        "above the target with pyproject.toml, setup.py, setup.cfg or .git, else the working directory).")] = None,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Write the HTML stall report.")] = True,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.0, help="Stop the target after this many seconds (it runs in a child process).")] = None,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.AUTO,
    output_format: FormatOpt = AnalysisFormat(ANALYSIS_FORMATS.default),  # noqa: B008
    output: OutputOpt = None,
    force: ForceOpt = False,
    skip_package: SkipOpt = None,
) -> None:
    """Run TARGET under torch.profiler, save the trace, then analyze it (e.g. `synchunt profile hicache-dcp
    --impl masked --device cpu`, `synchunt profile myserve.sched:step --setup make_state --n 8`)."""
    from synchunt.attribute import analyze
    from synchunt.capture import CaptureSettings, parse_extra_options
    from synchunt.capture.isolated import TargetSpec, capture_isolated
    from synchunt.capture.profiler import require_torch
    from synchunt.cli.report import write_report
    from synchunt.trace import load_trace

    require_torch()  # before the target's code imports it: one line that says what to install
    if output is not None:
        from synchunt.files import check_output

        check_output(output, force=force)  # before a long capture
    spec = TargetSpec(target, parse_extra_options(list(ctx.args)), small=small, setup=setup, device=device,
                      project_root=str(project_root) if project_root is not None else None)
    captured = capture_isolated(spec, out, CaptureSettings(warmup=warmup, iterations=iterations, guard=guard),
                                timeout_s=timeout)
    for line in captured.notes:
        note(f"note: {line}")
    note(f"trace: {captured.path}")
    trace = load_trace(captured.path)  # parsed once for the analysis and the report
    result = analyze(trace, mode=mode.value, thread=thread, scope=scope, frame_filter=frame_filter(skip_package))
    if guard:
        note(guard_line(captured.metadata.get("guard") or {}))
    if report:
        note(f"report: {write_report(result, [trace], profile_report_path(captured.path))}")
    emit(ANALYSIS_FORMATS, output_format.value, result, output, inputs=[captured.path], force=force)


def profile_report_path(trace: Path) -> Path:
    """``x.pt.trace.json.gz`` → ``x.profile.html``: beside the trace, but not where ``synchunt report`` writes by
    default (``x.html``), so that command works right after this one."""
    name = trace.name.removesuffix(".gz").removesuffix(".json").removesuffix(".pt.trace")
    return trace.with_name(name + ".profile.html")


def guard_line(guard: dict) -> str:
    """``guard: 8 syncs at 5 lines over 1 step (kept with the trace)``, or why the guard pass stopped."""
    records = [r for r in guard.get("records", []) if not r.get("allowed")]
    # Under the shadow device an op on host-resident data is recorded, not counted: a GPU run does not sync there.
    host = [r for r in records if r.get("shadow") and r.get("residency") == "host"]
    records = [r for r in records if not (r.get("shadow") and r.get("residency") == "host")]
    total = sum(int(r.get("count", 1)) for r in records)
    lines = len({(r.get("file"), r.get("line")) for r in records})
    steps = int(guard.get("iterations", 0))
    text = (f"guard: {total} sync{'s' if total != 1 else ''} at {lines} line{'s' if lines != 1 else ''} over "
            f"{steps} step{'s' if steps != 1 else ''} (kept with the trace)")
    if host:
        left = sum(int(r.get("count", 1)) for r in host)
        text += f"; {left} op{'s' if left != 1 else ''} on host-resident data left out"
    if guard.get("error"):
        text += f"; the guard pass stopped early: {guard['error']}"
    return text

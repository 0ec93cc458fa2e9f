"""`synchunt gate`: fail a CI job when traces (or a freshly profiled target) hold more syncs than allowed."""

from __future__ import annotations

import contextlib
import datetime as dt
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from synchunt.cli.app import Mode, ModeOpt, OutputOpt, ScopeOpt, ThreadOpt, app
from synchunt.cli.load_options import MaxTraceBytesOpt, plain_load
from synchunt.cli.output import format_choices
from synchunt.errors import UsageError
from synchunt.render.gate import GATE_FORMATS

if TYPE_CHECKING:
    from synchunt.gate import Baseline, GateResult

GateFormat = format_choices(GATE_FORMATS)


GateTraces = Annotated[list[str] | None, typer.Argument(
    help="Trace files (.json, .json.gz) or per-rank trace folders; with --target, the target's --name VALUE "
         "options instead.", metavar="TRACE", show_default=False)]


@app.command("gate", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def gate_command(
    traces: GateTraces = None,
    max_syncs: Annotated[int, typer.Option("--max-syncs", min=0, help="Syncs allowed beyond the baseline.")] = 0,
    max_idle_us: Annotated[float | None, typer.Option(
        "--max-idle-us", min=0.0, help="Also fail when the counted syncs caused more device idle than this (µs); "
        "needs device activity.")] = None,
    allow_partial: Annotated[bool, typer.Option(
        "--allow-partial", help="Judge a trace cut mid-write on the events before the cut (else: exit 2).")] = False,
    thread: ThreadOpt = None,
    scope: ScopeOpt = None,
    mode: ModeOpt = Mode.AUTO,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="TOML allow-list of reviewed syncs.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Also fail on stale or expired baseline entries.")] = False,
    write_baseline: Annotated[Path | None, typer.Option(
        "--write-baseline", help="Write a baseline allowing the current syncs, then gate against it.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Let --write-baseline and --output replace an existing file.")] = False,
    output_format: Annotated[GateFormat, typer.Option(  # type: ignore[valid-type]
        "--format", "-f", help=", ".join(f"{r.name} ({r.description})" for r in GATE_FORMATS) + ".")]
    = GateFormat(GATE_FORMATS.default),  # noqa: B008
    output: OutputOpt = None,
    target: Annotated[str | None, typer.Option(
        "--target", help="Profile this workload (or module:function) first, then gate its trace; --device "
        "shadow-cuda among its options profiles it as on a one-GPU machine, emulated on the CPU.")] = None,
    setup: Annotated[str | None, typer.Option(
        "--setup", help="With --target: set-up function (module:function, or a name in the target's module) run "
        "once, unprofiled; what it returns is passed to the step's first parameter.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="With --target: keep the trace in this folder (default: a temporary one).")] = None,
    small: Annotated[bool, typer.Option("--small", help="With --target: the workload's small preset.")] = False,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.0, help="With --target: stop the target after this many seconds.")] = None,
    max_trace_bytes: MaxTraceBytesOpt = None,
) -> None:
    """Fail CI when traces (or a freshly profiled target) hold more syncs than the baseline and budget allow.

    Exit 0 when the syncs not allowed by the baseline fit in --max-syncs (and --max-idle-us), 1 when they do not
    (or, with --strict, when a baseline entry is stale or expired), 2 on unusable input or when there is nothing
    to judge (no usable events, a cut trace without --allow-partial, a profiled thread that recorded nothing).

    `synchunt gate traces/*.json.gz --baseline synchunt-baseline.toml`, or profile and gate in one go:
    `synchunt gate --target hicache-dcp --impl sliced --device cpu` (`--device shadow-cuda` on a CPU-only machine
    counts only the syncs of what the code puts on the GPU).
    """
    import dataclasses

    from synchunt.attribute import analyze
    from synchunt.config import load_config
    from synchunt.gate import evaluate, load_baseline
    from synchunt.gate.configured import configured
    from synchunt.rules import RULES

    items = list(traces or [])
    if target is None:
        _reject_options(items, out=out, small=small or timeout is not None, setup=setup)
    from synchunt.cli.analysis import input_files
    from synchunt.files import check_output

    inputs = input_files([Path(item) for item in items]) if target is None else []
    # Before a long capture. --write-baseline may regenerate the baseline in use (keeping its reasons).
    if write_baseline is not None:
        check_output(write_baseline, inputs=inputs, force=force, what="baseline")
    if output is not None:
        inputs += [baseline] if baseline is not None else []
        check_output(output, inputs=[*inputs, *([write_baseline] if write_baseline else [])], force=force)
    config = load_config(Path.cwd())  # the project's [tool.synchunt], as `synchunt lint` reads it
    config.check_codes(tuple(rule.code for rule in RULES))
    allow_list = load_baseline(baseline) if baseline is not None else None
    with _trace_paths(items, target, out, small, timeout, setup) as paths:
        analysis, not_counted = configured(analyze(paths, mode=mode.value, thread=thread, scope=scope,
                                                   load=plain_load(max_trace_bytes)), config)
    result = evaluate(analysis, max_syncs=max_syncs, baseline=allow_list, strict=strict, max_idle_us=max_idle_us,
                      allow_partial=allow_partial)
    result = dataclasses.replace(result, set_aside_by_config=not_counted)
    if write_baseline is not None:
        result = _write_and_regate(result, allow_list, write_baseline, force=force)
    _emit(result, output_format.value, output, inputs, force)
    raise typer.Exit(result.exit_code)


def _reject_options(items: list[str], *, out: Path | None, small: bool, setup: str | None) -> None:
    """Without --target, every item must be a trace and the capture options make no sense."""
    if not items:
        raise UsageError("give trace files to gate, or --target NAME to profile one first")
    if setup is not None:
        raise UsageError("--setup only applies with --target NAME")
    if out is not None or small:
        raise UsageError(f"{'--out' if out is not None else '--small/--timeout'} only applies with --target NAME")
    unknown = next((item for item in items if item.startswith("-")), None)
    if unknown is not None:
        raise UsageError(f"no such option: {unknown} (workload options need --target NAME)")


@contextlib.contextmanager
def _trace_paths(items: list[str], target: str | None, out: Path | None, small: bool,
                 timeout: float | None, setup: str | None) -> Iterator[list[Path]]:
    """The traces to gate: the given ones, or the one a fresh capture of ``target`` writes."""
    if target is None:
        yield [Path(item) for item in items]
        return
    from synchunt.capture import CaptureSettings, parse_extra_options
    from synchunt.capture.isolated import TargetSpec, capture_isolated
    from synchunt.cli.output import note

    spec = TargetSpec(target, parse_extra_options(items), small=small, setup=setup)
    with contextlib.ExitStack() as stack:
        folder = out if out is not None else Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="synchunt-gate-")))
        captured = capture_isolated(spec, folder, CaptureSettings(), timeout_s=timeout)
        if out is not None:
            note(f"trace: {captured.path}")
        yield [captured.path]


def _write_and_regate(result: GateResult, previous: Baseline | None, path: Path, *, force: bool) -> GateResult:
    """Write a baseline for the current syncs (keeping the reasons of the baseline in use), then gate against it."""
    import dataclasses

    from synchunt.cli.output import note
    from synchunt.gate import baseline_from_syncs, evaluate, load_baseline, write_baseline

    written = write_baseline(baseline_from_syncs(result.analysis.records, today=dt.date.today(), previous=previous),
                             path, force=force)
    fresh = load_baseline(written)
    noun = "entry" if len(fresh.entries) == 1 else "entries"
    note(f"baseline: wrote {len(fresh.entries)} {noun} to {written}")
    again = evaluate(result.analysis, max_syncs=result.budget, baseline=fresh, strict=result.strict,
                     today=result.today, max_idle_us=result.idle_budget_us, allow_partial=result.allow_partial)
    return dataclasses.replace(again, set_aside_by_config=result.set_aside_by_config)


def _emit(result: GateResult, output_format: str, output: Path | None, inputs: list[Path], force: bool) -> None:
    from synchunt.cli.output import emit, note
    from synchunt.render.gate.headline import gate_headline

    emit(GATE_FORMATS, output_format, result, output, inputs=inputs, force=force)
    if result.missing_evidence:  # exit 2, like any unusable input: one error line on stderr, whatever the format
        note("error: " + gate_headline(result).removeprefix("gate: "))
    elif GATE_FORMATS.get(output_format).machine or output is not None:
        # The document may be on stdout for a tool to parse; the verdict goes to stderr for the log reader.
        note(gate_headline(result))

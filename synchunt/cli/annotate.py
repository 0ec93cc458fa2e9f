"""`synchunt annotate`: the trace plus a synchunt track, for Perfetto and chrome://tracing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.app import ForceOpt, Mode, ModeOpt, app

AnnotatedOutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="The annotated trace to write (gzip when it ends in .gz). Default: "
                           "NAME.synchunt.pt.trace.json.gz next to the trace.")]


@app.command("annotate")
def annotate_command(
    trace: Annotated[Path, typer.Argument(help="A trace file (.json, .json.gz).")],
    output: AnnotatedOutputOpt = None,
    force: ForceOpt = False,
    mode: ModeOpt = Mode.AUTO,
) -> None:
    """Write a copy of the trace with a synchunt track: an instant at each sync (rule, call site, fix), an
    arrow from each sync to the device work it waited for, and a counter of cumulative stall. Open it in
    Perfetto (ui.perfetto.dev) or chrome://tracing."""
    from synchunt.annotate import annotate_trace
    from synchunt.cli.output import note

    written, count = annotate_trace(trace, output if output is not None else default_annotated_path(trace),
                                    force=force, mode=mode.value)
    note(f"annotated trace: {written} ({count} sync{'s' if count != 1 else ''} marked)")


def default_annotated_path(trace: Path) -> Path:
    """``x.pt.trace.json.gz`` → ``x.synchunt.pt.trace.json.gz`` beside it."""
    name = trace.name.removesuffix(".gz").removesuffix(".json").removesuffix(".pt.trace")
    return trace.with_name(name + ".synchunt.pt.trace.json.gz")

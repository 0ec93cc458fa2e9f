"""`synchunt audit`: every registered path, bad and fixed, under the profiler and the runtime guard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.app import ForceOpt, OutputOpt, app
from synchunt.cli.output import emit, format_choices
from synchunt.render.audit import AUDIT_FORMATS

AuditFormat = format_choices(AUDIT_FORMATS)


@app.command("audit")
def audit_command(
    names: Annotated[list[str] | None, typer.Argument(
        help="Paths to audit (default: every registered one; see `synchunt workloads`).", metavar="NAME",
        show_default=False)] = None,
    device: Annotated[str, typer.Option("--device", help="cpu (latent trace mode) or cuda (confirmed).")] = "cpu",
    small: Annotated[bool, typer.Option("--small/--full", help="Each path's small preset, or its full size.")]
    = True,
    output_format: Annotated[AuditFormat, typer.Option(  # type: ignore[valid-type]
        "--format", "-f", help="text, json or html.")] = AuditFormat(AUDIT_FORMATS.default),  # noqa: B008
    output: OutputOpt = None,
    force: ForceOpt = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Keep the traces in this folder (default: a temporary one).")] = None,
) -> None:
    """Run each path's bad and fixed variant under the profiler and under the guard, and print the matrix.

    Exit 1 when a fixed variant syncs (either signal) or a bad variant shows none (both), else 0; 2 on bad input.

    Examples: `synchunt audit`, `synchunt audit dcp-kv-filter --format json`.
    """
    from synchunt.audit import run_audit

    if output is not None:
        from synchunt.files import check_output

        check_output(output, force=force)
    result = run_audit(names or None, device=device, small=small, traces_dir=out)
    emit(AUDIT_FORMATS, output_format.value, result, output, force=force)
    raise typer.Exit(result.exit_code)

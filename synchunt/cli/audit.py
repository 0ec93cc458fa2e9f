"""`synchunt audit`: every registered path, bad and fixed, under the profiler and the runtime guard."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.app import OutputOpt, app
from synchunt.cli.output import write_text


class AuditFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"


@app.command("audit")
def audit_command(
    names: Annotated[list[str] | None, typer.Argument(
        help="Paths to audit (default: every registered one; see `synchunt workloads`).", metavar="NAME",
        show_default=False)] = None,
    device: Annotated[str, typer.Option("--device", help="cpu (latent trace mode) or cuda (confirmed).")] = "cpu",
    small: Annotated[bool, typer.Option("--small/--full", help="Each path's small preset, or its full size.")]
    = True,
    output_format: Annotated[AuditFormat, typer.Option("--format", "-f", help="text, json or html.")]
    = AuditFormat.text,
    output: OutputOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Keep the traces in this folder (default: a temporary one).")] = None,
) -> None:
    """Run each path's bad and fixed variant under the profiler and under the guard, and print the matrix.

    Exit 1 when a fixed variant syncs (either signal) or a bad variant shows none (both), else 0; 2 on bad input.

    Examples: `synchunt audit`, `synchunt audit dcp-kv-filter --format json`.
    """
    from synchunt.audit import run_audit
    from synchunt.audit.render import render_json, render_text

    result = run_audit(names or None, device=device, small=small, traces_dir=out)
    if output_format is AuditFormat.json:
        write_text(render_json(result) + "\n", output)
    elif output_format is AuditFormat.html:
        from synchunt.audit.html import render_audit_html, write_audit_html

        if output is None:
            write_text(render_audit_html(result), None)
        else:
            write_audit_html(result, output)
    else:
        write_text(render_text(result), output)
    raise typer.Exit(result.exit_code)

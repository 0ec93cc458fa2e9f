"""The typer application and the option aliases shared by every command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.commands import APP_HELP, APP_NAME, HELP_OPTION_NAMES, VERSION_HELP
from synchunt.modes import Mode

app = typer.Typer(
    name=APP_NAME,
    help=APP_HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": list(HELP_OPTION_NAMES)},
)


def _print_version(value: bool) -> None:
    if value:
        from synchunt import __version__

        typer.echo(f"synchunt {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help=VERSION_HELP)] = False,
) -> None:
    """Hunt hidden device-to-host syncs in PyTorch code."""


TracePaths = Annotated[list[Path], typer.Argument(help="Trace files (.json, .json.gz) or per-rank trace folders.")]
ThreadOpt = Annotated[str | None, typer.Option("--thread", help="Only syncs on this thread (name or tid).")]
ScopeOpt = Annotated[str | None, typer.Option("--scope", help="Only syncs inside this record_function scope.")]
ModeOpt = Annotated[Mode, typer.Option("--mode", help="confirmed: runtime evidence; latent: would sync on a GPU; "
                                       "auto: by whether the trace has device activity.")]
OutputOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", help="Write to this file instead of stdout (never one of the inputs; an existing file only "
    "with --force).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Let --output replace an existing file.")]
SkipOpt = Annotated[list[str] | None, typer.Option(
    "--skip-package", help="Also treat frames from this top-level package as library code when picking the call "
    "site (repeatable; torch, synchunt, site-packages and the standard library are always skipped).")]

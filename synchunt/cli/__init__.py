"""Command-line interface: thin typer declarations over the library API."""

from __future__ import annotations

import sys

from synchunt.cli.app import app
from synchunt.errors import SynchuntError


def main() -> None:
    """Entry point: library errors become one red line and their exit code, never a traceback."""
    try:
        app(standalone_mode=False)
    except SynchuntError as error:
        _fail(str(error), error.exit_code)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as error:  # click's usage errors and the like
        import click

        if isinstance(error, click.exceptions.ClickException):
            _fail(error.format_message(), 2)
        if isinstance(error, click.exceptions.Abort):
            _fail("aborted", 1)
        raise


def _fail(message: str, code: int) -> None:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
    sys.exit(code)


__all__ = ["app", "main"]

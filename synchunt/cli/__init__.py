"""Command-line interface: thin typer declarations over the library API."""

from __future__ import annotations

import sys

from synchunt.cli import analysis as _analysis  # noqa: F401 - registers commands
from synchunt.cli import audit as _audit  # noqa: F401 - registers commands
from synchunt.cli import catalog as _catalog  # noqa: F401 - registers commands
from synchunt.cli import gate as _gate  # noqa: F401 - registers commands
from synchunt.cli import lint as _lint  # noqa: F401 - registers commands
from synchunt.cli import profile as _profile  # noqa: F401 - registers commands
from synchunt.cli import report as _report  # noqa: F401 - registers commands
from synchunt.cli.app import app
from synchunt.errors import SynchuntError


def main() -> None:
    """Entry point: library errors become one red line and their exit code, never a traceback.

    Usage errors (unknown option, bad choice) are typer's own: a short message and exit 2.
    """
    try:
        app()
    except SynchuntError as error:
        _fail(str(error), error.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)


def _fail(message: str, code: int) -> None:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    sys.exit(code)


__all__ = ["app", "main"]

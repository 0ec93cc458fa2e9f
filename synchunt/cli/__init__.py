"""Command-line interface: thin typer declarations over the library API.

A command registers when its module is imported. ``main()`` imports only the module of the command it runs (found by
``synchunt.cli.commands`` from the source), so ``synchunt analyze`` does not load the gate, audit or report code, and
the top-level help and ``--version`` load none of them; ``app`` (``from synchunt.cli import app``) is
the application with every command.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import Any

from synchunt.cli.commands import HELP_OPTION_NAMES, command_entries, command_modules, module_of
from synchunt.errors import SynchuntError

ISSUES_URL = "https://github.com/synchunt/synchunt/issues"
INTERRUPTED = 130  # the exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells report it


def __getattr__(name: str) -> Any:
    if name == "app":
        return _application(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _application(command: str | None) -> Any:
    """The typer app with the module of ``command`` imported (every module when None or not a command)."""
    from synchunt.cli.app import app as application

    globals().pop("app", None)  # importing the submodule bound the name to it; `app` means the application
    module = module_of(command)
    for name in (module,) if module else command_modules():
        import_module(f"synchunt.cli.{name}")
    if module is None:
        globals()["app"] = application
    return application


def _listing() -> Any:
    """The application as the top-level help shows it: each command by its name and help, read from the command
    modules' source, none of them imported (so the help loads nothing of the analysis)."""
    import typer

    from synchunt.cli.app import app as application

    listing = typer.Typer(**{key: getattr(application.info, key) for key in ("name", "help")},
                          no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                          context_settings=application.info.context_settings)
    listing.registered_callback = application.registered_callback
    for entry in command_entries():
        listing.command(entry.name, help=entry.help)(_listed)
    return listing


def _list_commands() -> None:
    """The top-level help written without typer (`synchunt.cli.listing`), when it can be, ending as typer's does:
    ``--help`` adds an empty line and exits 0; ``synchunt`` alone (``no_args_is_help``) exits 2 after an empty
    line on stderr. Returns where only typer can write it."""
    from synchunt.cli.listing import render

    text = render()
    if text is None:
        return
    asked = bool(sys.argv[1:])
    try:
        sys.stdout.write(text + ("\n" if asked else ""))
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (`| head`): exit 1 quietly, as rich does
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the interpreter's last flush must not fail again)
        sys.exit(1)
    except OSError as error:  # a full disk, a closed stream: one line, as for any failure
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        _internal_error(error)
    if not asked:
        sys.stderr.write("\n")
    sys.exit(0 if asked else 2)


def _listed() -> None:
    """Never run: a command reached through the listing is imported and run from its own module instead."""


def main() -> None:
    """Entry point. Every failure is one ``error:`` line on stderr: usage and input errors exit 2, a crash of
    synchunt itself exits 3 ("internal error", never a traceback), so a gate never reads a crash as "syncs found".
    """
    if sys.argv[1:] == ["--version"]:  # the answer needs nothing else loaded, not even typer
        from synchunt import __version__

        sys.stdout.write(f"synchunt {__version__}\n")
        sys.exit(0)
    if sys.argv[1:] in ([], *([name] for name in HELP_OPTION_NAMES)):
        _list_commands()
    import typer

    from synchunt.process import TRACE_COMMANDS, load_numpy_tuned

    clicks = _click_exceptions()
    command = _command(sys.argv)
    try:
        if command in TRACE_COMMANDS:
            load_numpy_tuned()
        app = _application(command) if module_of(command) else _listing()
        code = app(standalone_mode=False)
    except SynchuntError as error:
        _fail(str(error), error.exit_code)
    except clicks.NoArgsIsHelpError as shown:  # `synchunt` alone: the help, then exit 2 like click
        _fail(shown.format_message().strip(), 2, prefix=False)
    except clicks.UsageError as error:
        where = f" (see `{error.ctx.command_path} --help`)" if error.ctx is not None else ""
        _fail(f"{error.format_message()}{where}", 2)
    except clicks.ClickException as error:
        _fail(error.format_message(), error.exit_code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        _fail("aborted", INTERRUPTED)
    except KeyboardInterrupt:
        _fail("interrupted", INTERRUPTED)
    except RecursionError:
        _fail("internal error: input nested too deeply for this synchunt (RecursionError); please report it at "
              f"{ISSUES_URL} with the command that failed", 3)
    except MemoryError:
        _fail("internal error: out of memory; try a smaller input or --max-trace-bytes", 3)
    except Exception as error:  # the last line of defence: one line and exit 3, never a traceback
        _internal_error(error)
    if code == INTERRUPTED:  # typer answers Ctrl-C with exit code 130 and no word; no command exits so itself
        _fail("interrupted", INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)


def _internal_error(error: Exception) -> None:
    _fail(f"internal error: {type(error).__name__}: {error}; please report it at {ISSUES_URL} with the command "
          "that failed (set SYNCHUNT_TRACEBACK=1 to see the traceback)", 3, error=error)


def entry() -> None:
    """The console script and ``python -m synchunt``: `main`, in a process that ends with it, tuned for the command
    it runs (``synchunt.process``). `main` itself leaves the process alone, for callers that go on after it (tests,
    a harness)."""
    from synchunt.process import collector_for

    command = _command(sys.argv)
    if command == "analyze":  # before anything heavy loads (main imports typer and numpy): synchunt.cli.prefetch
        from synchunt.cli.prefetch import prefetch_trace_digests

        prefetch_trace_digests(sys.argv[sys.argv.index(command) + 1:])
    with collector_for(command):
        main()


def _command(argv: list[str]) -> str | None:
    return next((arg for arg in argv[1:] if not arg.startswith("-")), None)


def _click_exceptions():  # type: ignore[no-untyped-def]
    """Click's exception classes: vendored inside typer since 0.2x, the click package before."""
    try:
        from typer._click import exceptions
    except ImportError:
        from click import exceptions  # type: ignore[no-redef]
    return exceptions


def _fail(message: str, code: int, *, prefix: bool = True, error: BaseException | None = None) -> None:
    from synchunt.render.text import visible

    if error is not None and os.environ.get("SYNCHUNT_TRACEBACK"):
        import traceback

        traceback.print_exception(error)
    text = visible(message)
    if prefix:
        text = "error: " + " ".join(text.split())  # one line, whatever the message quoted (a name with newlines)
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    sys.exit(code)


__all__ = ["app", "main"]

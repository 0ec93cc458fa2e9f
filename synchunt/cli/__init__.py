"""Command-line interface: thin typer declarations over the library API.

A command registers when its module is imported. ``main()`` imports only the module of the command it runs, so
``synchunt analyze`` does not load the gate, audit or report code; ``app`` (``from synchunt.cli import app``) is
the application with every command.
"""

from __future__ import annotations

import gc
import os
import sys
from importlib import import_module
from typing import Any

from synchunt.errors import SynchuntError

ISSUES_URL = "https://github.com/synchunt/synchunt/issues"
# The modules that declare the commands, in the order help lists them; and which module declares each command.
_MODULES = ("analysis", "annotate", "audit", "catalog", "gate", "lint", "profile", "report")
_MODULE_OF = {"analyze": "analysis", "annotate": "annotate", "audit": "audit", "rules": "catalog",
              "workloads": "catalog", "gate": "gate", "lint": "lint", "profile": "profile", "report": "report",
              "compare": "report"}


def __getattr__(name: str) -> Any:
    if name == "app":
        return _application(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _application(command: str | None) -> Any:
    """The typer app with the module of ``command`` imported (every module when None or not a command)."""
    from synchunt.cli.app import app as application

    globals().pop("app", None)  # importing the submodule bound the name to it; `app` means the application
    module = _MODULE_OF.get(command or "")
    for name in (module,) if module else _MODULES:
        import_module(f"synchunt.cli.{name}")
    if module is None:
        globals()["app"] = application
    return application


# Commands that read traces and analyses (a gate's --target runs in a process of its own): numpy is loaded for them
# without its huge-page advice (see `_numpy_without_huge_page_advice`).
_READ_ONLY_COMMANDS = frozenset({"analyze", "gate", "report", "compare", "annotate"})
_HUGE_PAGE_SETTING = "NUMPY_MADVISE_HUGEPAGE"


def _numpy_without_huge_page_advice() -> None:
    """Load numpy with ``NUMPY_MADVISE_HUGEPAGE=0`` unless the user chose a setting (or numpy is loaded already).

    numpy advises huge pages for every array of 4 MB and more; where the kernel's THP defrag is ``madvise`` (the
    default of many distributions) the first touch of such memory can wait on a synchronous compaction when no
    huge page is free (numpy#31590). A trace's columns are allocated once and read a few times: the advice gains
    little. On the scale benchmark's traces (8 runs each, docs/benchmarks.md) it made the median cached
    re-analysis 0.36 -> 0.46 s and 0.46 -> 0.54 s, and a first analysis 2.45 -> 2.80 s. The variable is removed
    again at once, so that no process started from here (a gated target) inherits it.
    """
    if "numpy" in sys.modules or _HUGE_PAGE_SETTING in os.environ:
        return
    os.environ[_HUGE_PAGE_SETTING] = "0"
    try:
        import numpy  # noqa: F401  (numpy reads the variable once, at import)
    finally:
        os.environ.pop(_HUGE_PAGE_SETTING, None)


def main() -> None:
    """Entry point. Every failure is one ``error:`` line on stderr: usage and input errors exit 2, a crash of
    synchunt itself exits 3 ("internal error", never a traceback), so a gate never reads a crash as "syncs found".
    """
    import typer

    clicks = _click_exceptions()
    command = _command(sys.argv)
    try:
        if command in _READ_ONLY_COMMANDS:
            _numpy_without_huge_page_advice()
        app = _application(command)
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
        _fail("aborted", 130)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except RecursionError:
        _fail("internal error: input nested too deeply for this synchunt (RecursionError); please report it at "
              f"{ISSUES_URL} with the command that failed", 3)
    except MemoryError:
        _fail("internal error: out of memory; try a smaller input or --max-trace-bytes", 3)
    except Exception as error:  # the last line of defence: one line and exit 3, never a traceback
        _fail(f"internal error: {type(error).__name__}: {error}; please report it at {ISSUES_URL} with the command "
              "that failed (set SYNCHUNT_TRACEBACK=1 to see the traceback)", 3, error=error)
    sys.exit(code if isinstance(code, int) else 0)


def entry() -> None:
    """The console script and ``python -m synchunt``: `main`, in a process that ends with it.

    After a trace command, whose outputs are written and closed by then, every object is frozen: the interpreter's
    last collection at exit need not walk what the run made (the catalogue, numpy's and typer's modules, the
    analysis), 35-45 ms of every such command here. During a trace command the youngest generation is collected
    after every `_YOUNG_COLLECTION_THRESHOLD` new containers instead of CPython's default (700 up to 3.12, 2000 in
    3.13): an analysis makes hundreds of thousands of short-lived tuples and records and almost no cycles, so the
    collector's ~190 passes found nothing to free and cost a cached re-analysis 15-35 ms and more in cache misses
    (0.41-0.44 -> 0.29-0.36 s here).
    `main` itself leaves the collector alone, for callers that go on after it (tests, a harness).
    """
    trace_command = _command(sys.argv) in _READ_ONLY_COMMANDS
    thresholds = gc.get_threshold()
    if trace_command:
        gc.set_threshold(_YOUNG_COLLECTION_THRESHOLD, *thresholds[1:])
    try:
        main()
    finally:
        if trace_command:
            gc.set_threshold(*thresholds)
            gc.freeze()


# Cyclic garbage waits until this many more container objects have been made (whatever their size) to be freed.
_YOUNG_COLLECTION_THRESHOLD = 100_000


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

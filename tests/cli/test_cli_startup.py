"""Start-up: ``--version`` and the top-level help load nothing of the analysis (the help not even typer or rich,
and its text is typer's), and the command → module map the CLI derives from its source is the one the application
registers."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

# What a run that only lists or names itself may load of synchunt: the package, its errors, the CLI's entry, the
# application's options (with the mode enum) and the process tuning.
ALLOWED_SYNCHUNT = {"synchunt", "synchunt.errors", "synchunt.__main__", "synchunt.cli", "synchunt.cli.commands",
                    "synchunt.cli.listing",
                    "synchunt.cli.app", "synchunt.modes", "synchunt.process",
                    # `synchunt` alone shows the help as an error (exit 2), through the one error writer
                    "synchunt.render", "synchunt.render.text", "synchunt.printable"}
ANALYSIS_DEPENDENCIES = ("numpy", "pandas", "msgspec", "torch", "pyarrow")
# What the top-level help written to a pipe loads of synchunt: the command table and the page's writer, no typer.
LISTING_SYNCHUNT = {"synchunt", "synchunt.errors", "synchunt.__main__", "synchunt.cli", "synchunt.cli.commands",
                    "synchunt.cli.listing", "synchunt.process"}  # the process tuning of the console script
CLI_TOOLKITS = ("typer", "rich", "click", "shellingham")


_RUN = """
import json, runpy, sys
sys.argv = ["synchunt", *json.loads(sys.argv[1])]
try:
    runpy.run_module("synchunt", run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)))
"""


def _imported(*args: str, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The modules ``python -m synchunt ARGS`` has loaded when it exits, and its stdout."""
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps(args)], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, **(env or {})})
    return set(json.loads(done.stderr.rsplit("\n", 1)[1])), done.stdout


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("-h",), ()], ids=lambda a: " ".join(a) or "bare")
def test_listing_and_naming_itself_import_nothing_of_the_analysis(args: tuple[str, ...]) -> None:
    modules, out = _imported(*args)
    assert "synchunt.cli" in modules  # the measurement saw the CLI's own imports
    ours = {name for name in modules if name == "synchunt" or name.startswith("synchunt.")}
    assert ours <= ALLOWED_SYNCHUNT, sorted(ours - ALLOWED_SYNCHUNT)
    assert not [name for name in modules if name.split(".")[0] in ANALYSIS_DEPENDENCIES]
    if args == ("--version",):
        assert out.startswith("synchunt ") and not any(name.split(".")[0] == "typer" for name in modules)


def test_the_help_lists_every_command_without_importing_its_module() -> None:
    from synchunt.cli.commands import command_entries

    modules, out = _imported("--help")
    for entry in command_entries():
        assert entry.name in out
        assert f"synchunt.cli.{entry.module}" not in modules


# What `synchunt lint FILE` (a pre-commit hook, timed by its start-up) must not load: the analysis's dependencies
# but msgspec (the findings and the catalogue are msgspec structs), rich (text to a pipe or a file is written
# without it), XML (a format it does not write), nor the parts of synchunt that run, trace or analyse code.
LINT_MUST_NOT_LOAD = ("numpy", "pandas", "torch", "pyarrow", "rich", "xml")
LINT_MUST_NOT_LOAD_OURS = ("synchunt.render.junit_xml", "synchunt.render.sarif", "synchunt.guard", "synchunt.shadow",
                           "synchunt.trace", "synchunt.detect", "synchunt.capture", "synchunt.cli.gate",
                           "synchunt.cli.analysis")


def test_linting_one_file_loads_only_what_the_lint_and_its_text_need(tmp_path) -> None:
    path = tmp_path / "step.py"
    path.write_text("import torch\n\n\ndef step(x: torch.Tensor) -> float:\n    return x.sum().item()\n")
    modules, out = _imported("lint", str(path))
    assert "synchunt.lint" in modules and "synchunt.fixes" in modules  # the measurement saw the lint run
    assert f"{path}:5:12: SH109 error" in out and out.endswith("1 finding (1 error) in 1 file\n")
    assert not sorted(name for name in modules if name.split(".")[0] in LINT_MUST_NOT_LOAD)
    assert not sorted(name for name in modules if name.startswith(LINT_MUST_NOT_LOAD_OURS))


def test_a_command_imports_only_its_own_module() -> None:
    modules, _ = _imported("rules", "--help")
    assert "synchunt.cli.catalog" in modules
    assert not {"synchunt.cli.gate", "synchunt.cli.report", "synchunt.cli.audit", "synchunt.cli.profile"} & modules


def test_the_derived_command_map_is_the_applications() -> None:
    import typer.main

    from synchunt.cli import app
    from synchunt.cli.commands import command_entries, module_of

    registered = {name: command.callback.__module__ for name, command in typer.main.get_command(app).commands.items()}
    assert registered == {entry.name: f"synchunt.cli.{entry.module}" for entry in command_entries()}
    assert module_of("compare") == "report" and module_of("no-such-command") is None


def test_running_a_command_parses_only_the_module_that_declares_it() -> None:
    from synchunt.cli import commands

    commands.module_of.cache_clear()
    commands._entries.cache_clear()
    assert commands.module_of("lint") == "lint"  # other modules say "lint" in their text, none declares it
    assert commands._entries.cache_info().currsize == 1
    commands.module_of.cache_clear()
    assert all(commands.module_of(entry.name) == entry.module for entry in commands.command_entries())


def test_one_mode_enum_for_the_options_and_detection() -> None:
    from synchunt.cli.app import Mode as OptionMode
    from synchunt.detect import Mode as DetectionMode

    assert OptionMode is DetectionMode


@pytest.mark.parametrize("args", [("--help",), ("-h",), ()], ids=lambda a: " ".join(a) or "bare")
def test_the_help_on_a_pipe_loads_no_cli_toolkit(args: tuple[str, ...]) -> None:
    modules, out = _imported(*args, env={"COLUMNS": "100"})
    ours = {name for name in modules if name == "synchunt" or name.startswith("synchunt.")}
    assert ours <= LISTING_SYNCHUNT, sorted(ours - LISTING_SYNCHUNT)
    assert not [name for name in modules if name.split(".")[0] in CLI_TOOLKITS]
    assert "│ analyze " in out and out.splitlines()[1].startswith(" Usage: ")


def test_where_rich_would_style_the_help_typer_writes_it() -> None:
    modules, out = _imported("--help", env={"FORCE_COLOR": "1"})
    assert "typer" in modules and "\x1b[" in out


def _typer_page(monkeypatch: pytest.MonkeyPatch, width: int, *args: str) -> str:
    from synchunt.cli import _listing

    monkeypatch.setenv("COLUMNS", str(width))
    written = io.StringIO()
    with contextlib.redirect_stdout(written), contextlib.suppress(SystemExit):
        _listing()(list(args), prog_name="synchunt", standalone_mode=False)
    return written.getvalue()


@pytest.mark.parametrize("width", [*range(54, 131), 160, 200, 300])
def test_the_help_written_without_typer_is_typers(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    from synchunt.cli.listing import page

    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    ours = page("synchunt", width, max(min(width, 80) - 2, 50))
    if width >= 60:  # the narrowest widths may be left to typer, never the usual ones
        assert ours is not None
    if ours is not None:
        assert ours + "\n" == _typer_page(monkeypatch, width, "--help")


def test_the_page_leaves_markup_and_narrow_consoles_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    from synchunt.cli import listing

    assert listing.page("synchunt", 30, 50) is None  # the usage would wrap
    monkeypatch.setenv("TERMINAL_WIDTH", "wide")
    assert listing.console_width() is None and listing.render("synchunt") is None
    assert not listing._plain("see [bold]this[/bold]") and not listing._plain("a :smile: b")
    assert not listing._plain("an arrow →") and listing._plain("plain words, `code` and --options")
    assert listing._wrap("aaaa bbbb cc", 9) == ["aaaa bbbb", "cc"]
    assert listing._wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]


def test_the_help_into_a_closed_pipe_or_a_full_disk_is_no_traceback() -> None:
    done = subprocess.Popen([sys.executable, "-m", "synchunt", "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    done.stdout.close()  # the reader is gone before the page is written (`synchunt --help | head -0`)
    assert done.wait(timeout=120) == 1 and done.stderr.read() == b""
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            failed = subprocess.run([sys.executable, "-m", "synchunt", "--help"], stdout=full, stderr=subprocess.PIPE,
                                    text=True, timeout=120, check=False)
        assert failed.returncode == 3 and failed.stderr.startswith("error: internal error: OSError")
        assert "Traceback" not in failed.stderr

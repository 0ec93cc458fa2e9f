"""Which module declares each command, read from the command modules' source without importing them.

``main()`` imports only the module of the command it runs, and the top-level help lists every command from here:
each ``@app.command(...)`` of a module in this package is one entry (its name, its help), in the order help lists
them (module by module, in file order). Nothing is written by hand, so a new command module is found as it is.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import NamedTuple

_PACKAGE_DIR = Path(__file__).resolve().parent
# The application's own help and options (`synchunt.cli.app` declares them to typer, `synchunt.cli.listing` writes the
# top-level help from them without typer).
APP_NAME = "synchunt"
APP_HELP = "Hunt hidden device-to-host syncs in PyTorch code."
VERSION_HELP = "Print synchunt's version and exit."
HELP_OPTION_NAMES = ("-h", "--help")
# The package's modules that declare no command (the application, shared options, helpers).
_NOT_COMMANDS = frozenset({"__init__", "app", "commands", "listing", "load_options", "output", "lint_fixes"})


class CommandEntry(NamedTuple):
    name: str
    module: str  # under synchunt.cli
    help: str


def _decorator_name(node: ast.FunctionDef) -> str | None:
    """The command name of ``@app.command("name")`` / ``@app.command(name=...)`` / ``@app.command()``."""
    for decorator in node.decorator_list:
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "command" and isinstance(decorator.func.value, ast.Name)
                and decorator.func.value.id == "app"):
            continue
        given = decorator.args[0] if decorator.args else next(
            (keyword.value for keyword in decorator.keywords if keyword.arg == "name"), None)
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            return given.value
        return node.name.replace("_", "-")  # typer's own default
    return None


def _help(node: ast.FunctionDef) -> str:
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "help" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return ast.get_docstring(node, clean=False) or ""


@cache
def command_entries() -> tuple[CommandEntry, ...]:
    """Every command of the CLI, in the order help lists them."""
    return tuple(entry for path in _command_files() for entry in _entries(path))


def _command_files() -> list[Path]:
    return [path for path in sorted(_PACKAGE_DIR.glob("*.py")) if path.stem not in _NOT_COMMANDS]


@cache
def _entries(path: Path) -> tuple[CommandEntry, ...]:
    tree = ast.parse(_source(path), filename=str(path))
    return tuple(CommandEntry(name, path.stem, _help(node)) for node in tree.body
                 if isinstance(node, ast.FunctionDef) and (name := _decorator_name(node)) is not None)


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def command_modules() -> tuple[str, ...]:
    """The modules that declare commands, in help order."""
    return tuple(dict.fromkeys(entry.module for entry in command_entries()))


@cache
def module_of(command: str | None) -> str | None:
    """The module declaring ``command`` (None: no such command). Only the modules whose source holds its name
    are parsed: running a command parses one module, not all of them. First those that spell it as a declaration
    would (the name quoted, or the function typer derives it from), then any that holds the word (a name no
    declaration spells plainly)."""
    if command is None:
        return None
    function = command.replace("-", "_")
    declared = (f'"{command}"', f"'{command}'", f"def {function}(")
    for spellings in (declared, (command, function)):
        for path in _command_files():
            text = _source(path)
            if any(spelling in text for spelling in spellings):
                found = next((entry.module for entry in _entries(path) if entry.name == command), None)
                if found is not None:
                    return found
    return None

"""The top-level help (``synchunt --help``, ``-h``, ``synchunt`` alone), written from the command table without
importing typer or rich.

Typer's help is rich's layout: the usage line, the application's help, an Options panel and a Commands panel,
each a table in a rounded box as wide as the console. Loading typer and rich for that page costs more than the
page (about 0.2 s), so `render` writes the same text itself where rich writes plain text — no terminal, no
variable forcing one — and the page is one this layout covers: ASCII help without rich markup (``[``) or emoji
codes, one paragraph of application help, a width at which the usage stays on one line and no table column has
to shrink. Anywhere else it returns None and the CLI asks typer, so the text is always typer's: here by test
(``tests/cli/test_cli_startup.py`` compares both at every width from the narrowest this module renders up), there
by construction. A terminal gets typer's coloured page.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from itertools import pairwise

from synchunt.cli.commands import APP_HELP, HELP_OPTION_NAMES, VERSION_HELP, command_entries

HELP_OPTION_HELP = "Show this message and exit."  # click's own help option
USAGE_ARGS = "[OPTIONS] COMMAND [ARGS]..."
# Variables under which rich (or typer) styles or sizes its output differently: typer's page is asked for then.
STYLING_VARIABLES = ("FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
                     "_TYPER_FORCE_DISABLE_TERMINAL", "JUPYTER_COLUMNS", "JPY_PARENT_PID")
_WORD = re.compile(r"\s*\S+\s*")
_EMOJI_CODE = re.compile(r":\S*?:")
_PLAIN = re.compile(r"[ -~\n]*")  # printable ASCII and newlines


def render(prog: str | None = None) -> str | None:
    """The top-level help as typer prints it to a pipe, or None where only typer can say (see the module)."""
    width = console_width()
    if _styled() or width is None:
        return None
    return page(_detect_program_name() if prog is None else prog, width, usage_width())


def page(prog: str, width: int, click_width: int) -> str | None:
    """The help page at ``width`` columns (rich's console) with click's usage formatter ``click_width`` wide."""
    usage = f"Usage: {prog} {USAGE_ARGS}"
    one_line = (APP_HELP, VERSION_HELP, HELP_OPTION_HELP)
    if len(usage) > min(click_width, width - 2) or not _plain(prog) or not all(
            _plain(text) and "\n" not in text for text in one_line):
        return None
    entries = command_entries()
    commands = [(entry.name, _first_paragraph(entry.help)) for entry in entries]
    options = [("--version", "", VERSION_HELP), (_long(HELP_OPTION_NAMES), _short(HELP_OPTION_NAMES), HELP_OPTION_HELP)]
    if not all(_plain(text) for _, text in commands):
        return None
    inner = width - 4  # the panels' borders and padding
    long_width = max(len(row[0]) for row in options) + 1
    short_width = max(len(row[1]) for row in options) + 2
    fixed = long_width + short_width + 2 + 2 + 2  # the secondary-option and type columns are empty: padding only
    help_width = inner - fixed
    name_width = max(len(name) for name, _ in commands) + 1
    if help_width < max(long_width, short_width, 2) or inner - name_width < 2:
        return None
    option_lines = []
    for long, short, help_text in options:
        for number, text in enumerate(_wrap(help_text.strip(), help_width - 1)):
            cells = (long, short) if number == 0 else ("", "")
            option_lines.append(f"{cells[0]:<{long_width - 1}}  {cells[1]:<{short_width - 2}}        {text}")
    command_lines = []
    for name, text in commands:
        wrapped = [line for part in text.split("\n") for line in _wrap(part, inner - name_width - 1)]
        for number, line in enumerate(wrapped):
            command_lines.append(f"{name if number == 0 else '':<{name_width - 1}}  {line}")
    lines = ["", f" {usage}", "", *(f" {line}" for line in _wrap(APP_HELP.strip(), width - 2)), ""]
    out = [line.ljust(width) for line in lines]
    for title, body in (("Options", option_lines), ("Commands", command_lines)):
        out.append(_top(title, width))
        out.extend(f"│ {line:<{inner}} │" for line in body)
        out.append("╰" + "─" * (width - 2) + "╯")
    return "\n".join(out) + "\n"


def _top(title: str, width: int) -> str:
    label = f" {title} "
    return "╭─" + label + "─" * (width - 4 - len(label)) + "─╮"


def _wrap(text: str, width: int) -> list[str]:
    """Rich's word wrap (``rich._wrap.divide_line``, folding long words) of one line of ASCII text."""
    breaks: list[int] = []
    offset = 0
    for match in _WORD.finditer(text):
        start, word = match.start(), match.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            for number, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if number == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    bounds = [0, *breaks, len(text)]
    lines = [text[a:b] for a, b in pairwise(bounds)]
    return [line.rstrip() if len(line.rstrip()) <= width else line[:width] for line in lines] or [""]


def _first_paragraph(help_text: str) -> str:
    """What typer lists of a command's help (rich markup mode keeps the paragraph's own line breaks)."""
    return _cleandoc(help_text).split("\n\n")[0].strip()


def _cleandoc(text: str) -> str:
    """``inspect.cleandoc`` (without importing inspect, which costs more than this page): tabs expanded, the
    first line's leading blanks and the other lines' common indent removed, blank lines at either end dropped."""
    lines = text.expandtabs().split("\n")
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.lstrip()]
    margin = min(indents, default=0)
    lines = [lines[0].lstrip(), *(line[margin:] for line in lines[1:])]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def _plain(text: str) -> bool:
    """ASCII without rich markup or emoji codes: text rich writes as it is."""
    return _PLAIN.fullmatch(text) is not None and "[" not in text and _EMOJI_CODE.search(text) is None


def _long(names: tuple[str, ...]) -> str:
    return ",".join(name for name in names if "--" in name)


def _short(names: tuple[str, ...]) -> str:
    return ",".join(name for name in names if "--" not in name)


def _styled() -> bool:
    """Whether rich would style the page (a terminal, or a variable saying so), draw its boxes in ASCII (an
    encoding other than UTF-8) or measure a Windows console."""
    if os.name == "nt" or any(name in os.environ for name in STYLING_VARIABLES):
        return True
    try:
        return sys.stdout.isatty() or not (sys.stdout.encoding or "utf-8").lower().startswith("utf")
    except (AttributeError, ValueError):
        return True


def console_width() -> int | None:
    """Rich's console width: ``TERMINAL_WIDTH`` (typer's), ``COLUMNS``, the first standard stream that is a
    terminal, else 80; None for a ``TERMINAL_WIDTH`` that is no number (typer's own handling is left to it)."""
    terminal_width = os.environ.get("TERMINAL_WIDTH")
    if terminal_width:
        return int(terminal_width) if terminal_width.isdigit() else None
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    width = None
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    return width or 80


def usage_width() -> int:
    """Click's help formatter width: ``shutil.get_terminal_size`` (``COLUMNS``, else standard output's terminal,
    else 80) up to 80, less 2, at least 50 (shutil itself is not imported: it loads zlib and more)."""
    columns = 0
    with contextlib.suppress(KeyError, ValueError):
        columns = int(os.environ["COLUMNS"])
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(min(columns or 80, 80) - 2, 50)


def _detect_program_name() -> str:
    """How the command was run, as click names it in the usage line (``synchunt``, ``python -m synchunt``)."""
    package = getattr(sys.modules["__main__"], "__package__", None)
    if package in (None, ""):  # a file or an entry point
        return os.path.basename(sys.argv[0])
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    module = package if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"

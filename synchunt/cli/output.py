"""Where command results go: stdout or a file, through a model's renderer registry, never losing a file."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synchunt.files import write_output
from synchunt.render.registry import Registry, RenderOptions

if TYPE_CHECKING:
    from rich.console import Console


def console(*, stderr: bool = False) -> Console:
    from rich.console import Console  # rich loads only for the commands that print through it

    return Console(stderr=stderr, highlight=False, soft_wrap=True, markup=False, emoji=False)


def note(message: str) -> None:
    """A line for the person at the terminal (stderr: stdout may be a document another tool parses)."""
    from synchunt.render.text import visible

    sys.stderr.write(visible(message) + "\n")
    sys.stderr.flush()


def format_choices(registry: Registry[Any]) -> type[Enum]:
    """The ``--format`` choices of a registry, as the Enum typer wants (built from the registry, so a new format
    module is a new choice)."""
    names = registry.names()
    return Enum(f"{registry.model.title().replace(' ', '')}Format", {name: name for name in names}, type=str)


def emit(registry: Registry[Any], name: str, model: Any, output: Path | None, *, inputs: Iterable[Path] = (),
         force: bool = False) -> None:
    """Render ``model`` in format ``name`` to stdout (styled when stdout is a terminal and the format is text),
    or to ``output`` (plain, atomically, never an input, never replacing a file without ``force``)."""
    renderer = registry.get(name)
    if output is None:
        terminal = sys.stdout.isatty() and not renderer.machine
        width = shutil.get_terminal_size((120, 24)).columns if terminal else 120
        content = renderer(model, RenderOptions(color=terminal, width=max(width, 80)))
        if isinstance(content, bytes):
            binary = getattr(sys.stdout, "buffer", None)  # a text-only stream (io.StringIO, a notebook) has none
            if binary is None:
                sys.stdout.write(content.decode("utf-8"))
            else:
                binary.write(content)
        else:
            sys.stdout.write(content if content.endswith("\n") else content + "\n")
        sys.stdout.flush()
        return
    content = renderer(model, RenderOptions(color=False, width=160))
    write_output(output, content, inputs=list(inputs), force=force)

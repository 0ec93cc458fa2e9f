"""Text that is safe to show and sized to be read: control characters made visible, long names shortened, rich
renderables turned into text (with ANSI styles only when the caller asks: a terminal)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from synchunt.printable import one_line, visible

if TYPE_CHECKING:  # the bare CLI imports this module for `visible`: no registry at start-up
    from synchunt.render.registry import RenderOptions

NAME_LIMIT = 200


def shorten(text: object, limit: int = NAME_LIMIT) -> str:
    """A name cut to ``limit`` characters with an ellipsis and how much was cut (the full name stays in JSON)."""
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[: limit - 1]}… (+{len(value) - limit + 1} chars)"


def label(text: object, limit: int = NAME_LIMIT) -> str:
    """What text outputs show for a trace-derived name: visible, one line, shortened."""
    return shorten(one_line(text), limit)



def to_text(renderable: object, options: RenderOptions) -> str:
    """``renderable`` as text ``options.width`` columns wide; styled with ANSI codes when ``options.color``."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=options.width, force_terminal=options.color,
                      color_system="standard" if options.color else None, highlight=False, soft_wrap=False,
                      emoji=False, markup=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


__all__ = ["NAME_LIMIT", "label", "one_line", "shorten", "to_text", "visible"]

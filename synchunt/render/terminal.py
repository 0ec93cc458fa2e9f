"""Rich renderables to text: one conversion, with ANSI styles only when the caller asks (a terminal)."""

from __future__ import annotations

import io

from synchunt.render.registry import RenderOptions


def to_text(renderable: object, options: RenderOptions) -> str:
    """``renderable`` as text ``options.width`` columns wide; styled with ANSI codes when ``options.color``."""
    from rich.console import Console

    console = Console(file=io.StringIO(), width=options.width, force_terminal=options.color,
                      color_system="standard" if options.color else None, highlight=False, soft_wrap=False,
                      emoji=False, markup=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]

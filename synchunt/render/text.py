"""Text that is safe to show and sized to be read: control characters made visible, long names shortened."""

from __future__ import annotations

from synchunt.printable import one_line, visible

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


__all__ = ["NAME_LIMIT", "label", "one_line", "shorten", "visible"]

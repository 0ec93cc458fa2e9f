"""Text that is safe to show and sized to be read: control characters made visible, long names shortened."""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls: ESC/OSC sequences would drive the terminal
# (retitle it, move the cursor); they are shown as escapes instead.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
NAME_LIMIT = 200


def visible(text: object) -> str:
    """``text`` with every control character shown as ``\\xNN`` (never sent to a terminal or a log raw)."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", str(text))


def one_line(text: object) -> str:
    """``visible`` with newlines and tabs shown as escapes too (for single-line fields)."""
    return visible(text).replace("\n", "\\n").replace("\t", "\\t")


def shorten(text: object, limit: int = NAME_LIMIT) -> str:
    """A name cut to ``limit`` characters with an ellipsis and how much was cut (the full name stays in JSON)."""
    value = str(text)
    if len(value) <= limit:
        return value
    return f"{value[: limit - 1]}… (+{len(value) - limit + 1} chars)"


def label(text: object, limit: int = NAME_LIMIT) -> str:
    """What text outputs show for a trace-derived name: visible, one line, shortened."""
    return shorten(one_line(text), limit)

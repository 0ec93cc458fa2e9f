"""Text safe to send to a terminal or a CI log: control characters shown as escapes, never emitted raw.

A leaf module (standard library only): the renderers use it for trace-derived names, the capture for the output
of a profiled target it passes on.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and C1 controls: ESC/OSC sequences would drive the terminal
# (retitle it, move the cursor); they are shown as escapes instead.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# A line a CI runner would read as a command (GitHub's ::error::, Azure's ##vso[): shown indented instead.
_RUNNER_COMMAND = re.compile(r"^(\s*)(::|##vso\[|##\[)", re.MULTILINE)


def visible(text: object) -> str:
    """``text`` with every control character shown as ``\\xNN`` (never sent to a terminal or a log raw)."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", str(text))


def one_line(text: object) -> str:
    """``visible`` with newlines and tabs shown as escapes too (for single-line fields)."""
    return visible(text).replace("\n", "\\n").replace("\t", "\\t")


def passed_on(text: str) -> str:
    """Another program's output as synchunt passes it on: visible, and no line able to forge a CI annotation."""
    return _RUNNER_COMMAND.sub(lambda match: f"{match[1]}  {match[2]}", visible(text))

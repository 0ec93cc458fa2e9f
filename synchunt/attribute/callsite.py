"""Which Python frames are the user's: the call site is the innermost one enclosing the sync."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from synchunt.library_code import LIBRARY_PACKAGES

# Frames from these top-level packages are library internals, not call sites.
DEFAULT_SKIP_PACKAGES: tuple[str, ...] = LIBRARY_PACKAGES


@dataclass(frozen=True)
class FrameFilter:
    """Decides which frames are user code. ``skip_packages`` are matched against the first path component."""

    skip_packages: tuple[str, ...] = DEFAULT_SKIP_PACKAGES
    skip_stdlib: bool = True

    def is_user(self, file: str) -> bool:
        if not file or file.startswith("<"):  # <built-in ...>, <frozen ...>
            return False
        normalized = file.replace("\\", "/")
        if "site-packages/" in normalized or "dist-packages/" in normalized or "/lib/python3" in normalized:
            return False
        first = normalized.lstrip("/").split("/", 1)[0]
        module = first[:-3] if first.endswith(".py") else first
        if module in self.skip_packages:
            return False
        return not (self.skip_stdlib and module in sys.stdlib_module_names)


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "function": self.function}

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.function}"


def parse_call_stack(text: str) -> list[Frame]:
    """Frames of a ``Call stack`` argument (innermost first, ``;``-separated ``file(line): func``)."""
    frames = []
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        head, _, function = part.partition(": ")
        file, _, line = head.rpartition("(")
        try:
            frames.append(Frame(file or head, int(line.rstrip(")")), function))
        except ValueError:
            frames.append(Frame(part, 0, ""))
    return frames


def call_site(stack: Sequence[Frame], frame_filter: FrameFilter) -> Frame | None:
    """The innermost user frame of ``stack`` (innermost first)."""
    return next((frame for frame in stack if frame_filter.is_user(frame.file)), None)

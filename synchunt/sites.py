"""Frames, call sites and scopes, and the labels every output shows for them (standard library only).

The trace (Kineto's ``file.py(LINE): function`` frame names and ``Call stack`` arguments), the runtime guard
(live Python frames), the gate's baselines, the audit and every renderer use these, so a site has one label and
one key everywhere.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from synchunt.library_code import LIBRARY_PACKAGES

PROFILER_STEP = re.compile(r"^ProfilerStep#\d+$")
NO_SCOPE = "(no scope)"
NO_FRAME = "<no Python frame>"
SCOPE_SEPARATOR = " › "
_KINETO_FRAME = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$")


@dataclass(frozen=True)
class Frame:
    """One Python frame: file (as the source names it), line (1-based; 0 when unknown) and function."""

    file: str
    line: int
    function: str

    @property
    def label(self) -> str:
        return f"{self.file}:{self.line} {self.function}"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def from_kineto_name(cls, name: str) -> Frame | None:
        """``workloads/x.py(18): f`` → ``Frame("workloads/x.py", 18, "f")``; ``<built-in …>`` names keep line 0;
        anything else is not a frame."""
        match = _KINETO_FRAME.match(name)
        if match is None:
            return cls(name, 0, "") if name.startswith("<") else None
        return cls(match["file"], int(match["line"]), match["function"])


def parse_call_stack(text: str) -> list[Frame]:
    """Frames of a Kineto ``Call stack`` argument (innermost first, ``;``-separated ``file(line): func``)."""
    frames = []
    for part in text.split(";"):
        part = part.strip()
        if part:
            frames.append(Frame.from_kineto_name(part) or Frame(part, 0, ""))
    return frames


def site_label(frame: Frame | None, op: str) -> str:
    """What outputs call a sync's site: ``file:line function``, or ``<no Python frame> op``."""
    return frame.label if frame is not None and frame.file else f"{NO_FRAME} {op}"


def site_key(file: str | None, function: str | None) -> str:
    """A site's identity across edits (``file:function``; the line moves when code above it changes), as the
    gate's baselines and comparisons match sites; :data:`NO_FRAME` without a Python frame."""
    if not file:
        return NO_FRAME
    return f"{file}:{function or ''}"


def split_annotations(names: Sequence[str]) -> tuple[list[str], str | None]:
    """``record_function`` names outermost first → (the scope chain, the ``ProfilerStep#N`` step if any)."""
    scopes = [name for name in names if not PROFILER_STEP.match(name)]
    step = next((name for name in names if PROFILER_STEP.match(name)), None)
    return scopes, step


def scope_label(scope: str | None) -> str:
    return scope or NO_SCOPE


@cache
def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({paths["stdlib"], paths["platstdlib"]}))


@dataclass(frozen=True)
class FrameFilter:
    """Which frames are library code rather than the user's, when picking a sync's call site.

    ``skip_packages`` are top-level packages (matched against a module name, or a file's first path part);
    standard-library and site-packages files are library code by where they live.
    """

    skip_packages: tuple[str, ...] = LIBRARY_PACKAGES
    skip_stdlib: bool = True

    @classmethod
    def with_extra(cls, extra: Iterable[str] = ()) -> FrameFilter:
        return cls(skip_packages=LIBRARY_PACKAGES + tuple(extra))

    def is_library_module(self, module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in self.skip_packages)

    def is_library_file(self, file: str) -> bool:
        """For a file as a trace names it (often relative to a ``sys.path`` entry) or an absolute path."""
        if not file or file.startswith("<"):  # <built-in ...>, <frozen ...>, <string>
            return True
        normalized = file.replace("\\", "/")
        if "site-packages/" in normalized or "dist-packages/" in normalized:
            return True
        if self.skip_stdlib and any(normalized.startswith(d) for d in _stdlib_dirs()):
            return True
        if self.skip_stdlib and "/lib/python3" in normalized:
            return True
        first = normalized.lstrip("/").split("/", 1)[0]
        module = first[:-3] if first.endswith(".py") else first
        if module in self.skip_packages:
            return True
        return self.skip_stdlib and module in sys.stdlib_module_names

    def is_user(self, file: str) -> bool:
        return not self.is_library_file(file)

    def call_site(self, stack: Sequence[Frame]) -> Frame | None:
        """The innermost user frame of ``stack`` (innermost first)."""
        return next((frame for frame in stack if self.is_user(frame.file)), None)

"""Finding the user's line: walk the Python frames of the syncing thread, skipping library code.

A frame is library code when its module belongs to a skipped package (torch, synchunt, pytest's machinery by
default; configurable per guard) or its file lives in the standard library. Decisions are cached per code
object because the same frames repeat for every sync in a loop.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import CodeType

from synchunt.guard.records import SyncFrame
from synchunt.library_code import LIBRARY_PACKAGES

DEFAULT_SKIP_MODULES: tuple[str, ...] = LIBRARY_PACKAGES

# (code, lineno, module name) of one frame, innermost first; kept raw so each guard applies its own filter.
RawFrame = tuple[CodeType, int, str]


def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({paths["stdlib"], paths["platstdlib"]}))


_STDLIB_DIRS = _stdlib_dirs()


def _is_stdlib_file(filename: str) -> bool:
    if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string> of exec'd stdlib helpers
        return filename.startswith("<frozen")
    for directory in _STDLIB_DIRS:
        if filename.startswith(directory):
            rest = filename[len(directory):]
            return "site-packages" not in rest and "dist-packages" not in rest
    return False


def capture_stack(skip: int = 1) -> tuple[RawFrame, ...]:
    """The calling thread's frames, innermost first, leaving out ``skip`` frames (this one by default)."""
    frame = sys._getframe(skip)
    frames: list[RawFrame] = []
    while frame is not None:
        frames.append((frame.f_code, frame.f_lineno, frame.f_globals.get("__name__", "")))
        frame = frame.f_back
    return tuple(frames)


@dataclass(frozen=True)
class FrameFilter:
    """Which frames are library code, and how many user frames a record keeps."""

    skip_modules: tuple[str, ...] = DEFAULT_SKIP_MODULES
    max_depth: int = 24
    _cache: dict[CodeType, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def with_extra(cls, extra_skip_modules: Iterable[str] = (), max_depth: int = 24) -> FrameFilter:
        return cls(skip_modules=DEFAULT_SKIP_MODULES + tuple(extra_skip_modules), max_depth=max_depth)

    def is_library(self, code: CodeType, module: str) -> bool:
        known = self._cache.get(code)
        if known is not None:
            return known
        library = any(module == name or module.startswith(name + ".")
                      for name in self.skip_modules) or _is_stdlib_file(code.co_filename)
        self._cache[code] = library
        return library

    def user_frames(self, raw: Sequence[RawFrame]) -> tuple[SyncFrame, ...]:
        """User frames, innermost first; the innermost raw frame when every frame is library code."""
        frames: list[SyncFrame] = []
        for code, lineno, module in raw:
            if not self.is_library(code, module):
                frames.append(SyncFrame(code.co_filename, lineno, code.co_name))
                if len(frames) >= self.max_depth:
                    break
        if not frames and raw:
            code, lineno, _ = raw[0]
            frames.append(SyncFrame(code.co_filename, lineno, code.co_name))
        return tuple(frames)

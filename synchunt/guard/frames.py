"""Finding the user's line: walk the Python frames of the syncing thread, skipping library code.

Which frames are library code is the one :class:`synchunt.sites.FrameFilter`'s decision (a skipped package by
module name, or a file in the standard library or a site-packages folder); this module walks live frames with
it, caching the decision per module and file because the same frames repeat for every sync in a loop.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import CodeType

from synchunt.sites import LIBRARY_PACKAGES, Frame, FrameFilter, is_stdlib_file

DEFAULT_SKIP_MODULES: tuple[str, ...] = LIBRARY_PACKAGES

# (code, lineno, module name) of one frame, innermost first; kept raw so each guard applies its own filter.
RawFrame = tuple[CodeType, int, str]


def capture_stack(skip: int = 1) -> tuple[RawFrame, ...]:
    """The calling thread's frames, innermost first, leaving out ``skip`` frames (this one by default)."""
    frame = sys._getframe(skip)
    frames: list[RawFrame] = []
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "__main__":
            module = _main_module(frame.f_globals)
        frames.append((frame.f_code, frame.f_lineno, module))
        frame = frame.f_back
    return tuple(frames)


def _main_module(namespace: dict) -> str:
    """The module a ``__main__`` frame runs: `python -m pytest` runs ``pytest.__main__`` (a skipped package's
    code), a script is ``__main__`` itself."""
    spec = namespace.get("__spec__")
    name = getattr(spec, "name", None)
    return name if isinstance(name, str) and name else "__main__"


@dataclass(frozen=True)
class UserFrames:
    """The user frames of a live stack, by ``frame_filter``, at most ``max_depth`` per record."""

    frame_filter: FrameFilter = field(default_factory=FrameFilter)
    max_depth: int = 24
    _cache: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def with_extra(cls, extra_skip_modules: Iterable[str] = (), max_depth: int = 24) -> UserFrames:
        return cls(FrameFilter.with_extra(extra_skip_modules), max_depth=max_depth)

    def is_library(self, code: CodeType, module: str) -> bool:
        # Keyed by what decides it: code objects of two files compare equal when their code does (the file is
        # no part of a code object's equality), and the same module and file repeat for every sync in a loop.
        key = (module, code.co_filename)
        known = self._cache.get(key)
        if known is None:
            file = key[1]
            # A live frame's module says whether it is a skipped package; its file whether it is the standard
            # library (<frozen importlib…> too). Site-packages code is the user's here: an installed serving
            # engine's own line is the one to report.
            known = self.frame_filter.is_library_module(module) or file.startswith("<frozen") or is_stdlib_file(file)
            self._cache[key] = known
        return known

    def user_frames(self, raw: Sequence[RawFrame]) -> tuple[Frame, ...]:
        """User frames, innermost first; the innermost raw frame when every frame is library code."""
        frames: list[Frame] = []
        for code, lineno, module in raw:
            if not self.is_library(code, module):
                frames.append(Frame(code.co_filename, lineno, code.co_name))
                if len(frames) >= self.max_depth:
                    break
        if not frames and raw:
            code, lineno, _ = raw[0]
            frames.append(Frame(code.co_filename, lineno, code.co_name))
        return tuple(frames)

"""Frames, call sites and scopes, and the labels every output shows for them (standard library only).

The trace (Kineto's ``file.py(LINE): function`` frame names and ``Call stack`` arguments), the runtime guard
(live Python frames), the gate's baselines, the audit and every renderer use these, so a site has one label and
one key everywhere.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import msgspec

from synchunt.source_map import SITE_PACKAGES, STDLIB, USER, SourceMap

PROFILER_STEP = re.compile(r"^ProfilerStep#\d+$")
NO_SCOPE = "(no scope)"
NO_FRAME = "<no Python frame>"
SCOPE_SEPARATOR = " › "
# Top-level packages that are library code rather than the user's when picking a call site (standard library and
# site-packages code is recognised by location on top of this list). Trace frames are named by file, the guard's by
# module: both read this one list.
LIBRARY_PACKAGES: tuple[str, ...] = ("torch", "functorch", "triton", "synchunt", "typer", "click", "rich",
                                     "pandas", "numpy", "pluggy", "_pytest", "pytest")
_KINETO_FRAME = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<function>.*)$")


class Frame(msgspec.Struct, frozen=True):
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
        line = match["line"]  # no source file has a billion lines: a longer number is not a line
        return cls(match["file"], int(line) if len(line) <= 9 and line.isascii() else 0, match["function"])


def parse_call_stack(text: str) -> list[Frame]:
    """Frames of a Kineto ``Call stack`` argument (innermost first, ``;``-separated ``file(line): func``)."""
    frames = []
    for part in text.split(";"):
        part = part.strip()
        if part:
            frames.append(Frame.from_kineto_name(part) or Frame(part, 0, ""))
    return frames


class SiteCount(msgspec.Struct, frozen=True):
    """How many syncs of one rule and op one site had (a trace's site line is the function's first line unless
    resolved; a guard's is the line that synced)."""

    rule: str
    op: str
    file: str | None
    line: int | None
    function: str | None
    count: int

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


def site_label(frame: Frame | None, op: str) -> str:
    """What outputs call a sync's site: ``file:line function``, or ``<no Python frame> op``."""
    return frame.label if frame is not None and frame.file else f"{NO_FRAME} {op}"


def site_key(file: str | None, function: str | None) -> str:
    """A site's identity across edits (``file:function``; the line moves when code above it changes), as the
    gate's baselines and comparisons match sites; :data:`NO_FRAME` without a Python frame."""
    if not file:
        return NO_FRAME
    return f"{file}:{function or '?'}"


def split_annotations(names: Sequence[str]) -> tuple[list[str], str | None]:
    """``record_function`` names outermost first → (the scope chain, the ``ProfilerStep#N`` step if any)."""
    scopes = [name for name in names if not PROFILER_STEP.match(name)]
    step = next((name for name in names if PROFILER_STEP.match(name)), None)
    return scopes, step


def scope_label(scope: str | None) -> str:
    return scope or NO_SCOPE


def compress_scopes(scopes: dict[str, int], limit: int = 6) -> list[str]:
    """``{"start_loading › layer_0": 2, …, "start_loading › layer_26": 2}`` → ``["start_loading › layer_0..26 ×2
    each (27 scopes)"]``: numbered scopes with the same count collapse into one range."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[tuple[str, int]] = []
    for scope, count in scopes.items():
        match = re.fullmatch(r"(.*?)(\d{1,18})", scope or "")  # a number int() reads whatever its length
        if match:
            groups.setdefault((match[1], count), []).append(int(match[2]))
        else:
            plain.append((scope or NO_SCOPE, count))
    lines = []
    for (prefix, count), numbers in groups.items():
        numbers.sort()
        if len(numbers) > 2 and numbers == list(range(numbers[0], numbers[-1] + 1)):
            lines.append((count * len(numbers), f"{prefix}{numbers[0]}..{numbers[-1]} ×{count} each "
                                                f"({len(numbers)} scopes)"))
        else:
            lines.extend((count, f"{prefix}{n} ×{count}") for n in numbers)
    lines.extend((count, f"{scope} ×{count}") for scope, count in plain)
    lines.sort(key=lambda item: -item[0])
    shown = [text for _, text in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… {len(lines) - limit} more")
    return shown


def natural_key(text: str) -> list[object]:
    """Sort key that puts ``layer_2`` before ``layer_10``."""
    # (0, number) and (1, text) never compare an int with a str; a run of digits too long to be a counter is text.
    return [(0, int(part)) if index % 2 and len(part) <= 18 else (1, part)
            for index, part in enumerate(re.split(r"([0-9]+)", text))]


class FrameFilter(msgspec.Struct, frozen=True):
    """Which frames are library code rather than the user's, when picking a sync's call site.

    ``skip_packages`` are top-level packages (matched against a module name, or a file's first path part).
    Bound to a trace's :class:`~synchunt.source_map.SourceMap` (``for_trace``), a frame is user code when the
    capture saw its file as the user's: decided by where the file lived, not by its name. Traces captured
    elsewhere carry no map; their frames are judged by name (site-packages and standard-library paths, and,
    with ``skip_stdlib``, a first path part named like a standard-library module).
    """

    skip_packages: tuple[str, ...] = LIBRARY_PACKAGES
    skip_stdlib: bool = True
    sources: SourceMap | None = None

    @classmethod
    def with_extra(cls, extra: Iterable[str] = ()) -> FrameFilter:
        return cls(skip_packages=LIBRARY_PACKAGES + tuple(extra))

    def for_trace(self, synchunt_metadata: Mapping[str, Any] | None) -> FrameFilter:
        """This filter bound to the source map a synchunt capture stored (``trace.synchunt``); unchanged (by-name
        decisions) for traces without one."""
        return msgspec.structs.replace(self, sources=SourceMap.from_metadata(synchunt_metadata))

    def canonical(self, frame: Frame) -> Frame:
        """The frame with its file named as the capture names the user's files (relative to the project root):
        torch's profiler strips the import path it saw first in a process, so a later capture may carry
        absolute paths."""
        if self.sources is None or not os.path.isabs(frame.file):
            return frame
        name = self.sources.canonical(frame.file)
        return frame if name == frame.file else Frame(name, frame.line, frame.function)

    def is_library_module(self, module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in self.skip_packages)

    def is_internal(self, file: str) -> bool:
        """Never a call site: torch and the other skipped packages (``--skip-package`` among them), the standard
        library, built-in pseudo-frames and synchunt's own runner. A sync inside such code is placed at the frame
        that called into it."""
        if not file or file.startswith("<"):  # <built-in ...>, <frozen ...>, <string>
            return True
        normalized = file.replace("\\", "/")
        first, slash, _ = normalized.lstrip("/").partition("/")
        if slash and first in self.skip_packages:  # a package folder (a top-level file's name decides nothing)
            return True
        if _is_synchunt_file(normalized):
            return True
        if self.sources is not None:
            kind = self.sources.kind_of(normalized)
            if kind == USER:  # a user file, unless its module belongs to a skipped package
                module = self.sources.module_of(normalized)
                return module is not None and self.is_library_module(module)
            if kind == STDLIB:
                return True
            if kind == SITE_PACKAGES:
                return False
        packages = _after_site_packages(normalized)
        if packages is not None:
            return packages.partition("/")[0] in self.skip_packages
        if self.skip_stdlib and (any(normalized.startswith(d) for d in _stdlib_dirs()) or "/lib/python3" in normalized):
            return True
        module = first[:-3] if first.endswith(".py") else first
        if module in self.skip_packages:
            return True
        # By name, for traces captured without a source map only: a guess that a user's queue.py would defeat.
        return self.skip_stdlib and module in sys.stdlib_module_names

    def is_library_file(self, file: str) -> bool:
        """Not the user's: internal code (:meth:`is_internal`) or an installed library (a site-packages folder,
        by where the capture saw the file live, or by its path for traces captured elsewhere)."""
        if self.is_internal(file):
            return True
        normalized = file.replace("\\", "/")
        if self.sources is not None:
            kind = self.sources.kind_of(normalized)
            if kind is not None:
                return kind != USER
        if _after_site_packages(normalized) is not None:
            return True
        # A trace from elsewhere names an installed file relative to its site-packages folder: a package folder
        # installed as a library here is taken for one there (``transformers/generation/utils.py``).
        first, slash, _ = normalized.partition("/")
        return self.sources is None and bool(slash) and not normalized.startswith("/") and _installed_library(first)

    def is_user(self, file: str) -> bool:
        return not self.is_library_file(file)

    def locate(self, stack: Sequence[Frame]) -> tuple[Frame | None, Frame | None]:
        """Where a sync happens and how the user's code got there, from its stack (innermost first): the innermost
        frame that is not internal (library code or the user's), and, when that frame is a library's, the
        innermost user frame (``None`` when the sync happens in the user's own code or no user frame led there)."""
        site = next((frame for frame in stack if not self.is_internal(frame.file)), None)
        if site is None or self.is_user(site.file):
            return site, None
        return site, next((frame for frame in stack if self.is_user(frame.file)), None)

    def call_site(self, stack: Sequence[Frame]) -> Frame | None:
        """The innermost frame of ``stack`` (innermost first) where the sync happens (see :meth:`locate`)."""
        return self.locate(stack)[0]

    def shown_stack(self, stack: Sequence[Frame]) -> list[Frame]:
        """``stack`` (innermost first) as outputs list it: without ``<built-in …>`` pseudo-frames, synchunt's own
        frames, and the frames outside the outermost frame that is not internal (the thread bootstrap around the
        target)."""
        frames = [frame for frame in stack if frame.file and not frame.file.startswith("<")
                  and not _is_synchunt_file(frame.file.replace("\\", "/"))]
        outer = [i for i, frame in enumerate(frames) if not self.is_internal(frame.file)]
        if outer:
            return frames[:outer[-1] + 1]
        return [frame for frame in frames if frame.file.replace("\\", "/").rsplit("/", 1)[-1] != "threading.py"]


@cache
def _installed_library(package: str) -> bool:
    """Whether ``package`` is a top-level package installed in a site-packages folder of this interpreter."""
    import importlib.util

    if not package.isidentifier():
        return False
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return False
    origin = spec.origin if spec is not None else None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return any(_after_site_packages(str(place).replace("\\", "/")) is not None for place in [origin, *locations]
               if place)


def _after_site_packages(path: str) -> str | None:
    """What follows the last ``site-packages/`` (or ``dist-packages/``) folder of a path; ``None`` without one."""
    cut = max(path.rfind("site-packages/"), path.rfind("dist-packages/"))
    if cut < 0:
        return None
    return path[path.index("/", cut) + 1:]


_SYNCHUNT_DIR = os.path.dirname(os.path.abspath(__file__)).replace("\\", "/") + "/"


def _is_synchunt_file(path: str) -> bool:
    """synchunt's own code (its runner around a target, the guard): by the package's folder on this machine, or
    named as an installed synchunt names it."""
    return path.startswith(_SYNCHUNT_DIR) or path.startswith("synchunt/")


def is_stdlib_file(path: str) -> bool:
    """An absolute file inside the standard library's folders (not a site-packages folder below them)."""
    for directory in _stdlib_dirs():
        if path.startswith(directory):
            rest = path[len(directory):]
            return "site-packages" not in rest and "dist-packages" not in rest
    return False


@cache
def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({paths["stdlib"], paths["platstdlib"]}))

"""Which files the lint reads: files as given, ``*.py`` under folders, minus exclusions; each real file and
folder once (a symbolic link back up the tree is not followed twice)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from synchunt.config import matches_any
from synchunt.errors import UsageError

SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", "node_modules", "build", "dist"})


class FileFilter:
    """Exclusion patterns: ``config_patterns`` relative to ``config_root``, ``patterns`` (from the command line)
    relative to the current folder."""

    def __init__(self, patterns: Sequence[str] = (), config_patterns: Sequence[str] = (),
                 config_root: Path | None = None) -> None:
        self.patterns = tuple(patterns)
        self.config_patterns = tuple(config_patterns)
        self.config_root = config_root or Path.cwd()

    def excludes(self, path: Path) -> bool:
        return matches_any(path, self.patterns, Path.cwd()) or matches_any(
            path, self.config_patterns, self.config_root)


def iter_python_files(paths: Iterable[str | Path], excluded: FileFilter | None = None) -> Iterator[Path]:
    """Files as given (any suffix: a non-Python file is reported when it fails to parse) and ``*.py`` files
    under folders, in a stable order, each real file once. A path that does not exist raises
    :class:`UsageError`; excluded paths are skipped, whether given or found."""
    seen_files: set[tuple[int, int]] = set()
    seen_folders: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"no such file or directory: {raw}")
        if not path.is_dir() and not stat.S_ISREG(path.stat().st_mode):
            raise UsageError(f"not a regular file: {raw} (a device, FIFO or socket is never read)")
        if excluded is not None and excluded.excludes(path):
            continue
        found = _walk(path, excluded, seen_folders) if path.is_dir() else iter([path])
        for file in found:
            key = _identity(file)
            if key not in seen_files:
                seen_files.add(key)
                yield file


MAX_SOURCE_BYTES = 64 * 1024 * 1024  # a source file bigger than this is generated data, not code to review


def read_source(path: Path) -> str:
    """The text of one file to lint. A device, FIFO or socket (``/dev/zero``, a link to one) is refused before
    it is opened, as is a file too big to be source: reading either would never end or exhaust memory."""
    status = path.stat()
    if not stat.S_ISREG(status.st_mode):
        raise OSError(f"not a regular file: {path}")
    if status.st_size > MAX_SOURCE_BYTES:
        raise OSError(f"{status.st_size:,} bytes, larger than the {MAX_SOURCE_BYTES:,} a source file may have")
    return path.read_text(encoding="utf-8")


def _identity(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_dev, status.st_ino


def _walk(folder: Path, excluded: FileFilter | None, seen: set[tuple[int, int]]) -> Iterator[Path]:
    try:
        key = _identity(folder)
    except OSError:
        return
    if key in seen:
        return  # a link back to a folder already read: a loop, or the same tree twice
    seen.add(key)
    try:
        children = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in children:
        child = Path(entry.path)
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
        except OSError:
            continue
        if excluded is not None and excluded.excludes(child):
            continue
        if is_dir:
            if entry.name not in SKIPPED_DIRECTORIES and not entry.name.startswith("."):
                yield from _walk(child, excluded, seen)
        elif is_file and entry.name.endswith(".py"):
            yield child

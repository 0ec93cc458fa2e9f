"""Writing the files synchunt produces (reports, outputs, baselines, annotated traces) without ever losing one.

Every write goes through :func:`write_output`: it refuses a path that is one of the command's inputs (by resolved
path and by inode, so a symlink or a hard link to an input is caught too), refuses to replace an existing file
unless asked, and writes atomically (a temporary file in the same folder, then a rename), so a crash or a full
disk never leaves half a file where a good one was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from synchunt.errors import UsageError


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name the same file (resolved paths, or the same device and inode)."""
    try:
        if a.resolve() == b.resolve():
            return True
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: Path, *, inputs: Iterable[Path] = (), force: bool = False, what: str = "") -> None:
    """The checks of :func:`write_output` alone, for commands that check before a long computation."""
    label = f"the {what} " if what else ""
    for source in inputs:
        if same_file(path, Path(source)):
            raise UsageError(f"refusing to write {label}{path}: it is one of the inputs ({source})")
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give {label}a file name")
    if (path.exists() or path.is_symlink()) and not force:
        raise UsageError(f"{path} exists; pass --force to replace it, or choose another name")
    if path.exists() and not path.is_file():
        raise UsageError(f"refusing to replace {path}: not a regular file")


def write_output(path: Path, content: str | bytes, *, inputs: Iterable[Path] = (), force: bool = False,
                 what: str = "", expected: bytes | None = None) -> Path:
    """Write ``content`` to ``path`` atomically (creating folders), after :func:`check_output`'s checks.

    ``expected`` (for rewriting a file in place, such as a source file ``--fix`` edits) is what the file held when
    it was read: the write is refused if the file holds anything else just before it is replaced.
    Raises :class:`UsageError` (one line, exit 2) for every refusal and OS error.
    """
    path = Path(path)
    check_output(path, inputs=inputs, force=force, what=what)
    data = content.encode("utf-8") if isinstance(content, str) else content
    label = f"{what} {path}" if what else str(path)
    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if expected is not None and _current(path) != expected:
            raise UsageError(f"refusing to replace {label}: it changed since it was read")
        with contextlib.suppress(OSError):
            os.chmod(temporary, output_mode(path))
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        raise UsageError(f"cannot write {label}: {error.strerror or error}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return path


def output_mode(path: Path) -> int:
    """The permissions a file written to ``path`` gets: the replaced file's, or what ``open`` would give a new one
    (a temporary file from ``mkstemp`` is the owner's alone until this is applied)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current

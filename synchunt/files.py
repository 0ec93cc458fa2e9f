"""Writing the files synchunt produces (reports, baselines, outputs): one place for the checks and the errors."""

from __future__ import annotations

from pathlib import Path

from synchunt.errors import UsageError


def write_text_file(path: Path, text: str, *, overwrite: bool = True, what: str = "",
                    refuse_hint: str = "remove it or choose another name") -> Path:
    """Write ``text`` to ``path`` (creating folders); ``UsageError`` for a folder, an existing file when
    ``overwrite`` is off, or an OS error. ``what`` names the file in messages (``"baseline"``)."""
    label = f"{what} {path}" if what else str(path)
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give {'the ' + what + ' ' if what else ''}a file name")
    if path.exists() and not overwrite:
        raise UsageError(f"{path} exists; {refuse_hint}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {label}: {error.strerror or error}") from None
    return path

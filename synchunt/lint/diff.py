"""``--diff REF``: the lines changed since a git ref (committed, staged or not, and untracked files), read
with plain ``git diff`` so that it works in any checkout."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from synchunt.errors import UsageError
from synchunt.findings import Finding

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
ALL_LINES = None  # a new (untracked) file: every line is changed


def _git(arguments: Sequence[str], cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, text=True, check=False,
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"--diff needs git: {error}") from None
    if done.returncode != 0:
        raise UsageError(f"--diff: git {' '.join(arguments)}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def changed_lines(ref: str, start: Path) -> dict[str, set[int] | None]:
    """Absolute paths → the new-side line numbers changed since ``ref`` (``None``: the whole file is new)."""
    folder = start if start.is_dir() else start.parent
    top = Path(_git(["rev-parse", "--show-toplevel"], folder).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
    changed: dict[str, set[int] | None] = {}
    current: str | None = None
    for line in _git(["diff", "--unified=0", "--no-color", "--no-ext-diff", "--relative", ref, "--"], top).splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = None if name == "/dev/null" else os.path.abspath(top / name.removeprefix("b/"))
            if current is not None:
                changed.setdefault(current, set())
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            first, count = int(match.group(1)), int(match.group(2) or "1")
            lines = changed[current]
            if lines is not None:
                lines.update(range(first, first + count))
    for name in _git(["ls-files", "--others", "--exclude-standard"], top).splitlines():
        changed[os.path.abspath(top / name)] = ALL_LINES
    return changed


def on_changed_lines(findings: Sequence[Finding], changed: Mapping[str, set[int] | None]) -> list[Finding]:
    """The findings with a line (of their span) among the changed ones; problems always."""
    return [finding for finding in findings if finding.is_problem or is_on_changed_line(finding, changed)]


def is_on_changed_line(finding: Finding, changed: Mapping[str, set[int] | None]) -> bool:
    """Whether a line of the finding's span is among the changed ones of its file."""
    key = os.path.abspath(finding.path)
    if key not in changed:
        return False
    lines = changed[key]
    return lines is ALL_LINES or any(number in lines
                                     for number in range(finding.line, (finding.end_line or finding.line) + 1))


__all__ = ["changed_lines", "is_on_changed_line", "on_changed_lines"]

"""Baselines: adopt the lint on a large code base by recording today's findings and reporting only new ones.

A finding's fingerprint survives lines moving (code added above it, a function moved down the file): it is
the rule, the file (relative to the baseline's folder), the enclosing function and the finding's expression
with its whitespace collapsed, plus an occurrence number when one function has the same expression twice,
as code scanners do. Editing the expression itself, renaming the function or moving the file makes it new.

When a function holds more of one expression than the baseline recorded (a copy of a line added), the new ones
are the findings on changed lines when the changes are known (``--diff``), else the last ones in the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from synchunt.errors import UsageError
from synchunt.files import write_output
from synchunt.findings import Finding
from synchunt.lint.diff import is_on_changed_line

SCHEMA = "synchunt.lint-baseline/1"
MAX_BASELINE_BYTES = 256 << 20  # a baseline of a few hundred thousand findings; anything larger is no baseline


@dataclass(frozen=True)
class Fingerprinted:
    finding: Finding
    fingerprint: str
    expression: str


def expression_text(finding: Finding, lines: Sequence[str]) -> str:
    """The finding's own source text (its span), whitespace collapsed; the line when the span is unknown."""
    first, last = finding.line, finding.end_line or finding.line
    if not 0 < first <= last <= len(lines):
        return " ".join((finding.snippet or "").split())
    if finding.end_column is None:
        text = "\n".join(lines[first - 1:last])
    elif first == last:
        text = lines[first - 1][finding.column - 1:finding.end_column - 1]
    else:
        text = "\n".join([lines[first - 1][finding.column - 1:], *lines[first:last - 1],
                          lines[last - 1][:finding.end_column - 1]])
    return " ".join(text.split()) or " ".join((finding.snippet or "").split())


def fingerprint(findings: Iterable[Finding], root: Path) -> list[Fingerprinted]:
    """Fingerprints of ``findings`` (problems are never fingerprinted: they stay reported)."""
    sources: dict[str, list[str]] = {}
    seen: Counter[tuple[str, str, str, str]] = Counter()
    found = []
    for finding in sorted((item for item in findings if not item.is_problem), key=lambda item: item.sort_key):
        if finding.path not in sources:
            try:
                sources[finding.path] = Path(finding.path).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                sources[finding.path] = []
        expression = expression_text(finding, sources[finding.path])
        key = (finding.code, _relative(finding.path, root), finding.scope or "<module>", expression)
        seen[key] += 1
        digest = hashlib.sha256("\0".join((*key, str(seen[key]))).encode("utf-8")).hexdigest()[:16]
        found.append(Fingerprinted(finding, digest, expression))
    return found


def write_baseline(findings: Iterable[Finding], path: Path, root: Path, *, inputs: Iterable[Path] = (),
                   force: bool = False) -> int:
    """Write the baseline of ``findings`` to ``path`` through the project's one writer (atomic; re-recording
    replaces a baseline, any other existing file only with ``force``, and never one of the ``inputs``); the
    number of findings recorded."""
    entries = [{"fingerprint": item.fingerprint, "code": item.finding.code,
                "path": _relative(item.finding.path, root), "scope": item.finding.scope,
                "expression": item.expression, "line": item.finding.line}
               for item in fingerprint(findings, root)]
    document = {"schema": SCHEMA, "root": ".", "findings": entries}
    text = json.dumps(document, indent=1) + "\n"
    write_output(path, text, inputs=inputs, force=force or replaceable(path), what="lint baseline")
    return len(entries)


def replaceable(path: Path) -> bool:
    """Whether ``--write-baseline`` may replace ``path`` without ``--force``: no file there, an empty one, or a lint
    baseline already (re-recording it)."""
    try:
        size = path.stat().st_size
    except OSError:
        return True
    if size == 0:
        return True
    if size > MAX_BASELINE_BYTES:
        return False
    try:
        return is_baseline(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False


@dataclass(frozen=True)
class Recorded:
    """One finding a baseline holds: its fingerprint and what the fingerprint is made of (``key``: rule, file,
    function, expression; None in a baseline written without them, or without the finding's ``line``: such an
    entry matches by fingerprint alone)."""

    fingerprint: str
    key: tuple[str, str, str, str] | None
    line: int | None


def read_baseline(path: Path) -> list[Recorded]:
    """The findings a baseline holds; a missing or foreign file is a usage error."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"cannot read the baseline {path}: {error}") from None
    if not is_baseline(document):
        raise UsageError(f"{path} is not a synchunt lint baseline (no {SCHEMA!r} schema); write one with "
                         "`synchunt lint --write-baseline FILE`")
    entries = document.get("findings")
    if not isinstance(entries, list) or not all(isinstance(item, dict) and isinstance(item.get("fingerprint"), str)
                                                for item in entries):
        raise UsageError(f"{path}: 'findings' must be a list of entries with a 'fingerprint'")
    return [Recorded(item["fingerprint"], _recorded_key(item), _recorded_line(item)) for item in entries]


def is_baseline(document: object) -> bool:
    return isinstance(document, dict) and document.get("schema") == SCHEMA


def _recorded_key(item: dict) -> tuple[str, str, str, str] | None:
    parts = (item.get("code"), item.get("path"), item.get("scope") or "<module>", item.get("expression"))
    return parts if all(isinstance(part, str) for part in parts) else None  # type: ignore[return-value]


def _recorded_line(item: dict) -> int | None:
    line = item.get("line")
    return line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None


def new_findings(findings: Sequence[Finding], baseline: Sequence[Recorded], root: Path,
                 changed: Mapping[str, set[int] | None] | None = None) -> tuple[list[Finding], int]:
    """The findings the baseline does not hold (problems always), and how many it held. ``changed``: the lines
    changed per absolute file (`synchunt.lint.diff.changed_lines`), when known: where a function holds more of
    one expression than the baseline, the ones on changed lines are the new ones."""
    items = fingerprint(findings, root)
    recorded: dict[tuple[str, str, str, str], list[Recorded]] = defaultdict(list)
    by_print: Counter[str] = Counter()
    for entry in baseline:
        if entry.key is not None and entry.line is not None:
            recorded[entry.key].append(entry)
        else:
            by_print[entry.fingerprint] += 1  # a baseline without keys or lines: matched by fingerprint
    groups: dict[tuple[str, str, str, str], list[Fingerprinted]] = defaultdict(list)
    for item in items:
        groups[_key(item, root)].append(item)
    known: set[int] = set()
    for key, members in groups.items():
        entries = recorded.get(key, [])
        for item in _matched(members, entries, changed or {}):
            known.add(id(item.finding))
        for item in members:
            if id(item.finding) not in known and by_print[item.fingerprint] > 0:
                by_print[item.fingerprint] -= 1
                known.add(id(item.finding))
    kept = [finding for finding in findings if id(finding) not in known]
    return kept, len(known)


def _key(item: Fingerprinted, root: Path) -> tuple[str, str, str, str]:
    finding = item.finding
    return finding.code, _relative(finding.path, root), finding.scope or "<module>", item.expression


def _matched(members: list[Fingerprinted], entries: list[Recorded],
             changed: Mapping[str, set[int] | None]) -> list[Fingerprinted]:
    """The members the recorded entries account for: all when there are enough; else as many as there are
    entries, those on unchanged lines first, then in file order (the copies below are taken as the new ones:
    without the changes, a copy added above a recorded line cannot be told from one added below it)."""
    if len(members) <= len(entries):
        return members
    ordered = sorted(members, key=lambda item: (is_on_changed_line(item.finding, changed), item.finding.line))
    return ordered[:len(entries)]


def _relative(path: str, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path(os.path.abspath(root))).as_posix()
    except ValueError:
        return Path(path).as_posix()


__all__ = ["SCHEMA", "Recorded", "expression_text", "fingerprint", "is_baseline", "new_findings", "read_baseline",
           "replaceable", "write_baseline"]

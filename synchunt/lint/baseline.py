"""Baselines: adopt the lint on a large code base by recording today's findings and reporting only new ones.

A finding's fingerprint survives lines moving (code added above it, a function moved down the file): it is
the rule, the file (relative to the baseline's folder), the enclosing function and the finding's expression
with its whitespace collapsed, plus an occurrence number when one function has the same expression twice,
as code scanners do. Editing the expression itself, renaming the function or moving the file makes it new.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from synchunt.errors import UsageError
from synchunt.files import write_output
from synchunt.findings import Finding

SCHEMA = "synchunt.lint-baseline/1"


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


def write_baseline(findings: Iterable[Finding], path: Path, root: Path, *, inputs: Iterable[Path] = ()) -> int:
    """Write the baseline of ``findings`` to ``path`` through the project's one writer (atomic; re-recording
    replaces the baseline, but never one of the ``inputs``); the number of findings recorded."""
    entries = [{"fingerprint": item.fingerprint, "code": item.finding.code,
                "path": _relative(item.finding.path, root), "scope": item.finding.scope,
                "expression": item.expression, "line": item.finding.line}
               for item in fingerprint(findings, root)]
    document = {"schema": SCHEMA, "root": ".", "findings": entries}
    text = json.dumps(document, indent=1) + "\n"
    write_output(path, text, inputs=inputs, force=True, what="lint baseline")
    return len(entries)


def read_baseline(path: Path) -> Counter[str]:
    """The fingerprints a baseline holds (with their counts); a missing or foreign file is a usage error."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"cannot read the baseline {path}: {error}") from None
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise UsageError(f"{path} is not a synchunt lint baseline (no {SCHEMA!r} schema); write one with "
                         "`synchunt lint --write-baseline FILE`")
    entries = document.get("findings")
    if not isinstance(entries, list) or not all(isinstance(item, dict) and isinstance(item.get("fingerprint"), str)
                                                for item in entries):
        raise UsageError(f"{path}: 'findings' must be a list of entries with a 'fingerprint'")
    return Counter(item["fingerprint"] for item in entries)


def new_findings(findings: Sequence[Finding], baseline: Counter[str], root: Path) -> tuple[list[Finding], int]:
    """The findings the baseline does not hold (problems always), and how many it held."""
    remaining = Counter(baseline)
    known: set[int] = set()
    for item in fingerprint(findings, root):
        if remaining[item.fingerprint] > 0:
            remaining[item.fingerprint] -= 1
            known.add(id(item.finding))
    kept = [finding for finding in findings if id(finding) not in known]
    return kept, len(known)


def _relative(path: str, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path(os.path.abspath(root))).as_posix()
    except ValueError:
        return Path(path).as_posix()


__all__ = ["SCHEMA", "expression_text", "fingerprint", "new_findings", "read_baseline", "write_baseline"]

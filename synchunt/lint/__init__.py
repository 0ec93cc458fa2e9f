"""Static lint: finds the catalogue's sync patterns in Python source, without importing torch.

- ``lint_source(text, filename)`` → findings for one module
- ``lint_paths(paths, select=..., ignore=...)`` → findings for files and directory trees (``*.py``)

Files that cannot be parsed become findings with code :data:`PARSE_ERROR` and ``is_problem=True``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from synchunt.errors import UsageError
from synchunt.findings import Confidence, Finding, Severity
from synchunt.lint.engine import ModuleLinter, build_plan
from synchunt.rules import RULES, Rule

PARSE_ERROR = "SH000"
_SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                                  ".ruff_cache", ".pytest_cache", "node_modules", "build", "dist"})


def select_rules(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
                 rules: Sequence[Rule] = RULES) -> list[Rule]:
    """Rules with a static form whose code starts with a ``select`` prefix (all when none) and with no
    ``ignore`` prefix. An unknown code or prefix raises :class:`UsageError`."""
    selected = [code.strip().upper() for code in select or () if code.strip()]
    ignored = [code.strip().upper() for code in ignore or () if code.strip()]
    for prefix in (*selected, *ignored):
        if not any(rule.code.startswith(prefix) for rule in rules):
            raise UsageError(f"unknown rule code or prefix {prefix!r}")
    return [rule for rule in rules if rule.has_static_form
            and (not selected or any(rule.code.startswith(prefix) for prefix in selected))
            and not any(rule.code.startswith(prefix) for prefix in ignored)]


def lint_source(text: str, filename: str = "<string>", *, rules: Sequence[Rule] | None = None,
                select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
                min_confidence: Confidence = Confidence.LOW) -> list[Finding]:
    """Findings in one module's source, sorted by position."""
    active = list(rules) if rules is not None else select_rules(select, ignore)
    try:
        tree = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError) as error:  # ValueError: source with NUL bytes
        return [_parse_problem(filename, error)]
    findings = ModuleLinter(tree, text, filename, build_plan(active)).run()
    kept = [finding for finding in findings if finding.confidence.at_least(min_confidence)]
    return sorted(kept, key=lambda finding: finding.sort_key)


def lint_paths(paths: Iterable[str | Path], *, select: Iterable[str] | None = None,
               ignore: Iterable[str] | None = None, min_confidence: Confidence = Confidence.LOW,
               rules: Sequence[Rule] | None = None) -> list[Finding]:
    """Findings in every file given and every ``*.py`` under the directories given.

    A path that does not exist raises :class:`UsageError`; a file that cannot be read or parsed becomes
    one problem finding (code ``SH000``) and the others are still linted.
    """
    active = list(rules) if rules is not None else select_rules(select, ignore)
    findings: list[Finding] = []
    for path in iter_python_files(paths):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            findings.append(Finding(PARSE_ERROR, f"cannot read: {error}", str(path), 1,
                                    severity=Severity.ERROR, is_problem=True))
            continue
        findings.extend(lint_source(text, str(path), rules=active, min_confidence=min_confidence))
    return findings


def iter_python_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files as given (any suffix: a non-Python file is reported when it fails to parse) and ``*.py`` files
    under directories, in a stable order."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(_walk(path))
        elif path.is_file():
            yield path
        else:
            raise UsageError(f"no such file or directory: {raw}")


def _walk(directory: Path) -> Iterator[Path]:
    for child in directory.iterdir():
        if child.is_dir():
            if child.name not in _SKIPPED_DIRECTORIES and not child.name.startswith("."):
                yield from _walk(child)
        elif child.suffix == ".py" and child.is_file():
            yield child


def _parse_problem(filename: str, error: SyntaxError | ValueError) -> Finding:
    line = getattr(error, "lineno", None) or 1
    column = getattr(error, "offset", None) or 1
    reason = getattr(error, "msg", None) or str(error)
    return Finding(PARSE_ERROR, f"cannot parse as Python: {reason}", filename, line, max(column, 1),
                   severity=Severity.ERROR, confidence=Confidence.HIGH, is_problem=True)


__all__ = ["PARSE_ERROR", "iter_python_files", "lint_paths", "lint_source", "select_rules"]

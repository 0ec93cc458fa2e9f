"""Static lint: finds the catalogue's sync patterns in Python source, without importing torch.

- ``lint_source(text, filename)`` → findings for one module
- ``lint_paths(paths, select=..., ignore=...)`` → findings for files and directory trees (``*.py``)
- ``locate(source, filename, def_line, function, rule_codes)`` → the lines of a function that match rules

Files that cannot be parsed (or are too deeply nested to analyse) become findings with code
:data:`PARSE_ERROR` and ``is_problem=True``.
"""

from __future__ import annotations

import ast
import contextlib
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from synchunt.config import SynchuntConfig, matches_any
from synchunt.errors import UsageError
from synchunt.findings import Confidence, Finding, Severity
from synchunt.lint.context import DEFAULT_TEST_FILES, ContextRules
from synchunt.lint.engine import ModuleLinter, build_plan
from synchunt.lint.files import FileFilter, iter_python_files, read_source
from synchunt.lint.locate import Located, locate
from synchunt.lint.program import ModuleSummary, mark_unreached, summarize_file
from synchunt.lint.provenance.package import PackageFacts, index_package
from synchunt.rules import RULES, Rule

PARSE_ERROR = "parse-error"  # not a rule: no --ignore or noqa can hide a file the lint could not read
_RECURSION_LIMIT = 12_000


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
                min_confidence: Confidence = Confidence.LOW,
                context_rules: ContextRules | None = None, package: PackageFacts | None = None) -> list[Finding]:
    """Findings in one module's source, sorted by position; ``context_rules`` name the project's own step
    and cold functions (``[tool.synchunt]``); ``package`` holds what the files linted with it declare
    (:func:`index_package`)."""
    active = list(rules) if rules is not None else select_rules(select, ignore)
    findings, _ = _lint_text(text, filename, active, context_rules, package, summarize=False)
    kept = [finding for finding in findings if finding.confidence.at_least(min_confidence)]
    return sorted(kept, key=lambda finding: finding.sort_key)


def _lint_text(text: str, filename: str, active: list[Rule], context_rules: ContextRules | None,
               package: PackageFacts | None, summarize: bool) -> tuple[list[Finding], ModuleSummary | None]:
    """Every finding of one module, and (``summarize``) its summary for the program index, from one parse."""
    try:
        tree = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError) as error:  # ValueError: source with NUL bytes
        return [_parse_problem(filename, error)], None
    except (RecursionError, MemoryError) as error:
        return [_nesting_problem(filename, error)], None
    try:
        with _deep_recursion():
            findings = ModuleLinter(tree, text, filename, build_plan(active), context_rules=context_rules,
                                    package=package).run()
            summary = summarize_file(tree, filename) if summarize else None
    except (RecursionError, MemoryError) as error:  # deeper than even that
        return [_nesting_problem(filename, error)], None
    except Exception as error:  # a bug of the lint costs that file, never the run or a traceback
        return [Finding(PARSE_ERROR, f"cannot lint: internal error ({type(error).__name__}: {error}); please "
                        "report it with this file", filename, 1, severity=Severity.ERROR,
                        confidence=Confidence.HIGH, is_problem=True)], None
    return findings, summary


@dataclass(frozen=True)
class LintRun:
    """What :func:`lint_files` did: the findings, the files linted, the test and benchmark files skipped, and
    what the files declared together (``None`` for one file; a re-lint of one of them after a fix reads it)."""

    findings: list[Finding]
    files_checked: int
    tests_skipped: int
    package: PackageFacts | None = None


def is_test_file(path: Path, config: SynchuntConfig) -> bool:
    """Whether ``path`` is a test or benchmark file by the configuration's ``test-files`` (or the defaults)."""
    patterns = config.test_files if config.test_files is not None else DEFAULT_TEST_FILES
    return matches_any(path, patterns, config.root)


def split_test_files(files: Iterable[Path], config: SynchuntConfig,
                     include_tests: bool | None = None) -> tuple[list[Path], int]:
    """The files to lint and how many test and benchmark files were left out (none when tests are included:
    ``include_tests``, else the configuration's ``exclude-tests``)."""
    files = list(files)
    include = (not config.exclude_tests) if include_tests is None else include_tests
    if include:
        return files, 0
    kept = [path for path in files if not is_test_file(path, config)]
    return kept, len(files) - len(kept)


def lint_paths(paths: Iterable[str | Path], *, select: Iterable[str] | None = None,
               ignore: Iterable[str] | None = None, min_confidence: Confidence = Confidence.LOW,
               rules: Sequence[Rule] | None = None, exclude: Sequence[str] = (),
               config: SynchuntConfig | None = None, include_tests: bool | None = True) -> list[Finding]:
    """:func:`lint_files`' findings (test files included unless ``include_tests`` says otherwise)."""
    return lint_files(paths, select=select, ignore=ignore, min_confidence=min_confidence, rules=rules,
                      exclude=exclude, config=config, include_tests=include_tests).findings


def lint_files(paths: Iterable[str | Path], *, select: Iterable[str] | None = None,
               ignore: Iterable[str] | None = None, min_confidence: Confidence = Confidence.LOW,
               rules: Sequence[Rule] | None = None, exclude: Sequence[str] = (),
               config: SynchuntConfig | None = None, include_tests: bool | None = None) -> LintRun:
    """Findings in every file given and every ``*.py`` under the directories given; test and benchmark files
    are skipped (and counted) unless ``include_tests`` (``None``: unless the configuration's
    ``exclude-tests = false``; the command line's default).

    ``exclude`` holds glob patterns relative to the current folder; ``config`` adds its own ``exclude`` and
    ``per-file-ignores`` (relative to its ``pyproject.toml``). Its ``select``/``ignore``/``min-confidence``
    are the caller's to merge. A path that does not exist raises :class:`UsageError`; a file that cannot be
    read or parsed becomes one problem finding (code ``parse-error``) and the others are still linted.
    With several files, what they declare together (:func:`index_package`) is read first, and a finding in a
    function nothing in them calls is lowered to low confidence (:mod:`synchunt.lint.program`): the result
    depends on which files are linted together, never on their order.
    """
    active = list(rules) if rules is not None else select_rules(select, ignore)
    config = config or SynchuntConfig()
    excluded = FileFilter(exclude, config.exclude, config.root)
    files, skipped = split_test_files(iter_python_files(paths, excluded), config, include_tests)
    context_rules = ContextRules(config.step_functions, config.cold_functions)
    findings: list[Finding] = []
    sources: list[tuple[Path, str | None]] = []
    for path in files:
        try:
            sources.append((path, read_source(path)))
        except (OSError, UnicodeDecodeError) as error:
            sources.append((path, None))
            findings.append(Finding(PARSE_ERROR, f"cannot read: {error}", str(path), 1,
                                    severity=Severity.ERROR, is_problem=True))
    # one file (a pre-commit hook): its own declarations are all there is, and the module reads them itself
    package = index_package((str(path), text) for path, text in sources if text is not None) \
        if len(sources) > 1 else None
    summaries: list[ModuleSummary] | None = [] if package is not None else None
    for path, text in sources:
        if text is None:
            continue
        silenced = config.ignored_codes(path)
        found, summary = _lint_text(text, str(path), active, context_rules, package, summarize=summaries is not None)
        if summaries is not None and summary is not None:
            summaries.append(summary)
        findings.extend(finding for finding in found if finding.is_problem or not finding.code.startswith(silenced))
    if summaries:  # what nothing in these files calls never runs as shipped: its findings are lowered
        findings = mark_unreached(findings, summaries)
    kept = [finding for finding in findings if finding.is_problem or finding.confidence.at_least(min_confidence)]
    return LintRun(sorted(kept, key=lambda finding: finding.sort_key), len(files), skipped, package)


@contextlib.contextmanager
def _deep_recursion() -> Iterator[None]:
    """Room for long operator chains (a 2,000-term sum is valid Python): the walk recurses per nesting level.
    From Python 3.11 on, Python-to-Python calls do not use the C stack, so a higher limit is safe there."""
    previous = sys.getrecursionlimit()
    if sys.version_info >= (3, 11) and previous < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _parse_problem(filename: str, error: SyntaxError | ValueError) -> Finding:
    line = getattr(error, "lineno", None) or 1
    column = getattr(error, "offset", None) or 1
    reason = getattr(error, "msg", None) or str(error)
    return Finding(PARSE_ERROR, f"cannot parse as Python: {reason}", filename, line, max(column, 1),
                   severity=Severity.ERROR, confidence=Confidence.HIGH, is_problem=True)


def _nesting_problem(filename: str, error: RecursionError | MemoryError) -> Finding:
    # The parser reports deep nesting as MemoryError (its stack) or RecursionError; the walk as RecursionError.
    return Finding(PARSE_ERROR, f"cannot lint: the source is nested too deeply to analyse ({type(error).__name__})",
                   filename, 1, severity=Severity.ERROR, confidence=Confidence.HIGH, is_problem=True)


__all__ = ["PARSE_ERROR", "FileFilter", "LintRun", "Located", "PackageFacts", "index_package", "is_test_file",
           "iter_python_files", "lint_files",
           "lint_paths", "lint_source", "locate", "select_rules", "split_test_files"]

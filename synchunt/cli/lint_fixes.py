"""`synchunt lint --fix`, `--fix-diff` and `--check-fixes`: tailored rewrites checked, previewed or applied."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import typer

from synchunt.cli.output import note
from synchunt.config import SynchuntConfig
from synchunt.errors import UsageError
from synchunt.findings import Confidence, Finding

if TYPE_CHECKING:
    from synchunt.lint.provenance.package import PackageFacts


class FixRequest(NamedTuple):
    fix: bool
    fix_diff: bool
    unsafe: bool
    check: bool

    def validate(self) -> None:
        if self.fix and self.fix_diff:
            raise UsageError("--fix writes the rewrites and --fix-diff only shows them: give one of them")
        if self.unsafe and not (self.fix or self.fix_diff):
            raise UsageError("--unsafe-fixes needs --fix or --fix-diff")


def fix_findings(findings: list[Finding], request: FixRequest, *, config: SynchuntConfig, select: Iterable[str],
                 ignore: Iterable[str], min_confidence: Confidence, inputs: list[Path], output: Path | None,
                 force: bool, package: PackageFacts | None = None) -> list[Finding]:
    """The findings to report, with their tailored rewrites; with --fix the files rewritten first, with
    --fix-diff the diff printed (or written to --output) and the command ended (exit 1 when not empty).
    ``package``: what the files linted together declared, so a re-lint after a rewrite reads the same facts."""
    if request.fix or request.fix_diff:
        from synchunt.lint import lint_source, select_rules

        active = select_rules(select, ignore)

        def relint(text: str, path: str) -> list[Finding]:
            silenced = config.ignored_codes(Path(path))
            return [finding for finding in lint_source(text, path, rules=active, min_confidence=min_confidence,
                                                                 package=package)
                    if finding.is_problem or not finding.code.startswith(silenced)]

        findings, diff = run_fixes(findings, relint, unsafe=request.unsafe, write=request.fix)
        if request.fix_diff:
            if output is None:
                typer.echo(diff, nl=False)
            else:
                from synchunt.files import write_output

                write_output(output, diff, inputs=inputs, force=force)
            raise typer.Exit(int(bool(diff)))
    return attach_fixes(findings, check=request.check or request.fix)


def attach_fixes(findings: list[Finding], *, check: bool) -> list[Finding]:
    """The findings with their tailored rewrites (syntax only; checked, importing torch, when ``check``)."""
    from synchunt.fixes import tailor_findings
    from synchunt.lint.files import read_source

    def read(path: str) -> str | None:
        try:
            return read_source(Path(path))
        except (OSError, UnicodeDecodeError):
            return None

    if check:
        _say_when_unchecked()
    return tailor_findings(findings, read, check=check)


def run_fixes(findings: list[Finding], relint: Callable[[str, str], list[Finding]], *, unsafe: bool,
              write: bool) -> tuple[list[Finding], str]:
    """Fix (``write``) or preview each file that has findings: ``(the findings left, the unified diff)``.
    Prints one summary line (stderr), and one line per file that could not be fixed."""
    from synchunt.fixes.apply import fix_file

    _say_when_unchecked()
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    left: list[Finding] = []
    diffs, fixed, files, conditional_left, suggestions = [], 0, 0, 0, 0
    for path, found in by_path.items():
        if all(finding.is_problem for finding in found):
            left += found
            continue
        reported = {_position(finding) for finding in found}
        result = fix_file(path, relint, unsafe=unsafe, write=write,
                          wanted=lambda finding, reported=reported: _position(finding) in reported)
        if result.error is not None:
            note(f"not fixed: {result.error}")
            left += found
            continue
        # What the fixed text still has, but what the run left out before (a baseline's, --diff's: lines may
        # have moved, so matched by rule, function and source line); a read a rewrite moved is reported anew
        hidden = Counter(_what(finding) for finding in result.unwanted)
        for finding in result.remaining:
            if hidden[_what(finding)] > 0:
                hidden[_what(finding)] -= 1
            else:
                left.append(finding)
        diffs.append(result.diff())
        fixed += len(result.fixed)
        files += bool(result.fixed)
        conditional_left += sum("--unsafe-fixes" in why for _, why in result.left)
        suggestions += sum(why.startswith("a suggestion") for _, why in result.left)
    verb = "fixed" if write else "would fix"
    summary = f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}"
    if conditional_left:
        summary += f"; {conditional_left} conditional rewrite{'s' if conditional_left != 1 else ''} need --unsafe-fixes"
    if suggestions:
        summary += f"; {suggestions} unchecked suggestion{'s' if suggestions != 1 else ''} left as they are"
    note(summary)
    return left, "".join(diffs)


def _position(finding: Finding) -> tuple[str, int, int, int | None, int | None]:
    """Where a finding is, as a re-lint of the same text finds it again."""
    return finding.code, finding.line, finding.column, finding.end_line, finding.end_column


def _what(finding: Finding) -> tuple[str, str | None, str]:
    return finding.code, finding.scope, " ".join((finding.snippet or "").split())


def _say_when_unchecked() -> None:
    from synchunt.fixes.check import torch_available

    if not torch_available():
        note("note: torch is not installed, so no rewrite can be checked; every tailored fix stays a suggestion")

"""`synchunt lint`: the static audit command."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.app import ForceOpt, OutputOpt, app
from synchunt.cli.output import emit, format_choices
from synchunt.errors import UsageError
from synchunt.findings import Confidence, Finding, FindingSet, Severity
from synchunt.render.findings import FINDING_FORMATS

LintFormat = format_choices(FINDING_FORMATS)


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    note = "note"
    never = "never"


class RunContextChoice(str, Enum):
    step = "step"
    unknown = "unknown"
    cold = "cold"


class MinConfidence(str, Enum):
    high = "high"
    medium = "medium"
    low = "low"


SourcePaths = Annotated[list[Path], typer.Argument(help="Python files or directories (searched for *.py).")]
SelectOpt = Annotated[list[str] | None, typer.Option(
    "--select", help="Only these rule codes or prefixes (SH101, SH1); repeat or separate with commas.")]
IgnoreOpt = Annotated[list[str] | None, typer.Option(
    "--ignore", help="Skip these rule codes or prefixes; repeat or separate with commas.")]
ExcludeOpt = Annotated[list[str] | None, typer.Option(
    "--exclude", help="Skip files and folders matching these glob patterns (relative to the current folder), "
    "on top of the configuration's `exclude`; repeat or separate with commas.")]
LintFormatOpt = Annotated[LintFormat, typer.Option(  # type: ignore[valid-type]
    "--format", "-f", help=", ".join(f"{r.name} ({r.description})" for r in FINDING_FORMATS) + ".")]
FailOnOpt = Annotated[FailOn, typer.Option(
    "--fail-on", help="Exit 1 when a finding has this severity or a higher one.")]
MinConfidenceOpt = Annotated[MinConfidence | None, typer.Option(
    "--min-confidence", help="Report only findings this sure or surer (low-confidence findings are notes); "
    "default: the configuration's `min-confidence`, else medium.", show_default=False)]
ContextOpt = Annotated[list[RunContextChoice] | None, typer.Option(
    "--context", help="Only findings where the code runs: step (per step or request), unknown, cold (init, "
    "weight loading, capture, error paths, tests); repeat for several.", show_default=False)]
IncludeTestsOpt = Annotated[bool, typer.Option(
    "--include-tests", help="Also lint test and benchmark files (skipped by default, and counted; "
    "configurable with `exclude-tests` and `test-files`).")]
WriteBaselineOpt = Annotated[Path | None, typer.Option(
    "--write-baseline", help="Record the findings in FILE (a baseline: fingerprints that survive moved lines) "
    "and exit 0; adopt the lint, then report only new findings with --baseline FILE.", show_default=False)]
BaselineOpt = Annotated[Path | None, typer.Option(
    "--baseline", help="Report only the findings FILE (from --write-baseline) does not hold.", show_default=False)]
DiffOpt = Annotated[str | None, typer.Option(
    "--diff", help="Report only the findings on lines changed since this git ref (commits, staged and unstaged "
    "edits, untracked files), e.g. origin/main.", show_default=False)]
StatisticsOpt = Annotated[bool, typer.Option(
    "--statistics", help="Print the number of findings per rule and context instead of the findings.")]
# Tailored fixes (synchunt.fixes): checked, previewed or applied.
FixOpt = Annotated[bool, typer.Option(
    "--fix", help="Rewrite the syncing lines in place with their tailored fixes: only rewrites that were checked "
    "(equal results on generated inputs, no sync under the guard; needs torch) and hold without a condition.")]
UnsafeFixesOpt = Annotated[bool, typer.Option(
    "--unsafe-fixes", help="With --fix or --fix-diff, also apply checked rewrites that hold under a stated "
    "condition (sorted indices, a 0-dim result, ...).")]
FixDiffOpt = Annotated[bool, typer.Option(
    "--fix-diff", help="Print the unified diff --fix would write, and change nothing (exit 1 when there is one).")]
CheckFixesOpt = Annotated[bool, typer.Option(
    "--check-fixes", help="Check every tailored rewrite (imports torch) and report it as checked or as a "
    "suggestion, without changing any file.")]


def _codes(values: list[str] | None, upper: bool = True) -> list[str]:
    found = [item.strip() for value in values or () for item in value.split(",") if item.strip()]
    return [item.upper() for item in found] if upper else found


def _common_folder(paths: list[Path]) -> Path:
    """Where to look for the configuration: the folder holding every path given (else the current one)."""
    import os

    try:
        common = Path(os.path.commonpath([os.path.abspath(path) for path in paths]))
    except ValueError:  # paths on different drives
        return Path.cwd()
    return common if common.is_dir() else common.parent


@app.command("lint")
def lint_command(
    paths: SourcePaths,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    exclude: ExcludeOpt = None,
    output_format: LintFormatOpt = LintFormat(FINDING_FORMATS.default),  # noqa: B008
    fail_on: FailOnOpt = FailOn.warning,
    min_confidence: MinConfidenceOpt = None,
    output: OutputOpt = None,
    force: ForceOpt = False,
    fix: FixOpt = False,
    unsafe_fixes: UnsafeFixesOpt = False,
    fix_diff: FixDiffOpt = False,
    check_fixes: CheckFixesOpt = False,
    context: ContextOpt = None,
    include_tests: IncludeTestsOpt = False,
    write_baseline: WriteBaselineOpt = None,
    baseline: BaselineOpt = None,
    diff: DiffOpt = None,
    statistics: StatisticsOpt = False,
) -> None:
    """Scan Python source for code that makes the host wait for the device (no torch import, no GPU).

    Each finding says where its line runs: step (per step or request: forward, scheduler and step loops,
    sampling, batch preparation, KV-cache management), cold (init, weight loading, graph capture and
    warm-up, error and debug paths, tests) or unknown. Severity: error on the step path, inside loops and
    `with ...stream(...)` blocks; warning elsewhere; note for cold code and when unsure. Test and benchmark
    files are skipped unless --include-tests.

    Adopt it on a large code base: --write-baseline FILE once, then --baseline FILE reports only new
    findings; --diff REF only those on lines changed since a git ref; --statistics counts per rule.

    Silence a line with `# synchunt: ignore[SH101] -- reason`. Project settings (select, ignore,
    min-confidence, exclude, per-file-ignores, exclude-tests, test-files, step-functions, cold-functions)
    come from `\\[tool.synchunt]` in the nearest pyproject.toml; --select replaces the configured selection
    and its ignores, --ignore and --exclude add to them.

    Each finding carries a rewrite tailored to its own line where a pattern fits; --fix applies the checked
    ones that hold without a condition (--unsafe-fixes: also those that hold under one), --fix-diff previews.

    Exit status: 0 clean; 1 findings at or above --fail-on (with --fix-diff: a diff to apply); 2 a missing
    path, a bad configuration or a file that does not parse.
    """
    from synchunt.cli.lint_fixes import FixRequest, fix_findings
    from synchunt.config import load_config
    from synchunt.lint import FileFilter, iter_python_files, lint_files, split_test_files
    from synchunt.rules import RULES

    fixes = FixRequest(fix, fix_diff, unsafe_fixes, check_fixes)
    fixes.validate()

    config = load_config(_common_folder(paths))
    config.check_codes(tuple(rule.code for rule in RULES))
    selected = _codes(select)
    ignored = [*_codes(ignore), *([] if selected else config.ignore)]
    confidence = Confidence(min_confidence.value) if min_confidence is not None else (
        config.min_confidence or Confidence.MEDIUM)
    if baseline is not None and write_baseline is not None:
        raise UsageError("--write-baseline records the findings and --baseline hides recorded ones: give one")
    found = list(iter_python_files(paths, FileFilter(_codes(exclude, upper=False), config.exclude, config.root)))
    files, tests_skipped = split_test_files(found, config, include_tests or None)
    if output is not None:
        from synchunt.files import check_output

        check_output(output, inputs=files, force=force)
    if write_baseline is not None:  # refused before a long run, not after it
        from synchunt.files import check_output
        from synchunt.lint.baseline import replaceable

        check_output(write_baseline, inputs=files, force=force or replaceable(write_baseline), what="lint baseline")
    # A baseline records every confidence: a run of a few files (a pre-commit hook) may rate a finding higher
    # than the whole tree did (no program around it), and must still find it recorded.
    floor = Confidence.LOW if write_baseline is not None else confidence
    run = lint_files(files, select=selected or config.select, ignore=ignored, min_confidence=floor,
                     config=config, include_tests=True)
    findings, notes = run.findings, []
    if tests_skipped:
        notes.append(f"{tests_skipped} test and benchmark file{'s' if tests_skipped != 1 else ''} skipped "
                     "(--include-tests to lint them)")
    if write_baseline is not None:
        from synchunt.cli.output import note
        from synchunt.lint.baseline import write_baseline as record

        count = record(findings, write_baseline, write_baseline.resolve().parent, inputs=files, force=force)
        note(f"{count} finding{'s' if count != 1 else ''} (every confidence) recorded in {write_baseline}; "
             f"`synchunt lint --baseline {write_baseline}` reports only new ones")
        raise typer.Exit(UsageError.exit_code if any(finding.is_problem for finding in findings) else 0)
    findings, notes = _narrow(findings, notes, context, baseline, diff, paths)
    if statistics:
        from synchunt.render.findings.statistics import render_statistics

        typer.echo(render_statistics(FindingSet(tuple(findings), files_checked=len(files), notes=tuple(notes))),
                   nl=False)
        raise typer.Exit(_exit_code(findings, fail_on))
    # Tailored fixes: attached to every finding; checked, previewed (--fix-diff) or written (--fix) when asked.
    findings = fix_findings(findings, fixes, config=config,
                            select=selected or config.select, ignore=ignored, min_confidence=confidence,
                            inputs=files, output=output, force=force, package=run.package)
    report = FindingSet(tuple(findings), tool="synchunt lint", files_checked=len(files),
                        rule_codes=tuple(rule.code for rule in RULES if rule.has_static_form), notes=tuple(notes))
    emit(FINDING_FORMATS, output_format.value, report, output, inputs=files, force=force)
    raise typer.Exit(_exit_code(findings, fail_on))


def _narrow(findings: list[Finding], notes: list[str], contexts: list[RunContextChoice] | None,
            baseline: Path | None, diff: str | None, paths: list[Path]) -> tuple[list[Finding], list[str]]:
    """The findings --context, --baseline and --diff keep (problems always), with a note for each cut."""
    if contexts:
        wanted = {choice.value for choice in contexts}
        kept = [finding for finding in findings if finding.is_problem or finding.context in wanted]
        if len(kept) < len(findings):
            notes.append(f"{len(findings) - len(kept)} finding(s) in other contexts not shown "
                         f"(--context {' '.join(sorted(wanted))})")
        findings = kept
    changed = None
    if diff is not None:
        from synchunt.lint.diff import changed_lines

        changed = changed_lines(diff, _common_folder(paths))
    if baseline is not None:
        from synchunt.lint.baseline import new_findings, read_baseline

        findings, known = new_findings(findings, read_baseline(baseline), baseline.resolve().parent, changed)
        if known:
            notes.append(f"{known} finding{'s' if known != 1 else ''} in the baseline {baseline} not shown")
    if changed is not None:
        from synchunt.lint.diff import on_changed_lines

        kept = on_changed_lines(findings, changed)
        if len(kept) < len(findings):
            notes.append(f"{len(findings) - len(kept)} finding(s) on lines unchanged since {diff} not shown")
        findings = kept
    return findings, notes


def _exit_code(findings: list[Finding], fail_on: FailOn) -> int:
    if any(finding.is_problem for finding in findings):
        return UsageError.exit_code
    if fail_on is FailOn.never:
        return 0
    threshold = Severity(fail_on.value)
    return int(any(finding.severity.at_least(threshold) for finding in findings))

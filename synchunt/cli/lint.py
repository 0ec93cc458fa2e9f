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
) -> None:
    """Scan Python source for code that makes the host wait for the device (no torch import, no GPU).

    Severity: error inside loops and `with ...stream(...)` blocks, warning elsewhere, note when unsure.

    Silence a line with `# synchunt: ignore[SH101] -- reason`. Project settings (select, ignore,
    min-confidence, exclude, per-file-ignores) come from `[tool.synchunt]` in the nearest pyproject.toml;
    --select replaces the configured selection and its ignores, --ignore and --exclude add to them.

    Each finding carries a rewrite tailored to its own line where a pattern fits; --fix applies the checked
    ones that hold without a condition (--unsafe-fixes: also those that hold under one), --fix-diff previews.

    Exit status: 0 clean; 1 findings at or above --fail-on (with --fix-diff: a diff to apply); 2 a missing
    path, a bad configuration or a file that does not parse.
    """
    from synchunt.cli.lint_fixes import FixRequest, fix_findings
    from synchunt.config import load_config
    from synchunt.lint import FileFilter, iter_python_files, lint_paths
    from synchunt.rules import RULES

    fixes = FixRequest(fix, fix_diff, unsafe_fixes, check_fixes)
    fixes.validate()

    config = load_config(_common_folder(paths))
    config.check_codes(tuple(rule.code for rule in RULES))
    selected = _codes(select)
    ignored = [*_codes(ignore), *([] if selected else config.ignore)]
    confidence = Confidence(min_confidence.value) if min_confidence is not None else (
        config.min_confidence or Confidence.MEDIUM)
    files = list(iter_python_files(paths, FileFilter(_codes(exclude, upper=False), config.exclude, config.root)))
    if output is not None:
        from synchunt.files import check_output

        check_output(output, inputs=files, force=force)
    findings = lint_paths(files, select=selected or config.select, ignore=ignored, min_confidence=confidence,
                          config=config)
    # Tailored fixes: attached to every finding; checked, previewed (--fix-diff) or written (--fix) when asked.
    findings = fix_findings(findings, fixes, config=config,
                            select=selected or config.select, ignore=ignored, min_confidence=confidence,
                            inputs=files, output=output, force=force)
    report = FindingSet(tuple(findings), tool="synchunt lint", files_checked=len(files),
                        rule_codes=tuple(rule.code for rule in RULES if rule.has_static_form))
    emit(FINDING_FORMATS, output_format.value, report, output, inputs=files, force=force)
    raise typer.Exit(_exit_code(findings, fail_on))


def _exit_code(findings: list[Finding], fail_on: FailOn) -> int:
    if any(finding.is_problem for finding in findings):
        return UsageError.exit_code
    if fail_on is FailOn.never:
        return 0
    threshold = Severity(fail_on.value)
    return int(any(finding.severity.at_least(threshold) for finding in findings))

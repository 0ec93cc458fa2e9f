"""`synchunt lint`: the static audit command."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from synchunt.cli.app import OutputOpt, app
from synchunt.errors import UsageError
from synchunt.output import Confidence, Finding, Severity


class LintFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


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
LintFormatOpt = Annotated[LintFormat, typer.Option("--format", "-f", help="Output format.")]
FailOnOpt = Annotated[FailOn, typer.Option(
    "--fail-on", help="Exit 1 when a finding has this severity or a higher one.")]
MinConfidenceOpt = Annotated[MinConfidence | None, typer.Option(
    "--min-confidence", help="Report only findings this sure or surer (low-confidence findings are notes); "
    "default: the configuration's `min-confidence`, else medium.", show_default=False)]


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


def _render(findings: list[Finding], output_format: LintFormat) -> str | None:
    """The document for machine formats; ``None`` for text, which prints itself."""
    if output_format is LintFormat.json:
        from synchunt.output.jsonout import render_json

        return render_json(findings, tool="synchunt lint")
    if output_format is LintFormat.sarif:
        from synchunt import __version__
        from synchunt.output.sarif import render_sarif
        from synchunt.rules import RULES

        return render_sarif(findings, rules=[rule for rule in RULES if rule.has_static_form],
                            tool_version=__version__)
    if output_format is LintFormat.github:
        from synchunt.output.github import render_github

        return render_github(findings)
    return None


@app.command("lint")
def lint_command(
    paths: SourcePaths,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    exclude: ExcludeOpt = None,
    output_format: LintFormatOpt = LintFormat.text,
    fail_on: FailOnOpt = FailOn.warning,
    min_confidence: MinConfidenceOpt = None,
    output: OutputOpt = None,
) -> None:
    """Scan Python source for code that makes the host wait for the device (no torch import, no GPU).

    Severity: error inside loops and `with ...stream(...)` blocks, warning elsewhere, note when unsure.

    Silence a line with `# synchunt: ignore[SH101] -- reason`. Project settings (select, ignore,
    min-confidence, exclude, per-file-ignores) come from `[tool.synchunt]` in the nearest pyproject.toml;
    --select replaces the configured selection and its ignores, --ignore and --exclude add to them.

    Exit status: 0 clean; 1 findings at or above --fail-on; 2 a missing path, a bad configuration or a file
    that does not parse.
    """
    from synchunt.cli.output import write_text
    from synchunt.config import load_config
    from synchunt.lint import FileFilter, iter_python_files, lint_paths

    config = load_config(_common_folder(paths))
    selected = _codes(select)
    ignored = [*_codes(ignore), *([] if selected else config.ignore)]
    confidence = Confidence(min_confidence.value) if min_confidence is not None else (
        config.min_confidence or Confidence.MEDIUM)
    patterns = _codes(exclude, upper=False)
    files = list(iter_python_files(paths, FileFilter(patterns, config.exclude, config.root)))
    findings = lint_paths(files, select=selected or config.select, ignore=ignored, min_confidence=confidence,
                          config=config)
    document = _render(findings, output_format)
    if output is not None:
        if document is None:
            import io

            from rich.console import Console

            from synchunt.output.text import render_text

            buffer = io.StringIO()
            render_text(findings, Console(file=buffer, width=120, no_color=True), files_checked=len(files))
            document = buffer.getvalue()
        write_text(document, output)
    elif document is None:
        from rich.console import Console

        from synchunt.output.text import render_text

        render_text(findings, Console(), files_checked=len(files))
    else:
        sys.stdout.write(document)
    raise typer.Exit(_exit_code(findings, fail_on))


def _exit_code(findings: list[Finding], fail_on: FailOn) -> int:
    if any(finding.is_problem for finding in findings):
        return UsageError.exit_code
    if fail_on is FailOn.never:
        return 0
    threshold = Severity(fail_on.value)
    return int(any(finding.severity.at_least(threshold) for finding in findings))

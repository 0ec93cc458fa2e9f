"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per finding."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from synchunt.findings import Finding, Severity
from synchunt.render.text import visible
from synchunt.rules import RULES_BY_CODE, Rule

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _escape_data(text: str) -> str:
    # Control characters are made visible first: an ESC sequence must not reach the log viewer.
    return visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github_line(finding: Finding, rules: Mapping[str, Rule] = RULES_BY_CODE) -> str:
    rule = rules.get(finding.code)
    title = f"{finding.code} {rule.name}" if rule else finding.code
    properties = [f"file={_escape_property(finding.path)}", f"line={finding.line}", f"col={finding.column}"]
    if finding.end_line is not None:
        properties.append(f"endLine={finding.end_line}")
    if finding.end_column is not None and finding.end_line == finding.line:
        properties.append(f"endColumn={finding.end_column}")
    properties.append(f"title={_escape_property(title)}")
    message = finding.message if finding.is_problem else f"{finding.message} (confidence: {finding.confidence.value})"
    if finding.fix is not None:
        rewrite = finding.fix
        message += (f"\nRewrite of this line ({'checked' if rewrite.checked else 'not checked'}): "
                    f"{' '.join(rewrite.replacement.split())}"
                    + (f"\nEquivalent if {rewrite.condition}" if rewrite.condition else ""))
    return f"::{_COMMAND[finding.severity]} {','.join(properties)}::{_escape_data(message)}"


def render_github(findings: Iterable[Finding], rules: Mapping[str, Rule] = RULES_BY_CODE) -> str:
    lines = [render_github_line(finding, rules) for finding in sorted(findings, key=lambda f: f.sort_key)]
    return "".join(line + "\n" for line in lines)

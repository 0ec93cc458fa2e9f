"""SARIF 2.1.0: the rules (with help text generated from the catalogue's doc fields) and one result per
finding. Findings that are problems (a file that could not be analysed) become tool notifications."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import PurePath, PurePosixPath
from typing import Any

from synchunt.findings import Finding
from synchunt.rules import RULES, Rule

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def rule_help_text(rule: Rule) -> str:
    return (f"{rule.what_it_does}\n\nWhy is this bad?\n{rule.why_bad}\n\nExample (the rule's own, not a result's "
            f"line):\n{rule.example}\n\nUse instead:\n{rule.use_instead}")


def rule_help_markdown(rule: Rule) -> str:
    sections = [
        f"## What it does\n{rule.what_it_does}",
        f"## Why is this bad?\n{rule.why_bad}",
        f"## Example\nThe rule's own example; a result's tailored rewrite, when there is one, is its fix.\n"
        f"```python\n{rule.example}\n```",
        f"## Use instead\n```python\n{rule.use_instead}\n```",
    ]
    if rule.references:
        sections.append("## References\n" + "\n".join(f"- {reference}" for reference in rule.references))
    return "\n\n".join(sections)


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.what_it_does},
        "help": {"text": rule_help_text(rule), "markdown": rule_help_markdown(rule)},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": [rule.kind.value, rule.series]},
    }
    urls = [reference for reference in rule.references if reference.startswith("https://")]
    if urls:
        descriptor["helpUri"] = urls[0]
    return descriptor


def _artifact_location(path: str) -> dict[str, Any]:
    pure = PurePath(path)
    if pure.is_absolute():
        return {"uri": PurePosixPath(pure.as_posix()).as_uri()}
    return {"uri": pure.as_posix()}


def _location(finding: Finding) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": finding.line, "startColumn": finding.column}
    if finding.end_line is not None:
        region["endLine"] = finding.end_line
        if finding.end_column is not None:
            region["endColumn"] = finding.end_column
    if finding.snippet:
        region["snippet"] = {"text": finding.snippet}
    location: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": _artifact_location(finding.path), "region": region}}
    if finding.scope:
        location["logicalLocations"] = [{"fullyQualifiedName": finding.scope, "kind": "function"}]
    return location


def _fix(finding: Finding) -> dict[str, Any]:
    """The tailored rewrite as a SARIF fix: its edits as replacements, its condition in the description."""
    rewrite = finding.fix
    assert rewrite is not None
    description = rewrite.title + (f" (equivalent if {rewrite.condition})" if rewrite.condition else "")
    replacements = [{"deletedRegion": {"startLine": edit.line, "startColumn": edit.column, "endLine": edit.end_line,
                                       "endColumn": edit.end_column},
                     "insertedContent": {"text": edit.text}} for edit in rewrite.edits]
    return {"description": {"text": description},
            "artifactChanges": [{"artifactLocation": _artifact_location(finding.path), "replacements": replacements}],
            "properties": {"pattern": rewrite.pattern, "safety": rewrite.safety, "checked": rewrite.checked,
                           "check": rewrite.check}}


def to_sarif(findings: Iterable[Finding], *, rules: Sequence[Rule] = RULES, tool_name: str = "synchunt",
             tool_version: str | None = None, execution_successful: bool = True) -> dict[str, Any]:
    """The SARIF log as a dict. Every rule in ``rules`` is described; a finding whose code is not among
    them (and is not a problem) raises ``KeyError``."""
    index = {rule.code: position for position, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for finding in sorted(findings, key=lambda item: item.sort_key):
        if finding.is_problem:
            notifications.append({"level": finding.severity.value, "message": {"text": finding.message},
                                  "locations": [_location(finding)], "descriptor": {"id": finding.code}})
            continue
        if finding.code not in index:
            raise KeyError(f"finding code {finding.code!r} is not among the SARIF rules")
        result: dict[str, Any] = {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": finding.severity.value,
            "message": {"text": finding.message},
            "locations": [_location(finding)],
            "properties": {"confidence": finding.confidence.value},
        }
        if finding.fix is not None:
            result["fixes"] = [_fix(finding)]
        results.append(result)
    driver: dict[str, Any] = {"name": tool_name, "rules": [rule_descriptor(rule) for rule in rules]}
    if tool_version:
        driver["version"] = tool_version
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [{"executionSuccessful": execution_successful, "toolExecutionNotifications": notifications}],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(findings: Iterable[Finding], *, rules: Sequence[Rule] = RULES, tool_name: str = "synchunt",
                 tool_version: str | None = None, execution_successful: bool = True) -> str:
    return json.dumps(to_sarif(findings, rules=rules, tool_name=tool_name, tool_version=tool_version,
                               execution_successful=execution_successful), indent=2, allow_nan=False) + "\n"

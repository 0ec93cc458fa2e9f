"""JSON: a versioned document of findings that can be re-rendered in any other format without re-analysis."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from synchunt.output.finding import Finding

SCHEMA = "synchunt.findings/1"


def to_json_document(findings: Iterable[Finding], *, tool: str = "synchunt") -> dict[str, Any]:
    ordered = sorted(findings, key=lambda finding: finding.sort_key)
    return {
        "schema": SCHEMA,
        "tool": tool,
        "findings": [finding.to_dict() for finding in ordered if not finding.is_problem],
        "problems": [finding.to_dict() for finding in ordered if finding.is_problem],
    }


def render_json(findings: Iterable[Finding], *, tool: str = "synchunt") -> str:
    return json.dumps(to_json_document(findings, tool=tool), indent=2) + "\n"


def load_json(text: str) -> list[Finding]:
    """The findings (problems included) of a document written by :func:`render_json`."""
    document = json.loads(text)
    if document.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} document (schema {document.get('schema')!r})")
    return [Finding.from_dict(item) for item in (*document["findings"], *document["problems"])]

"""JSON: a versioned document of findings that can be re-rendered in any other format without re-analysis."""

from __future__ import annotations

import json
from typing import Any

from synchunt.findings import Finding, FindingSet
from synchunt.render.registry import Renderer, RenderOptions

SCHEMA = "synchunt.findings/1"


def findings_document(findings: FindingSet) -> dict[str, Any]:
    ordered = sorted(findings.findings, key=lambda finding: finding.sort_key)
    return {
        "schema": SCHEMA,
        "tool": findings.tool,
        "findings": [finding.to_dict() for finding in ordered if not finding.is_problem],
        "problems": [finding.to_dict() for finding in ordered if finding.is_problem],
    }


def render_json(findings: FindingSet, options: RenderOptions | None = None) -> str:
    return json.dumps(findings_document(findings), indent=2, allow_nan=False) + "\n"


def load_json(text: str) -> list[Finding]:
    """The findings (problems included) of a document written by :func:`render_json`."""
    document = json.loads(text)
    if document.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} document (schema {document.get('schema')!r})")
    return [Finding.from_dict(item) for item in (*document["findings"], *document["problems"])]


RENDERER = Renderer("json", ".json", "the versioned findings document (synchunt.findings/1)", render_json)

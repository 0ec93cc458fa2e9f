"""JSON: a versioned document of findings that can be re-rendered in any other format without re-analysis."""

from __future__ import annotations

from typing import Any

from synchunt.findings import Finding, FindingSet
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.rules import RULES_BY_CODE

SCHEMA = "synchunt.findings/1"
EXAMPLE_LABEL = "the rule's example, not a rewrite of this line"


def findings_document(findings: FindingSet) -> dict[str, Any]:
    ordered = sorted(findings.findings, key=lambda finding: finding.sort_key)
    return {
        "schema": SCHEMA,
        "tool": findings.tool,
        "findings": [_item(finding) for finding in ordered if not finding.is_problem],
        "problems": [_item(finding) for finding in ordered if finding.is_problem],
    }


def _item(finding: Finding) -> dict[str, Any]:
    """The finding; its ``fix`` holds the rewrite tailored to this line (or null) and the rule's own example,
    labelled as such."""
    item = finding.to_dict()
    rule = RULES_BY_CODE.get(finding.code)
    example = {"label": EXAMPLE_LABEL, "code": rule.example, "use_instead": rule.use_instead} if rule else None
    item["fix"] = {"tailored": item["fix"], "example": example}
    return item


def render_json(findings: FindingSet, options: RenderOptions | None = None) -> str:
    import json  # here, as in load_json: the lint's --format choices load this module, text output needs no json

    return json.dumps(findings_document(findings), indent=2, allow_nan=False) + "\n"


def load_json(text: str) -> list[Finding]:
    """The findings (problems included) of a document written by :func:`render_json`."""
    import json

    document = json.loads(text)
    if document.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} document (schema {document.get('schema')!r})")
    items = [dict(item) for item in (*document["findings"], *document["problems"])]
    for item in items:
        fix = item.get("fix")
        item["fix"] = fix.get("tailored") if isinstance(fix, dict) else None
    return [Finding.from_dict(item) for item in items]


RENDERER = Renderer("json", ".json", "the versioned findings document (synchunt.findings/1)", render_json)

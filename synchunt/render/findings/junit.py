"""Findings as JUnit XML: one case per file, failing with its findings."""

from __future__ import annotations

from synchunt.findings import FindingSet
from synchunt.render.registry import Renderer, RenderOptions


def render_junit(findings: FindingSet, options: RenderOptions | None = None) -> str:
    # Imported here: the lint's --format choices load every findings renderer, and XML is for this one alone.
    from synchunt.render.junit_xml import render_junit as junit_xml
    from synchunt.render.junit_xml import suite_from_findings

    return junit_xml([suite_from_findings(findings.findings, name=findings.tool)], name=findings.tool)


RENDERER = Renderer("junit", ".xml", "JUnit XML, one case per file", render_junit)

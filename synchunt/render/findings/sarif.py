"""Findings as a SARIF 2.1.0 log (code scanning)."""

from __future__ import annotations

from synchunt.findings import FindingSet
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.rules import RULES


def render_sarif(findings: FindingSet, options: RenderOptions | None = None) -> str:
    from synchunt import __version__
    from synchunt.render.sarif import render_sarif as sarif_log  # here: the lint's --format choices load this module

    rules = RULES if findings.rule_codes is None else tuple(r for r in RULES if r.code in findings.rule_codes)
    return sarif_log(findings.findings, rules=rules, tool_version=__version__)


RENDERER = Renderer("sarif", ".sarif", "a SARIF 2.1.0 log for code scanning", render_sarif)

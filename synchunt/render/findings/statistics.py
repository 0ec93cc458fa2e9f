"""``--statistics``: how many findings per rule (and where they run), instead of the findings themselves."""

from __future__ import annotations

from collections import Counter

from synchunt.findings import FindingSet
from synchunt.render.findings.text import CONTEXTS, summary_line
from synchunt.rules import RULES_BY_CODE


def render_statistics(findings: FindingSet) -> str:
    """One row per rule, most findings first: count, code, the counts per context, the rule's name."""
    real = [finding for finding in findings.findings if not finding.is_problem]
    by_rule = Counter(finding.code for finding in real)
    by_context = Counter((finding.code, finding.context) for finding in real)
    rows = []
    for code, count in sorted(by_rule.items(), key=lambda item: (-item[1], item[0])):
        contexts = " ".join(f"{by_context[code, name]:>5}" for name in CONTEXTS)
        rule = RULES_BY_CODE.get(code)
        rows.append(f"{count:>6}  {code:<7} {contexts}  {rule.name if rule else ''}".rstrip())
    header = f"{'count':>6}  {'rule':<7} " + " ".join(f"{name:>5}"[:5] for name in ("step", "unkn.", "cold"))
    lines = [header, *rows] if rows else []
    lines.append(summary_line(list(findings.findings), files_checked=findings.files_checked))
    lines.extend(findings.notes)
    return "\n".join(lines) + "\n"


__all__ = ["render_statistics"]

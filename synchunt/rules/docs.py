"""The rules reference, generated from the catalogue (``docs/rules.md`` is this function's output)."""

from __future__ import annotations

from synchunt.rules.catalogue import RULES
from synchunt.rules.model import Rule

_SERIES = {"SH1": "SH1xx — data-dependent reads", "SH2": "SH2xx — blocking copies", "SH3": "SH3xx — explicit syncs"}


def rule_markdown(rule: Rule) -> str:
    """One rule's page: what it does, why it is bad, example, use instead, and how it is detected."""
    lines = [f"### {rule.code} `{rule.name}` — {rule.title}", "",
             f"**Kind:** {rule.kind.value}. **Syncs:** {rule.what_syncs}.", "",
             "**What it does.** " + rule.what_it_does, "",
             "**Why is this bad?** " + rule.why_bad + " " + rule.mechanism, "",
             "**Example**", "", "```python", rule.example, "```", "",
             "**Use instead**", "", "```python", rule.use_instead, "```", "",
             f"**Sync-free alternative:** {rule.alternative}.", "",
             f"**Trace fingerprint:** {rule.fingerprint}."]
    detection = []
    if rule.trace_ops:
        ops = ", ".join(f"`{p.op}`" + (f" under `{p.under}`" if p.under else "") for p in rule.trace_ops)
        detection.append(f"trace ops: {ops}")
        latent = [p for p in rule.trace_ops if p.latent]
        detection.append("latent on CPU-only traces: " + ("yes" if latent else "no (needs device evidence)"))
    if rule.runtime_calls:
        detection.append("runtime calls: " + ", ".join(f"`{c}`" for c in rule.runtime_calls))
    if rule.guard_ops:
        detection.append("runtime guard: " + ", ".join(
            f"`aten.{g.packet}`" + (f" ({g.when})" if g.when else "") for g in rule.guard_ops))
    detection.append("static lint: " + (", ".join(f"`{f}`" for f in rule.lint_forms) if rule.lint_forms else "none"))
    lines += ["", "**Detected by:** " + "; ".join(detection) + "."]
    if rule.references:
        lines += ["", "**References:** " + " · ".join(rule.references)]
    return "\n".join(lines)


def rules_markdown() -> str:
    """The whole reference: an index table, then one section per rule, grouped by series."""
    lines = ["# Rules reference", "",
             "Generated from `synchunt/rules/catalogue.py` by `synchunt rules --format markdown`; do not edit by hand.",
             "", "| code | name | kind | trace | guard | lint |", "|---|---|---|---|---|---|"]
    for rule in RULES:
        lines.append(f"| [{rule.code}](#{_anchor(rule)}) | `{rule.name}` | {rule.kind.value} | "
                     f"{'yes' if rule.trace_ops or rule.runtime_calls else '-'} | "
                     f"{'yes' if rule.guard_ops else '-'} | {'yes' if rule.lint_forms else '-'} |")
    current = None
    for rule in RULES:
        series = rule.code[:3]
        if series != current:
            lines += ["", f"## {_SERIES.get(series, series + 'xx')}"]
            current = series
        lines += ["", rule_markdown(rule)]
    return "\n".join(lines) + "\n"


def _anchor(rule: Rule) -> str:
    text = f"{rule.code} {rule.name} — {rule.title}".lower()
    return "".join(ch if ch.isalnum() or ch in "-_ " else "" for ch in text).replace(" ", "-")

"""The rules reference in Markdown (``docs/rules.md`` is :func:`rules_markdown`'s output)."""

from __future__ import annotations

from collections.abc import Sequence

from synchunt.render.registry import Renderer, RenderOptions
from synchunt.rules import RULES, Kind, OpRole, PatchEffect, Rule


def rule_markdown(rule: Rule) -> str:
    """One rule's page in ruff's sections, then how each stage recognises it."""
    lines = [f"### {rule.code} `{rule.name}` — {rule.title}", "",
             f"**Kind:** {rule.kind.value}. **Caught by:** {', '.join(rule.stages) or 'nothing yet'}.", "",
             "**What it does.** " + rule.what_it_does, "",
             "**Why is this bad?** " + rule.why_bad, "",
             "**Mechanism.** " + rule.mechanism, "",
             "**Example**", "", "```python", rule.example, "```", "",
             "**Use instead**", "", "```python", rule.use_instead, "```", "",
             f"**Fix:** {rule.fix}.", "",
             f"**Trace fingerprint:** {rule.fingerprint}."]
    lines += ["", "**Detected by:**", ""] + [f"- {item}" for item in _detection(rule)]
    if rule.references:
        lines += ["", "**References:** " + " · ".join(rule.references)]
    return "\n".join(lines)


def _detection(rule: Rule) -> list[str]:
    items = []
    if rule.trace_ops:
        ops = ", ".join(f"`{op.op}` ({op.role.value}" + (f", under `{op.under}`" if op.under else "")
                        + (f", when {op.when}" if op.when else "") + ")" for op in rule.trace_ops)
        items.append(f"trace ops: {ops}")
        items.append("latent on CPU-only traces: " + ("yes" if rule.latent_in_traces else "no (needs device evidence)"))
        if any(op.role is OpRole.COPY for op in rule.trace_ops):
            items.append(f"copies in direction {rule.copy_direction}")
    if rule.runtime_calls:
        items.append("runtime calls: " + ", ".join(f"`{c.name}`" for c in rule.runtime_calls)
                     + (" (blocking only into pageable host memory)" if any(c.blocks.value != "always"
                                                                            for c in rule.runtime_calls) else ""))
    if rule.sync_kinds:
        items.append("`cuda_sync` kinds: " + ", ".join(f"`{k}`" for k in rule.sync_kinds))
    if rule.catch_all:
        items.append("trace and guard: any host-blocking call or sync-debug report that no other rule explains")
    if rule.guard_ops:
        items.append("runtime guard: " + ", ".join(
            (f"`{g.packet}`" if "::" in g.packet else f"`aten.{g.packet}`") + (f" ({g.when})" if g.when else "")
            for g in rule.guard_ops))
    reporting = [p for p in rule.guard_patches if p.effect is PatchEffect.REPORT]
    marking = [p for p in rule.guard_patches if p.effect is PatchEffect.MARK]
    if reporting:
        items.append("runtime guard patches: " + ", ".join(
            f"`{p.target}`" + (" (CUDA)" if p.needs_cuda else "") for p in reporting))
    if marking:
        items.append("runtime guard marks the scalar read inside: " + ", ".join(f"`{p.target}`" for p in marking))
    items.append("static lint: " + (", ".join(f"`{f}`" for f in rule.lint_forms) if rule.lint_forms else "none"))
    return items


def rules_markdown() -> str:
    """The whole reference: an index table, then one section per rule, grouped by series."""
    lines = ["# Rules reference", "",
             "Generated from `synchunt/rules/catalogue/` by `synchunt rules --format markdown`; do not edit by hand.",
             "", "| code | name | kind | trace | guard | lint |", "|---|---|---|---|---|---|"]
    for rule in RULES:
        trace = ("latent + confirmed" if rule.latent_in_traces else "confirmed") if "trace" in rule.stages else "-"
        lines.append(f"| [{rule.code}](#{_anchor(rule)}) | `{rule.name}` | {rule.kind.value} | {trace} | "
                     f"{'yes' if 'guard' in rule.stages else '-'} | {'yes' if 'lint' in rule.stages else '-'} |")
    current: Kind | None = None
    for rule in RULES:
        if rule.kind is not current:
            lines += ["", f"## {rule.kind.heading}"]
            current = rule.kind
        lines += ["", rule_markdown(rule)]
    return "\n".join(lines) + "\n"


def _anchor(rule: Rule) -> str:
    text = f"{rule.code} {rule.name} — {rule.title}".lower()
    return "".join(ch if ch.isalnum() or ch in "-_ " else "" for ch in text).replace(" ", "-")


def render_markdown(rules: Sequence[Rule], options: RenderOptions | None = None) -> str:
    """One rule's page when given one rule, else the whole reference."""
    if len(rules) == 1 and len(RULES) > 1:
        return rule_markdown(rules[0]) + "\n"
    return rules_markdown()


RENDERER = Renderer("markdown", ".md", "the rules reference in Markdown (docs/rules.md)", render_markdown)

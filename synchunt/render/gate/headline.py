"""The gate's one-line verdict, for logs (the last line of the text form; stderr beside a document)."""

from __future__ import annotations

from synchunt.gate.evaluate import GateResult
from synchunt.render.text import label
from synchunt.render.verdict import verdict
from synchunt.units import format_us


def gate_headline(result: GateResult) -> str:
    """``gate failed: 54 syncs counted, budget 0 (54 latent syncs on thread scheduler)``, or ``nothing to judge:
    …`` with the reasons."""
    if not result.judged:
        return "gate: nothing to judge: " + "; ".join(label(reason, 300) for reason in result.missing_evidence)
    counted = len(result.counted)
    noun = "sync" if counted == 1 else "syncs"
    text = f"gate {'passed' if result.passed else 'failed'}: {counted} {noun} counted, budget {result.budget}"
    if result.idle_budget_us is not None:
        idle = result.counted_idle_us
        text += f", device idle {format_us(idle or 0.0)} of {format_us(result.idle_budget_us)} allowed"
    if counted:
        text += f" ({verdict(result.counted_analysis)})"
    if result.allowed:
        text += f"; {len(result.allowed)} allowed by the baseline"
    if result.set_aside_by_config:
        text += f"; {result.set_aside_by_config} not counted by [tool.synchunt]"
    problems = [f"{len(group)} {name} baseline {'entry' if len(group) == 1 else 'entries'}"
                for name, group in (("stale", result.stale_entries), ("expired", result.expired_entries)) if group]
    if problems:
        text += "; " + ", ".join(problems) + (" (--strict)" if result.strict else "")
    return text

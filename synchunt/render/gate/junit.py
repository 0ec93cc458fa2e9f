"""The gate result as a JUnit suite: a ``sync budget`` case, one case per thread and outermost scope, and a
``baseline`` case when a baseline was used."""

from __future__ import annotations

from synchunt.attribute import Sync
from synchunt.attribute.model import GUARD_ONLY_STALL
from synchunt.gate import GateResult, ThreadScope
from synchunt.render.gate.headline import gate_headline
from synchunt.render.junit_xml import JUnitCase, JUnitFailure, JUnitSuite, render_junit
from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.text import label
from synchunt.units import format_us

SUITE_NAME = "synchunt gate"


def describe_sync(sync: Sync) -> str:
    """One line per sync: ``SH101 aten::nonzero at file:line function [scope] (latent, 49.8 µs)``."""
    scope = f" [{label(sync.scope)}]" if sync.scope else ""
    evidence = "confirmed" if sync.confirmed else "latent"
    stall = "stall not measured" if sync.stall_source == GUARD_ONLY_STALL else format_us(sync.stall_us)
    return f"{sync.rule} {label(sync.op)} at {label(sync.site)}{scope} ({evidence}, {stall})"


def gate_suite(result: GateResult) -> JUnitSuite:
    """A thread/scope case fails when the gate is over budget and it holds counted syncs; its failure lists
    them. Allowed syncs are listed in the case's output. Threads the run was about (``--thread``, the profiled
    thread of a synchunt capture) get a case even without syncs."""
    if not result.judged:
        failure = JUnitFailure(gate_headline(result), "\n".join(label(r, 400) for r in result.missing_evidence))
        return JUnitSuite(SUITE_NAME, (JUnitCase("evidence", "synchunt.gate", failure),),
                          (("budget", str(result.budget)), ("judged", "false")))
    cases = [_budget_case(result)]
    cases.extend(_group_case(group, result.over_budget) for group in result.thread_scopes)
    if result.usage:
        cases.append(_baseline_case(result))
    properties = (("budget", str(result.budget)), ("syncs", str(len(result.analysis.records))),
                  ("counted", str(len(result.counted))), ("allowed", str(len(result.allowed))),
                  ("mode", str(result.analysis.filters.get("mode", ""))))
    return JUnitSuite(SUITE_NAME, tuple(cases), properties)


def render_gate_junit(result: GateResult, options: RenderOptions | None = None) -> str:
    return render_junit([gate_suite(result)], name="synchunt")


RENDERER = Renderer("junit", ".xml", "JUnit XML: a budget case, one case per thread and scope", render_gate_junit)


def _budget_case(result: GateResult) -> JUnitCase:
    """Fails over budget, listing the counted syncs by call site (the thread/scope cases list each sync)."""
    lines = [f"{label(site.site)}: {site.count} × {', '.join(site.rules)} {', '.join(label(o) for o in site.ops)}"
             for site in result.counted_analysis.sites]
    headline = gate_headline(result)
    failure = JUnitFailure(headline, "\n".join(lines))
    return JUnitCase("sync budget", "synchunt.gate", failure if result.over_budget else None,
                     system_out="" if result.over_budget else headline)


def _group_case(group: ThreadScope, over_budget: bool) -> JUnitCase:
    thread, scope = group.thread, group.scope
    counted = [describe_sync(sync) for sync in group.counted]
    allowed = [describe_sync(sync) for sync in group.allowed]
    output = []
    if counted and not over_budget:
        output.append("within the budget:\n" + "\n".join(counted))
    if allowed:
        output.append("allowed by the baseline:\n" + "\n".join(allowed))
    failure = None
    if counted and over_budget:
        noun = "sync" if len(counted) == 1 else "syncs"
        failure = JUnitFailure(f"{len(counted)} {noun} on thread {label(thread)} in {label(scope)}", "\n".join(counted))
    return JUnitCase(label(scope), f"synchunt.gate.{label(thread)}", failure, system_out="\n\n".join(output))


def _baseline_case(result: GateResult) -> JUnitCase:
    lines = [f"{usage.entry.key}: matched {usage.matched}, allowed {usage.allowed}"
             f"{'' if usage.entry.max_count is None else f' of max {usage.entry.max_count}'} [{usage.status}]"
             for usage in result.usage]
    problems = result.baseline_problems
    failure = None
    if result.strict and problems:
        noun = "entry" if len(problems) == 1 else "entries"
        failure = JUnitFailure(f"{len(problems)} stale or expired baseline {noun}", "\n".join(lines))
    return JUnitCase("baseline", "synchunt.gate", failure, system_out="" if failure else "\n".join(lines))


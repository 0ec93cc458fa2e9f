"""The gate result as a JUnit suite: a ``sync budget`` case, one case per thread and outermost scope, and a
``baseline`` case when a baseline was used."""

from __future__ import annotations

from typing import Any

import pandas as pd

from synchunt.gate.evaluate import GateResult
from synchunt.gate.findings import describe_sync
from synchunt.output.junit import JUnitCase, JUnitFailure, JUnitSuite, render_junit

SUITE_NAME = "synchunt gate"
NO_SCOPE = "(no scope)"
ALL_SCOPES = "(all scopes)"  # the case of a thread without syncs


def gate_suite(result: GateResult) -> JUnitSuite:
    """A thread/scope case fails when the gate is over budget and it holds counted syncs; its failure lists
    them. Allowed syncs are listed in the case's output. Threads the run was about (``--thread``, the profiled
    thread of a synchunt capture) get a case even without syncs."""
    cases = [_budget_case(result)]
    syncs = result.analysis.syncs
    counted = pd.Series([index is None for index in result.allowed_by], index=syncs.index, dtype=bool)
    groups: dict[tuple[str, str], list[Any]] = {(thread, ALL_SCOPES): [] for thread in _expected_threads(result)}
    for label, row in zip(syncs.index, syncs.itertuples(index=False), strict=True):
        chain = list(row.scope_chain)
        groups.setdefault((str(row.thread), chain[0] if chain else NO_SCOPE), []).append((row, bool(counted[label])))
    for (thread, scope), members in sorted(groups.items()):
        if not members and any(key[0] == thread and groups[key] for key in groups):
            continue  # the thread has a case with syncs already
        cases.append(_group_case(thread, scope, members, result.over_budget))
    if result.usage:
        cases.append(_baseline_case(result))
    properties = (("budget", str(result.budget)), ("syncs", str(len(syncs))),
                  ("counted", str(len(result.counted))), ("allowed", str(len(result.allowed))),
                  ("mode", str(result.analysis.filters.get("mode", ""))))
    return JUnitSuite(SUITE_NAME, tuple(cases), properties)


def render_gate_junit(result: GateResult) -> str:
    return render_junit([gate_suite(result)], name="synchunt")


def _budget_case(result: GateResult) -> JUnitCase:
    """Fails over budget, listing the counted syncs by call site (the thread/scope cases list each sync)."""
    sites = result.counted_analysis.call_sites
    lines = [f"{row.site}: {row.count} × {', '.join(row.rules)} {', '.join(row.ops)}"
             for row in sites.itertuples(index=False)]
    failure = JUnitFailure(result.headline, "\n".join(lines))
    return JUnitCase("sync budget", "synchunt.gate", failure if result.over_budget else None,
                     system_out="" if result.over_budget else result.headline)


def _group_case(thread: str, scope: str, members: list[Any], over_budget: bool) -> JUnitCase:
    counted = [describe_sync(row) for row, is_counted in members if is_counted]
    allowed = [describe_sync(row) for row, is_counted in members if not is_counted]
    output = []
    if counted and not over_budget:
        output.append("within the budget:\n" + "\n".join(counted))
    if allowed:
        output.append("allowed by the baseline:\n" + "\n".join(allowed))
    failure = None
    if counted and over_budget:
        noun = "sync" if len(counted) == 1 else "syncs"
        failure = JUnitFailure(f"{len(counted)} {noun} on thread {thread} in {scope}", "\n".join(counted))
    return JUnitCase(scope, f"synchunt.gate.{thread}", failure, system_out="\n\n".join(output))


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


def _expected_threads(result: GateResult) -> list[str]:
    threads = []
    if result.analysis.filters.get("thread"):
        threads.append(str(result.analysis.filters["thread"]))
    for info in result.analysis.traces:
        profiled = info.synchunt.get("profiled_thread")
        if profiled and profiled not in threads:
            threads.append(str(profiled))
    return threads

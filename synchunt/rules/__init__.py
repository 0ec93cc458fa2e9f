"""The sync rule catalogue (standard library only): the rules, the reviewed non-syncs, and lookups over them."""

from __future__ import annotations

from synchunt.rules.catalogue import RULES
from synchunt.rules.index import RULES_BY_CODE, catch_all_rule, get_rule
from synchunt.rules.model import (
    Blocking,
    GuardOp,
    GuardPatch,
    Kind,
    OpRole,
    PatchEffect,
    Rule,
    RuntimeCall,
    TraceOp,
    WaitScope,
)
from synchunt.rules.not_syncs import NOT_SYNC_OPS, PROFILER_OWN_SYNC
from synchunt.rules.reviewed import NOT_HOST_SYNC_CALLS, NOT_HOST_SYNCS


def rules_with_lint_form(form: str) -> list[Rule]:
    return [rule for rule in RULES if form in rule.lint_forms]


__all__ = [
    "NOT_HOST_SYNCS", "NOT_HOST_SYNC_CALLS", "NOT_SYNC_OPS", "PROFILER_OWN_SYNC", "RULES", "RULES_BY_CODE",
    "Blocking", "GuardOp", "GuardPatch", "Kind", "OpRole", "PatchEffect", "Rule", "RuntimeCall", "TraceOp",
    "WaitScope", "catch_all_rule", "get_rule", "rules_with_lint_form"
]

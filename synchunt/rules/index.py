"""The catalogue read as lookup tables (built once): by code, by trace op, by runtime call, by sync kind."""

from __future__ import annotations

from functools import cache

from synchunt.rules.catalogue import RULES
from synchunt.rules.model import OpRole, Rule, RuntimeCall, TraceOp
from synchunt.rules.not_syncs import NON_BLOCKING_CALLS, NON_BLOCKING_SYNC_KINDS

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def get_rule(code: str) -> Rule:
    """The rule with this code; ``KeyError`` names the unknown code."""
    try:
        return RULES_BY_CODE[code]
    except KeyError:
        raise KeyError(f"unknown rule code {code!r}") from None


@cache
def catch_all_rule() -> Rule:
    """The rule for blocking calls (and guard signals) no specific rule explains."""
    (rule,) = (rule for rule in RULES if rule.catch_all)
    return rule


@cache
def trace_op_names() -> frozenset[str]:
    """Every op some rule's trace fingerprint names: the candidates for a sync's cause."""
    return frozenset(op.op for rule in RULES for op in rule.trace_ops)


@cache
def trace_ops_named(op: str) -> tuple[tuple[TraceOp, Rule], ...]:
    """Every pattern (with its rule) for an op name, in catalogue order."""
    return tuple((pattern, rule) for rule in RULES for pattern in rule.trace_ops if pattern.op == op)


@cache
def latent_op_names() -> frozenset[str]:
    """Ops that can flag a CPU-only trace by themselves (causes and reads; anchors flag through a read)."""
    return frozenset(op.op for rule in RULES for op in rule.trace_ops
                     if op.latent and op.role in (OpRole.CAUSE, OpRole.READ))


@cache
def _runtime_calls() -> dict[str, tuple[RuntimeCall, Rule]]:
    table: dict[str, tuple[RuntimeCall, Rule]] = {}
    for rule in RULES:
        for call in rule.runtime_calls:
            if call.name in table:
                raise ValueError(f"runtime call {call.name!r} is named by two rules")
            table[call.name] = (call, rule)
    return table


def runtime_call(name: str) -> tuple[RuntimeCall, Rule] | None:
    """The catalogue's entry for a runtime/driver call name, with its rule (``None`` when not named)."""
    return _runtime_calls().get(name)


def runtime_call_names() -> frozenset[str]:
    return frozenset(_runtime_calls())


@cache
def non_blocking_call_names() -> frozenset[str]:
    return frozenset(entry.name for entry in NON_BLOCKING_CALLS)


@cache
def _sync_kinds() -> dict[str, Rule]:
    return {kind: rule for rule in RULES for kind in rule.sync_kinds}


def rule_for_sync_kind(kind: str | None) -> Rule | None:
    """The explicit-sync rule for a blocking ``cuda_sync`` event kind (``None`` for other kinds)."""
    return _sync_kinds().get(kind) if kind else None


@cache
def non_blocking_sync_kinds() -> frozenset[str]:
    return frozenset(entry.name for entry in NON_BLOCKING_SYNC_KINDS)


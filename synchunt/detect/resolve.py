"""From an op and its enclosing ops to a catalogue rule — the catalogue read as a lookup table."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from synchunt.rules import NOT_SYNCS, RULES, Kind, OpPattern, Rule

COPY_OPS: frozenset[str] = frozenset({"aten::copy_", "aten::_to_copy", "aten::to"})


@cache
def trace_ops() -> frozenset[str]:
    """Every op name that some rule's trace fingerprint names (the candidates for a sync's cause)."""
    return frozenset(p.op for rule in RULES for p in rule.trace_ops)


@cache
def latent_patterns() -> dict[str, tuple[tuple[OpPattern, Rule], ...]]:
    """Op name → the latent patterns (with their rules) that can flag it in a CPU-only trace."""
    table: dict[str, list[tuple[OpPattern, Rule]]] = {}
    for rule in RULES:
        for pattern in rule.trace_ops:
            if pattern.latent:
                table.setdefault(pattern.op, []).append((pattern, rule))
    return {op: tuple(entries) for op, entries in table.items()}


def is_not_sync(op: str, ancestors: Sequence[str]) -> bool:
    return any(p.op == op and (p.under is None or p.under in ancestors) for p in NOT_SYNCS)


def resolve(op: str, ancestors: Sequence[str], *, direction: str | None = None,
            latent_only: bool = False) -> Rule | None:
    """The rule explaining a sync caused by ``op`` inside ``ancestors`` (innermost first); see ``resolve_anchored``."""
    return resolve_anchored(op, ancestors, direction=direction, latent_only=latent_only)[0]


def resolve_anchored(op: str, ancestors: Sequence[str], *, direction: str | None = None,
                     latent_only: bool = False) -> tuple[Rule | None, str | None]:
    """The rule for a sync caused by ``op`` inside ``ancestors`` (innermost first), and the enclosing op it is
    charged to, if any.

    Patterns that require an enclosing op win over plain ones (``aten::nonzero`` under ``aten::index`` is
    boolean-mask indexing, not a bare ``nonzero``); a generic read (a scalar read or a copy) inside a
    data-dependent op is charged to that op (a copy inside ``unique`` is ``unique``'s sync). The second value
    names that enclosing op: reads under one call of it are one sync of the user's code. Copies are split by
    ``direction`` (``"DtoH"``/``"HtoD"``).
    """
    for rule in RULES:
        for pattern in rule.trace_ops:
            if pattern.op == op and pattern.under is not None and pattern.under in ancestors \
                    and (pattern.latent or not latent_only):
                return rule, pattern.under
    if op in COPY_OPS or op == "aten::_local_scalar_dense":
        for ancestor in ancestors:
            outer = _plain_data_dependent_rule(ancestor)
            if outer is not None:
                return outer, ancestor
    if op in COPY_OPS:
        if latent_only:
            return None, None
        return next((r for r in RULES if r.copy_direction == direction and direction is not None), None), None
    for rule in RULES:
        for pattern in rule.trace_ops:
            if pattern.op == op and pattern.under is None and (pattern.latent or not latent_only):
                return rule, None
    return None, None


def rule_for_runtime_call(name: str) -> Rule | None:
    """The rule for a blocking runtime call that no catalogue op encloses (explicit syncs, raw copies)."""
    return next((rule for rule in RULES if name in rule.runtime_calls), None)


@cache
def _plain_data_dependent_rule(op: str) -> Rule | None:
    for rule in RULES:
        if rule.kind is not Kind.DATA_DEPENDENT_READ or op == "aten::_local_scalar_dense":
            continue
        if any(p.op == op and p.under is None for p in rule.trace_ops):
            return rule
    return None


def get_pageable_rule() -> Rule:
    """The rule for an asynchronous copy that the driver made synchronous (pageable host memory)."""
    return next(rule for rule in RULES if "cudaMemcpyAsync" in rule.runtime_calls)


_SYNC_KIND_CALLS = {"Stream Sync": "cudaStreamSynchronize", "Event Sync": "cudaEventSynchronize",
                    "Context Sync": "cudaDeviceSynchronize"}


def rule_for_sync_kind(kind: str) -> Rule | None:
    """The explicit-sync rule for a ``cuda_sync`` event kind, for runtime calls the catalogue does not name."""
    call = _SYNC_KIND_CALLS.get(kind)
    return rule_for_runtime_call(call) if call else None

"""From an op and its enclosing ops to a catalogue rule, by the roles the catalogue gives each op."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from synchunt.rules import NOT_HOST_SYNCS, NOT_SYNC_OPS, OpRole, Rule
from synchunt.rules.index import trace_ops_named

_CHARGED_ROLES = frozenset({OpRole.READ, OpRole.COPY, OpRole.CAUSE})


def is_not_sync(op: str, ancestors: Sequence[str]) -> bool:
    """A reviewed non-sync: the op (under its listed enclosing op) looks like a sync but is not one, or it runs
    inside an op whose host reads happen only in its CPU kernel (a read, or a check such as the `aten::equal`
    of quantile's range check: the op is opaque, as the runtime guard runs it)."""
    if any(entry.op == op and (entry.under is None or entry.under in ancestors) for entry in NOT_SYNC_OPS):
        return True
    return any(name in _cpu_only_readers() for name in ancestors)


@cache
def _cpu_only_readers() -> frozenset[str]:
    return frozenset(f"aten::{entry.packet}" for entry in NOT_HOST_SYNCS)


def is_copy_op(op: str) -> bool:
    return any(pattern.role is OpRole.COPY for pattern, _ in trace_ops_named(op))


def resolve(op: str, ancestors: Sequence[str], *, direction: str | None = None,
            latent_only: bool = False) -> tuple[Rule | None, str | None]:
    """The rule for a sync caused by ``op`` inside ``ancestors`` (innermost first), and the enclosing op it is
    charged to, if any (reads under one call of that op are one sync of the user's code).

    A host read or copy inside a cause or anchor op is charged to that op (a copy inside ``unique`` is ``unique``'s
    sync); then patterns that require an enclosing op win over plain ones (``aten::nonzero`` under ``aten::index``
    is boolean-mask indexing, not a bare ``nonzero``); copies are split by ``direction`` (``"DtoH"``,
    ``"HtoD"``); ``latent_only`` leaves out what a CPU-only trace cannot show (copies).
    """
    patterns = trace_ops_named(op)
    roles = {pattern.role for pattern, _ in patterns}
    is_copy = OpRole.COPY in roles
    if is_copy and latent_only:
        return None, None
    # `.cpu()` inside `bincount` is bincount's read, whatever its own pattern says, and `aten::equal` inside
    # `unique_dim` is part of unique_dim's call: charged to the outermost catalogue op around it, which is the call
    # the user's code made (the runtime guard runs that call as one opaque op, too)
    if roles & _CHARGED_ROLES:
        explaining = [(outer, ancestor) for ancestor in ancestors
                      if (outer := _explaining_rule(ancestor, latent_only)) is not None]
        if explaining:
            return explaining[-1]
    for pattern, rule in patterns:
        if pattern.under is not None and pattern.under in ancestors and (pattern.latent or not latent_only) \
                and (pattern.role is not OpRole.COPY or rule.copy_direction == direction):
            return rule, pattern.under
    if is_copy:
        rule = next((rule for pattern, rule in patterns if pattern.role is OpRole.COPY and pattern.under is None
                     and direction is not None and rule.copy_direction == direction), None)
        return rule, None
    for pattern, rule in patterns:
        if pattern.under is None and (pattern.latent or not latent_only):
            return rule, None
    return None, None


@cache
def _explaining_rule(op: str, latent_only: bool) -> Rule | None:
    """The rule of an op whose own checks or results a host read beneath it serves (a cause or an anchor)."""
    for pattern, rule in trace_ops_named(op):
        if pattern.role in (OpRole.CAUSE, OpRole.ANCHOR) and pattern.under is None \
                and (pattern.latent or not latent_only):
            return rule
    return None

"""The sync rule catalogue (standard library only)."""

from __future__ import annotations

from synchunt.rules.catalogue import RULES
from synchunt.rules.model import GuardOp, Kind, OpPattern, Rule

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}

# Ops that look like a sync in a CPU trace but are not one: the masked-fill fast path of `x[mask] = 5`
# reads its one-element CPU value with `.item()`.
NOT_SYNCS: tuple[OpPattern, ...] = (OpPattern("aten::_local_scalar_dense", under="aten::_index_put_impl_"),)


def get_rule(code: str) -> Rule:
    """The rule with this code; ``KeyError`` names the unknown code."""
    try:
        return RULES_BY_CODE[code]
    except KeyError:
        raise KeyError(f"unknown rule code {code!r}") from None


def rules_with_lint_form(form: str) -> list[Rule]:
    return [rule for rule in RULES if form in rule.lint_forms]


__all__ = ["NOT_SYNCS", "RULES", "RULES_BY_CODE", "GuardOp", "Kind", "OpPattern", "Rule", "get_rule",
           "rules_with_lint_form"]

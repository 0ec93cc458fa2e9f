"""The catalogue drives the lint's op names: every callee the lint matches is named by its rule's entry (a lint
form's argument, a trace op, a guard op or a guard patch), so no stage keeps a private list that can drift."""

from __future__ import annotations

import ast

from synchunt.lint import lint_source
from synchunt.lint.engine import build_plan
from synchunt.lint.forms import FORMS
from synchunt.rules import RULES, get_rule


def _named_by(rule, name: str) -> bool:
    arguments = {spec.partition(":")[2].rsplit(".", 1)[-1] for spec in rule.lint_forms}
    ops = {op.op.split("::")[-1] for op in rule.trace_ops} | {op.packet for op in rule.guard_ops}
    patches = {patch.target.rsplit(".", 1)[-1] for patch in rule.guard_patches}
    # `bool(t)` is `Tensor.__bool__`, which the guard patches
    return name in arguments or name in ops or name in patches or f"__{name}__" in patches


def test_every_callee_the_lint_matches_is_named_by_its_rule():
    plan = build_plan(RULES)
    unnamed = sorted({(entry.rule.code, name) for name, entries in plan.calls_by_name.items()
                      for entry in entries if not _named_by(entry.rule, name)})
    assert not unnamed, f"lint callees no catalogue entry names: {unnamed}"


def test_forms_matching_named_calls_take_their_names_from_the_catalogue():
    fixed = {name: form.call_names for name, form in FORMS.items() if ast.Call in form.node_types and form.call_names}
    # the forms that keep a fixed callee name do so because the name is the rule's op (checked above)
    for name, callees in fixed.items():
        users = [rule for rule in RULES if any(spec.partition(":")[0] == name for spec in rule.lint_forms)]
        assert users, f"form {name} is registered but no rule uses it"
        assert all(_named_by(rule, callee) for rule in users for callee in callees), name


def test_linalg_functions_follow_the_guard():
    """SH114 flags what the guard reports (docs/guard.md), not `lu` or `solve_triangular`."""
    rule = get_rule("SH114")
    named = {spec.partition(":")[2] for spec in rule.lint_forms}
    assert {"linalg.inv", "linalg.cholesky", "linalg.solve", "inverse"} <= named
    assert not {"linalg.lu", "linalg.solve_triangular", "linalg.det", "linalg.qr", "linalg.slogdet"} & named
    source = ("import torch\ndef f(a: torch.Tensor, b: torch.Tensor):\n    torch.linalg.lu(a)\n"
              "    torch.linalg.solve_triangular(a, b, upper=True)\n    torch.linalg.inv(a)\n")
    assert [(finding.code, finding.line) for finding in lint_source(source, "m.py", select=["SH114"])] == [
        ("SH114", 5)]
